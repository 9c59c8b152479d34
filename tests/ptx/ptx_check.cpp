// Counts instructions in compiled CUDA code and checks the counts, so a test can prove that the
// work a probe declares survived compilation (no chain folded, no FMA contracted into the noFMA
// form, 128-bit loads where the probe claims them).
//
//   ptx_check [--sass] [--entries N] FILE --expect REGEX OP COUNT [--expect-insn ...]
//             [--expect-before FIRST THEN COUNT] [...]
//
// FILE is PTX (nvcc -ptx), or with --sass the output of `cuobjdump -sass`. The instructions of
// the kernel entries are counted by opcode (e.g. "fma.rn.f64", "ld.global.nc.v4.u32"; SASS:
// "DFMA", "LDG.E.128"); predicates and operands are ignored. --entries (default 1) is how many
// kernel entries the file must hold. Each --expect counts the opcodes fully matching REGEX
// (ECMAScript) and compares with COUNT: OP is eq, ge or le. --expect-insn does the same on the
// whole instruction with its operands, space-normalised and without the trailing ';' (e.g.
// "IMAD R4, R4, R5, RZ", "@P0 IADD3 R4, R4, R7, RZ"): SASS spells a plain 32-bit multiply as an
// IMAD whose addend is RZ, so only the operands tell a multiply from a multiply-add. On failure
// it prints every check and the opcode histogram, and exits 1. --expect-before checks the order:
// at least COUNT opcodes matching FIRST come before the first opcode matching THEN (which must
// occur), e.g. every load of a batch issued before its first store.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Expectation {
  std::string pattern;
  std::string op;
  long count = 0;
  bool whole_instruction = false;
};

struct OrderExpectation {
  std::string first;
  std::string then;
  long count = 0;
};

struct Options {
  bool sass = false;
  int entries = 1;
  std::string file;
  std::vector<Expectation> expect;
  std::vector<OrderExpectation> order;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "ptx_check: %s\nusage: ptx_check [--sass] [--entries N] FILE "
               "--expect[-insn] REGEX eq|ge|le COUNT [--expect-before FIRST THEN COUNT] [...]\n",
               why.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--sass") {
      o.sass = true;
    } else if (a == "--entries" && i + 1 < argc) {
      o.entries = std::atoi(argv[++i]);
    } else if ((a == "--expect" || a == "--expect-insn") && i + 3 < argc) {
      Expectation e{argv[i + 1], argv[i + 2], std::atol(argv[i + 3]), a == "--expect-insn"};
      if (e.op != "eq" && e.op != "ge" && e.op != "le") usage("bad operator '" + e.op + "'");
      o.expect.push_back(e);
      i += 3;
    } else if (a == "--expect-before" && i + 3 < argc) {
      o.order.push_back(OrderExpectation{argv[i + 1], argv[i + 2], std::atol(argv[i + 3])});
      i += 3;
    } else if (a.rfind("--", 0) != 0 && o.file.empty()) {
      o.file = a;
    } else {
      usage("unexpected argument '" + a + "'");
    }
  }
  if (o.file.empty()) usage("no input file");
  if (o.expect.empty() && o.order.empty()) usage("no --expect");
  return o;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// First token of an instruction, after an optional predicate ("@%p1 bra ..." -> "bra").
std::string opcode_of(std::string text) {
  text = trim(text);
  if (!text.empty() && text[0] == '@') {
    const auto sp = text.find_first_of(" \t");
    text = sp == std::string::npos ? std::string() : trim(text.substr(sp));
  }
  const auto end = text.find_first_of(" \t;");
  return text.substr(0, end);
}

// The whole instruction, blanks collapsed to one space and the trailing ';' dropped. SASS's
// ".reuse" operand flags (register-reuse cache hints of the scheduler, no meaning for what is
// computed) are removed, so that a pattern need not allow them on every operand.
std::string normalise(std::string text) {
  for (auto at = text.find(".reuse"); at != std::string::npos; at = text.find(".reuse")) text.erase(at, 6);
  std::string out;
  for (char c : trim(text)) {
    if (c == ' ' || c == '\t') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && (out.back() == ';' || out.back() == ' ')) out.pop_back();
  return out;
}

struct Listing {
  int entries = 0;
  std::vector<std::string> opcodes;
  std::vector<std::string> instructions;  // same order as opcodes
};

// PTX: the instructions inside the bodies of `.entry` functions (brace depth > 0 after an entry
// header); directives (.reg, .loc, .pragma), labels and braces are not instructions.
Listing read_ptx(std::istream& in) {
  Listing l;
  bool in_entry = false;
  int depth = 0;
  std::string line;
  while (std::getline(in, line)) {
    const auto comment = line.find("//");
    if (comment != std::string::npos) line.erase(comment);
    const std::string t = trim(line);
    if (!in_entry && t.find(".entry ") != std::string::npos) {
      in_entry = true;
      depth = 0;
      ++l.entries;
    }
    if (!in_entry) continue;
    const bool inside = depth > 0;
    for (char c : t) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    if (inside && depth == 0) in_entry = false;  // the entry's closing brace
    if (!inside || t.empty() || t[0] == '.' || t[0] == '{' || t[0] == '}' || t.back() == ':') continue;
    l.opcodes.push_back(opcode_of(t));
    l.instructions.push_back(normalise(t));
  }
  return l;
}

// cuobjdump -sass: "Function : name" starts a kernel; instruction lines look like
//   /*0090*/                   DFMA R2, R2, R4, R6 ;       /* 0x000000040202722b */
Listing read_sass(std::istream& in) {
  Listing l;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("Function : ") != std::string::npos) ++l.entries;
    const auto addr_end = line.find("*/");
    if (line.find("/*") == std::string::npos || addr_end == std::string::npos) continue;
    std::string rest = line.substr(addr_end + 2);
    const auto encoding = rest.find("/*");
    if (encoding != std::string::npos) rest.erase(encoding);
    rest = trim(rest);
    if (rest.empty()) continue;
    l.opcodes.push_back(opcode_of(rest));
    l.instructions.push_back(normalise(rest));
  }
  return l;
}

bool holds(const Expectation& e, long got) {
  if (e.op == "eq") return got == e.count;
  if (e.op == "ge") return got >= e.count;
  return got <= e.count;
}

void print_histogram(const std::vector<std::string>& opcodes) {
  std::map<std::string, long> h;
  for (const auto& op : opcodes) ++h[op];
  std::vector<std::pair<long, std::string>> sorted;
  for (const auto& [op, n] : h) sorted.emplace_back(n, op);
  std::sort(sorted.rbegin(), sorted.rend());
  std::printf("opcode histogram (%zu instructions):\n", opcodes.size());
  for (const auto& [n, op] : sorted) std::printf("  %6ld  %s\n", n, op.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  std::ifstream in(o.file);
  if (!in) usage("cannot open '" + o.file + "'");
  const Listing l = o.sass ? read_sass(in) : read_ptx(in);

  bool ok = true;
  if (l.entries != o.entries) {
    std::printf("FAIL  %d kernel entries in %s, expected %d\n", l.entries, o.file.c_str(), o.entries);
    ok = false;
  }
  for (const Expectation& e : o.expect) {
    const std::regex re(e.pattern);
    const auto& items = e.whole_instruction ? l.instructions : l.opcodes;
    const long got =
        std::count_if(items.begin(), items.end(), [&](const std::string& op) { return std::regex_match(op, re); });
    const bool pass = holds(e, got);
    ok = ok && pass;
    std::printf("%s  %s/%s/ %s %ld: counted %ld\n", pass ? "ok  " : "FAIL", e.whole_instruction ? "insn " : "",
                e.pattern.c_str(), e.op.c_str(), e.count, got);
  }
  for (const OrderExpectation& e : o.order) {
    const std::regex first(e.first), then(e.then);
    long before = 0;
    bool found = false;
    for (const std::string& op : l.opcodes) {
      if (std::regex_match(op, then)) {
        found = true;
        break;
      }
      if (std::regex_match(op, first)) ++before;
    }
    const bool pass = found && before >= e.count;
    ok = ok && pass;
    std::printf("%s  /%s/ ge %ld before the first /%s/: counted %ld%s\n", pass ? "ok  " : "FAIL", e.first.c_str(),
                e.count, e.then.c_str(), before, found ? "" : " (no such instruction)");
  }
  if (!ok) print_histogram(l.opcodes);
  return ok ? 0 : 1;
}

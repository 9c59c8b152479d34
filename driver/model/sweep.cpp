#include "driver/model/sweep.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <map>
#include <cstring>
#include <fstream>
#include <sstream>
#include <tuple>
#include <sys/stat.h>

#include "driver/model/atomic_file.hpp"
#include "driver/model/csv_text.hpp"
#include "driver/model/errors.hpp"

namespace roofprobe {

namespace {
// Column order of sweep.csv; Col names their indexes so reader and writer cannot drift apart.
const char* const kColumns[] = {"rank",
                                "backend",
                                "probe",
                                "point",
                                "sample",
                                "params",
                                "working_set_bytes",
                                "seconds",
                                "bytes",
                                "flops",
                                "transactions",
                                "warp_instructions",
                                "shared_wavefronts",
                                "gbs",
                                "gflops",
                                "gtxn_s",
                                "gips",
                                "shared_gtxn_s",
                                "clock_mhz",
                                "point_samples",
                                "flags",
                                "power_w",
                                "throttle",
                                "energy_j",
                                "power_cap_w",
                                "phase"};
enum Col {
  kRank,
  kBackend,
  kProbe,
  kPoint,
  kSample,
  kParams,
  kWorkingSet,
  kSeconds,
  kBytes,
  kFlops,
  kTransactions,
  kWarpInstructions,
  kSharedWavefronts,
  kGbs,
  kGflops,
  kGtxnS,
  kGips,
  kSharedGtxnS,
  kClockMhz,
  kPointSamples,
  kFlags,
  kPowerW,
  kThrottle,
  kEnergyJ,
  kPowerCapW,
  kPhase,
  kColumnCount
};
// Older sweeps end at flags (before power_w and throttle), at throttle (before energy_j), at
// energy_j (before power_cap_w) or at power_cap_w (before phase): read alike, the later columns
// left at 0 / empty.
constexpr int kColumnsBeforeTelemetry = kPowerW;
constexpr int kColumnsBeforeEnergy = kEnergyJ;
constexpr int kColumnsBeforePowerCap = kPowerCapW;
constexpr int kColumnsBeforePhase = kPhase;
static_assert(sizeof(kColumns) / sizeof(kColumns[0]) == kColumnCount, "one name per column");

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// Sizes and work counts are whole numbers: written whole while a double holds them exactly
// (below 2^53), so working_set_bytes=1073741824 in the parameters is 1073741824 in its column
// too, not 1.07374182e+09.
std::string count(double v) {
  if (v == std::floor(v) && std::fabs(v) < 9007199254740992.0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  return number(v);
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, sep)) out.push_back(field);
  if (!line.empty() && line.back() == sep) out.emplace_back();
  return out;
}
}  // namespace

double Sample::metric(const std::string& name) const {
  if (name == "gbs") return gbs;
  if (name == "gflops") return gflops;
  if (name == "gtxn_s") return gtxn_s;
  if (name == "gips") return gips;
  if (name == "shared_gtxn_s") return shared_gtxn_s;
  if (name == "clock_mhz") return clock_mhz;
  if (name == "seconds") return seconds;
  throw std::invalid_argument("unknown metric '" + name + "'");
}

namespace {
// The names of the first `columns` columns, comma-separated.
std::string header_of(int columns) {
  std::string h;
  for (int i = 0; i < columns; ++i) h += (i ? "," : "") + std::string(kColumns[i]);
  return h;
}
}  // namespace

const std::string& sweep_csv_header() {
  static const std::string header = header_of(kColumnCount);
  return header;
}

namespace {
bool has_flag(const std::string& flags, const std::string& flag) {
  for (std::size_t start = 0; start <= flags.size();) {
    const std::size_t bar = std::min(flags.find('|', start), flags.size());
    if (flags.compare(start, bar - start, flag) == 0 && bar - start == flag.size()) return true;
    start = bar + 1;
  }
  return false;
}
}  // namespace

bool is_noisy(const Sample& s) {
  const bool sag = has_flag(s.flags, "clock-sag") && !has_power_cap_reason(s.throttle);
  return has_flag(s.flags, "noisy") || sag || has_flag(s.flags, kForeignLoadFlag);
}
bool is_foreign_load(const Sample& s) { return has_flag(s.flags, kForeignLoadFlag); }
bool has_throttle_reason(const std::string& throttle, const std::string& reason) {
  return ("+" + throttle + "+").find("+" + reason + "+") != std::string::npos;
}
bool has_power_cap_reason(const std::string& throttle) {
  return has_throttle_reason(throttle, "sw-power") || has_throttle_reason(throttle, "power-brake");
}
void add_throttle_reasons(std::string& into, const std::string& reasons) {
  for (std::size_t start = 0; start < reasons.size();) {
    const std::size_t plus = std::min(reasons.find('+', start), reasons.size());
    const std::string reason = reasons.substr(start, plus - start);
    if (!reason.empty() && ("+" + into + "+").find("+" + reason + "+") == std::string::npos)
      into += (into.empty() ? "" : "+") + reason;
    start = plus + 1;
  }
}

bool is_underfilled(const Sample& s) { return has_flag(s.flags, kUnderfilledFlag); }

bool is_sustained(const Sample& s) { return s.phase.rfind(kSustainedPhase, 0) == 0; }

std::string sustained_ceiling(const Sample& s) {
  return is_sustained(s) ? s.phase.substr(std::string(kSustainedPhase).size()) : std::string();
}

std::optional<EnergyShare> energy_share(const Sample& s) {
  const std::string prefix = kEnergyPhase;
  if (s.phase.rfind(prefix, 0) != 0) return std::nullopt;
  const std::string rest = s.phase.substr(prefix.size());
  const std::size_t colon = rest.rfind(':');
  const std::size_t slash = rest.rfind('/');
  EnergyShare share;
  if (colon == std::string::npos || colon == 0 || slash == std::string::npos || slash < colon)
    throw std::invalid_argument("phase '" + s.phase + "' (expected energy:<target>:<k>/<n>)");
  share.target = rest.substr(0, colon);
  const std::string k = rest.substr(colon + 1, slash - colon - 1), n = rest.substr(slash + 1);
  auto whole = [&](const std::string& text) {
    if (text.empty() || text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument("phase '" + s.phase + "' (expected energy:<target>:<k>/<n>)");
    return std::stoi(text);
  };
  share.workers = whole(k);
  share.of = whole(n);
  if (share.workers < 1 || share.workers > share.of)
    throw std::invalid_argument("phase '" + s.phase + "' (expected 1 <= k <= n in energy:<target>:<k>/<n>)");
  return share;
}

std::string energy_phase(const EnergyShare& share) {
  return kEnergyPhase + share.target + ":" + std::to_string(share.workers) + "/" + std::to_string(share.of);
}

std::vector<Sample> burst_samples(const std::vector<Sample>& samples) {
  std::vector<Sample> out;
  out.reserve(samples.size());
  for (const Sample& s : samples)
    if (s.phase.empty()) out.push_back(s);
  return out;
}

std::string sweep_csv_row(const Sample& s) {
  std::ostringstream out;
  out << s.rank << ',' << s.backend << ',' << s.probe << ',' << s.point << ',' << s.sample << ','
      << params_to_string(s.params) << ',' << count(s.working_set_bytes) << ',' << number(s.seconds) << ','
      << count(s.bytes) << ',' << count(s.flops) << ',' << count(s.transactions) << ',' << count(s.warp_instructions)
      << ',' << count(s.shared_wavefronts) << ',' << number(s.gbs) << ',' << number(s.gflops) << ',' << number(s.gtxn_s)
      << ',' << number(s.gips) << ',' << number(s.shared_gtxn_s) << ',' << number(s.clock_mhz) << ',' << s.point_samples
      << ',' << s.flags << ',' << number(s.power_w) << ',' << s.throttle << ',' << number(s.energy_j) << ','
      << number(s.power_cap_w) << ',' << s.phase;
  return out.str();
}

std::string foreign_load_note(const std::string& probe, std::size_t points, const std::string& first,
                              const std::string& reason) {
  if (points == 1)
    return first + ": measured while " + reason +
           " (its samples are flagged foreign-load in sweep.csv): its rates are not the device's own";
  return "probe '" + probe + "': " + std::to_string(points) + " points measured while " + reason +
         " (the first: " + first + "; their samples are flagged foreign-load in sweep.csv): their rates are not " +
         "the device's own";
}

std::vector<std::string> foreign_load_gaps(const std::vector<Sample>& samples) {
  std::vector<std::string> probes;
  std::map<std::string, std::map<int, std::string>> points;
  for (const Sample& s : samples)
    if (has_flag(s.flags, kForeignLoadFlag)) {
      if (points.count(s.probe) == 0) probes.push_back(s.probe);
      points[s.probe].emplace(s.point, s.probe + " " + params_to_string(s.params));
    }
  std::vector<std::string> out;
  for (const std::string& probe : probes)
    out.push_back(foreign_load_note(probe, points[probe].size(), points[probe].begin()->second,
                                    "other processes used the device"));
  return out;
}

bool run_directory_in_use(const std::string& dir) {
  const std::string path = dir + "/" + kRunLockFile;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;  // no lock file: no run ever wrote here, or it was copied away
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return held;
}

SweepWriter::SweepWriter(const std::string& path) : path_(path) {
  // Never through a link: one planted in the run directory (even dangling) could point anywhere.
  const int fd = open_for_append_without_link(path);
  struct stat st {};
  const bool exists = ::fstat(fd, &st) == 0 && st.st_size > 0;
  file_ = ::fdopen(fd, "a");
  if (file_ == nullptr) {
    ::close(fd);
    throw InputError(path + ": cannot write: " + std::strerror(errno));
  }
  if (!exists) {
    std::fprintf(file_, "%s\n", sweep_csv_header().c_str());
    std::fflush(file_);
  }
}

SweepWriter::~SweepWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void SweepWriter::append_point(const std::vector<Sample>& samples) {
  for (const Sample& s : samples) std::fprintf(file_, "%s\n", sweep_csv_row(s).c_str());
  // The record survives a crash of the process (fflush) and of the machine (fsync).
  if (std::fflush(file_) != 0 || fsync(fileno(file_)) != 0)
    throw std::runtime_error(path_ + ": write failed: " + std::strerror(errno));
}

std::vector<Sample> read_sweep_csv(const std::string& path) {
  // A regular file only (its size bounds the read); a FIFO or /dev/zero would never end.
  check_input_file(path, "a sweep.csv");
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot read");
  std::string line;
  if (!std::getline(in, line)) throw InputError(path + ": empty file, expected a sweep.csv header");
  // A sweep that passed through a spreadsheet or a Windows editor: a byte order mark and CRLF
  // line ends are read past (the rows' text is otherwise the same).
  if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
  const auto drop_cr = [](std::string& text) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
  };
  drop_cr(line);
  int columns = kColumnCount;
  if (line != sweep_csv_header()) {
    if (line == header_of(kColumnsBeforePhase))
      columns = kColumnsBeforePhase;
    else if (line == header_of(kColumnsBeforePowerCap))
      columns = kColumnsBeforePowerCap;
    else if (line == header_of(kColumnsBeforeEnergy))
      columns = kColumnsBeforeEnergy;
    else if (line == header_of(kColumnsBeforeTelemetry))
      columns = kColumnsBeforeTelemetry;
    else
      throw InputError(path + ":1: not a roofprobe sweep.csv header (for other tools' data use fit --bandwidth-csv)");
  }
  std::vector<Sample> samples;
  int line_no = 1;
  std::string pending;
  while (std::getline(in, line)) {
    ++line_no;
    drop_cr(line);
    if (line.empty()) continue;
    // A torn last line (the process died mid-write: no newline ends it) is dropped, even where
    // it parses: its last field may be cut ("sustained:FP6" for "sustained:FP64.FMA"). The
    // point it belonged to then has fewer rows than its point_samples, which the fit names.
    if (in.eof()) break;
    auto fields = split(line, ',');
    // A bad line, the last one included, is an error.
    const auto bad = [&](const std::string& why) {
      throw InputError(path + ":" + std::to_string(line_no) + ": " + why);
    };
    if (static_cast<int>(fields.size()) != columns) {
      bad("expected " + std::to_string(columns) + " fields, got " + std::to_string(fields.size()));
      break;
    }
    Sample s;
    try {
      std::size_t pos = 0;
      auto num = [&](const std::string& f) {
        double v = std::stod(f, &pos);
        if (pos != f.size() || !std::isfinite(v)) throw std::invalid_argument(f);
        return v;
      };
      s.rank = static_cast<int>(num(fields[kRank]));
      s.backend = fields[kBackend];
      s.probe = fields[kProbe];
      s.point = static_cast<int>(num(fields[kPoint]));
      s.sample = static_cast<int>(num(fields[kSample]));
      s.params = params_from_string(fields[kParams]);
      s.working_set_bytes = num(fields[kWorkingSet]);
      s.seconds = num(fields[kSeconds]);
      s.bytes = num(fields[kBytes]);
      s.flops = num(fields[kFlops]);
      s.transactions = num(fields[kTransactions]);
      s.warp_instructions = num(fields[kWarpInstructions]);
      s.shared_wavefronts = num(fields[kSharedWavefronts]);
      s.gbs = num(fields[kGbs]);
      s.gflops = num(fields[kGflops]);
      s.gtxn_s = num(fields[kGtxnS]);
      s.gips = num(fields[kGips]);
      s.shared_gtxn_s = num(fields[kSharedGtxnS]);
      s.clock_mhz = num(fields[kClockMhz]);
      s.point_samples = static_cast<int>(num(fields[kPointSamples]));
      s.flags = fields[kFlags];
      if (columns > kPowerW) {
        s.power_w = num(fields[kPowerW]);
        s.throttle = fields[kThrottle];
      }
      if (columns > kEnergyJ) {
        s.energy_j = num(fields[kEnergyJ]);
        if (s.energy_j < 0) throw std::invalid_argument("negative energy_j " + fields[kEnergyJ]);
      }
      if (columns > kPowerCapW) {
        s.power_cap_w = num(fields[kPowerCapW]);
        if (s.power_cap_w < 0) throw std::invalid_argument("negative power_cap_w " + fields[kPowerCapW]);
      }
      // Each rate is its count over the seconds, as sweep_csv_row writes them (9 significant
      // digits): a rate that is not was edited by hand, and would be published as measured.
      if (s.seconds > 0)
        for (const auto& [rate, count, rate_name, count_name] :
             {std::tuple{s.gbs, s.bytes, "gbs", "bytes"},
              {s.gflops, s.flops, "gflops", "flops"},
              {s.gtxn_s, s.transactions, "gtxn_s", "transactions"},
              {s.gips, s.warp_instructions, "gips", "warp_instructions"},
              {s.shared_gtxn_s, s.shared_wavefronts, "shared_gtxn_s", "shared_wavefronts"}}) {
          const double expected = count / s.seconds / 1e9;
          if (std::abs(rate - expected) > 1e-6 * std::max(std::abs(rate), std::abs(expected)))
            throw std::invalid_argument(std::string(rate_name) + " " + csv_text::number_text(rate) + " is not " +
                                        count_name + " / seconds / 1e9 (" + csv_text::number_text(expected) + ")");
        }
      if (columns > kPhase) {
        s.phase = fields[kPhase];
        // Only the sweep's rows (empty), a named ceiling's sustained windows and the energy
        // phase's windows exist.
        if (!s.phase.empty() && !energy_share(s) && (!is_sustained(s) || sustained_ceiling(s).empty()))
          throw std::invalid_argument("phase '" + s.phase +
                                      "' (expected empty, sustained:<ceiling> or energy:<target>:<k>/<n>)");
      }
    } catch (const std::exception& e) {
      bad(std::string("malformed field: ") + e.what());
      break;
    }
    samples.push_back(std::move(s));
  }
  return samples;
}

std::vector<Sample> prepare_sweep_for_resume(const std::string& path) {
  std::string text;
  {
    check_input_file(path, "a sweep.csv to resume");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path + ": cannot read the sweep to resume");
    std::ostringstream buf;
    buf << in.rdbuf();
    text = buf.str();
  }
  // Another tool's or another version's file is refused before anything is cut from it.
  if (!text.empty() && text.compare(0, sweep_csv_header().size() + 1, sweep_csv_header() + "\n") != 0)
    throw InputError(path + ":1: cannot resume: not this roofprobe version's sweep.csv header");
  // Offsets where each complete line starts; a torn last line (no newline) is left out.
  std::vector<std::size_t> starts;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;
    starts.push_back(pos);
    pos = nl + 1;
  }
  std::size_t keep = starts.empty() ? 0 : text.rfind('\n') + 1;
  // A group of rows is one point of the sweep, or one ceiling's sustained windows (which carry
  // the index of the point they loop, and may follow that very point's rows).
  auto point_of = [&](std::size_t i) {
    auto fields = split(text.substr(starts[i], text.find('\n', starts[i]) - starts[i]), ',');
    return fields.size() > kPhase ? fields[kPoint] + "," + fields[kPhase] : std::string();
  };
  // Rows 1.. are samples (row 0 is the header). The last point is whole when it has as many
  // rows as its point_samples field says; otherwise cut back over its rows.
  if (starts.size() > 1) {
    std::string last = point_of(starts.size() - 1);
    std::size_t i = starts.size() - 1;
    while (i > 1 && point_of(i - 1) == last) --i;
    auto fields = split(text.substr(starts[i], text.find('\n', starts[i]) - starts[i]), ',');
    std::size_t rows = starts.size() - i;
    bool whole = fields.size() == static_cast<std::size_t>(kColumnCount) &&
                 std::atoi(fields[kPointSamples].c_str()) == static_cast<int>(rows);
    if (!whole) keep = starts[i];
  }
  if (::truncate(path.c_str(), static_cast<off_t>(keep)) != 0)
    throw InputError(path + ": cannot truncate for resume: " + std::strerror(errno));
  if (keep == 0) return {};  // not even the header survived: start the sweep over
  return read_sweep_csv(path);
}

}  // namespace roofprobe

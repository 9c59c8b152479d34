#include "driver/model/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "driver/model/errors.hpp"
#include "driver/model/pending_files.hpp"

namespace fs = std::filesystem;

namespace roofprobe {

namespace {

std::string kib(std::size_t bytes) {
  return bytes >= (1u << 20) ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes >> 10) + " KiB";
}

// Reads from fd until EOF or max_bytes + 1 bytes.
std::string read_bounded(int fd, const std::string& path, std::size_t max_bytes, const std::string& what) {
  std::string text;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InputError(path + ": cannot read: " + std::strerror(errno));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max_bytes)
      throw InputError(path + ": too large for " + what + " (the limit is " + kib(max_bytes) + ")");
  }
  return text;
}

// Writes all of content to fd; false with errno set on failure.
bool write_all(int fd, const std::string& content) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// A device or FIFO is written in place: replacing it would destroy it for everyone else.
void write_in_place(const std::string& path, const std::string& target, const std::string& content) {
  // O_NONBLOCK: a FIFO nobody reads fails at once (ENXIO) instead of hanging.
  const int fd = ::open(target.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    throw InputError(path + ": cannot write: " + (err == ENXIO ? "no process reads this FIFO" : std::strerror(err)));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const bool ok = write_all(fd, content);
  const int err = errno;
  if (::close(fd) != 0 || !ok) throw InputError(path + ": write failed: " + std::strerror(ok ? errno : err));
}

// The descriptor a path names that the process already holds open: /dev/stdout, /dev/stderr,
// /dev/fd/N and /proc/self/fd/N (a shell's redirection, a pipe), or -1. Such an output is written
// to that descriptor: reopening it by name would replace a file the shell appends to, and fail on
// a pipe, which has no name.
int inherited_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (path.rfind(prefix, 0) != 0 || path.size() == prefix.size() || path.size() > prefix.size() + 6) continue;
    const std::string digits = path.substr(prefix.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::stoi(digits);
  }
  return -1;
}

// The file an output path the user named leads to: its symbolic links followed to the end, a
// last one that dangles included (the file is created where it points), so that the link stays.
fs::path resolve_named_output(const std::string& path, std::error_code& ec) {
  fs::path p(path);
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) break;
    const fs::path to = fs::read_symlink(p, ec);
    if (ec) return {};
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  return fs::weakly_canonical(p, ec);
}

}  // namespace

void check_input_file(const std::string& path, const std::string& what) {
  if (path == "-") return;
  if (path.empty()) throw InputError("an input path is empty, expected " + what);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw InputError(path + ": " + (errno == ENOENT ? std::string("no such file") : std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) throw InputError(path + ": is a directory, expected " + what);
  if (!S_ISREG(st.st_mode))
    throw InputError(path + ": not a regular file (a FIFO, device or socket), expected " + what);
}

std::string read_input_file(const std::string& path, std::size_t max_bytes, const std::string& what) {
  if (path == "-") return read_bounded(STDIN_FILENO, "(standard input)", max_bytes, what);
  check_input_file(path, what);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw InputError(path + ": cannot read: " + std::strerror(errno));
  // Checked again on the open file: the path may have been swapped for a FIFO in between.
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError(path + ": not a regular file, expected " + what);
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    throw InputError(path + ": too large for " + what + " (the limit is " + kib(max_bytes) + ")");
  }
  try {
    std::string text = read_bounded(fd, path, max_bytes, what);
    ::close(fd);
    return text;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

void check_output_path(const std::string& path) {
  if (path.empty()) throw InputError("an output path is empty (use - for standard output)");
  if (path == "-") return;
  if (const int fd = inherited_descriptor(path); fd >= 0) {
    if (::fcntl(fd, F_GETFL) < 0) throw InputError(path + ": not open in this process (" + std::strerror(errno) + ")");
    return;
  }
  std::error_code ec;
  const fs::path target = resolve_named_output(path, ec);
  if (ec) throw InputError(path + ": cannot resolve the output path: " + ec.message());
  const fs::file_status st = fs::status(target, ec);
  if (fs::is_directory(st)) throw InputError(path + ": is a directory, expected a file to write");
  if (fs::is_socket(st)) throw InputError(path + ": is a socket, expected a file to write");
  if (!fs::is_directory(target.parent_path().empty() ? fs::path(".") : target.parent_path()))
    throw InputError(path + ": the directory " + target.parent_path().string() + " does not exist");
}

OutputRules inside_output_directory(const std::string& mark) {
  OutputRules rules;
  rules.follow_links = false;
  rules.replace_only_marked = mark;
  return rules;
}

bool is_symbolic_link(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

namespace {

[[noreturn]] void refuse_link(const std::string& path) {
  throw InputError(path +
                   ": is a symbolic link; roofprobe does not write through a link in an output "
                   "directory (remove it, or choose another output)");
}

// Whether the regular file at `path` begins with `mark` (read without following a link).
bool starts_with_mark(const std::string& path, const std::string& mark) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return false;
  std::string head(mark.size(), '\0');
  std::size_t got = 0;
  while (got < head.size()) {
    const ssize_t n = ::read(fd, &head[got], head.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return got == mark.size() && head == mark;
}

// Moves the finished temp file to `target`: rename() replaces, link() never does (it fails with
// EEXIST when something appeared there since the check).
void publish(const std::string& path, const std::string& tmp, const std::string& target, bool never_replace) {
  const int rc = never_replace ? ::link(tmp.c_str(), target.c_str()) : ::rename(tmp.c_str(), target.c_str());
  const int err = errno;
  if (never_replace || rc != 0) ::unlink(tmp.c_str());
  if (rc == 0) return;
  if (err == EEXIST) throw InputError(path + ": already exists; roofprobe never replaces it");
  throw InputError(path + ": cannot replace: " + std::strerror(err));
}

}  // namespace

void check_output_replaceable(const std::string& path, const OutputRules& rules) {
  if (path == "-" || inherited_descriptor(path) >= 0) return;
  std::string target = path;
  struct stat st {};
  if (!rules.follow_links) {
    if (::lstat(path.c_str(), &st) == 0) {
      if (S_ISLNK(st.st_mode)) refuse_link(path);
      if (!S_ISREG(st.st_mode))
        throw InputError(path + ": not a regular file (a FIFO, device or socket); roofprobe does not replace it");
    }
  } else {
    std::error_code ec;
    target = resolve_named_output(path, ec).string();
  }
  if (::lstat(target.c_str(), &st) != 0) return;
  if (rules.never_replace) throw InputError(path + ": already exists; roofprobe never replaces it");
  if (!rules.replace_only_marked.empty() && S_ISREG(st.st_mode) && !starts_with_mark(target, rules.replace_only_marked))
    throw InputError(path +
                     ": is a file roofprobe did not write; it is not replaced (move it away, or choose "
                     "another output)");
}

void write_file_atomically(const std::string& path, const std::string& content, const OutputRules& rules) {
  if (path == "-") {
    std::cout << content << std::flush;
    if (!std::cout) throw InputError("(standard output): write failed");
    return;
  }
  if (!rules.follow_links && is_symbolic_link(path)) refuse_link(path);  // before where it leads is asked
  check_output_path(path);
  if (const int fd = inherited_descriptor(path); fd >= 0) {
    std::cout << std::flush;
    if (!write_all(fd, content)) throw InputError(path + ": write failed: " + std::strerror(errno));
    return;
  }
  std::string target = path;
  if (rules.follow_links) {
    // A link stays a link: the file it names is what gets replaced.
    std::error_code ec;
    target = resolve_named_output(path, ec).string();
    struct stat st {};
    if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return write_in_place(path, target, content);
  }
  check_output_replaceable(path, rules);
  const std::string tmp = target + ".tmp." + std::to_string(getpid());
  // The ending signals wait from the open until the temp file is registered, so that a signal
  // before the rename, at any moment, leaves no temp file behind.
  sigset_t ending, before;
  sigemptyset(&ending);
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&ending, signal);
  ::sigprocmask(SIG_BLOCK, &ending, &before);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  const int open_errno = errno;
  const PendingFile pending(fd >= 0 ? tmp : std::string());
  ::sigprocmask(SIG_SETMASK, &before, nullptr);
  if (fd < 0) throw InputError(path + ": cannot write: " + std::strerror(open_errno));
  if (!write_all(fd, content) || ::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw InputError(path + ": write failed: " + std::strerror(err));
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw InputError(path + ": write failed: " + std::strerror(err));
  }
  publish(path, tmp, target, rules.never_replace);
}

void check_output_is_not_an_input(const std::string& output, const std::vector<std::string>& inputs,
                                  const std::string& flag) {
  if (output.empty() || output == "-") return;
  for (const std::string& input : inputs) {
    if (input.empty() || input == "-") continue;
    if (same_file(input, output))
      throw InputError(flag + " " + output + ": is the input " + input +
                       " (the same file); roofprobe never writes over its input: choose another " + flag);
  }
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void ensure_subdirectory_without_link(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode))
      throw InputError(path +
                       ": is a symbolic link; roofprobe does not write through a link in an output "
                       "directory (remove it, or choose another output)");
    if (!S_ISDIR(st.st_mode)) throw InputError(path + ": exists and is not a directory");
    return;
  }
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
    throw InputError(path + ": cannot create directory: " + std::strerror(errno));
  if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) throw InputError(path + ": is not a directory");
}

int open_for_append_without_link(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0) {
    if (errno == ELOOP) refuse_link(path);
    throw InputError(path + ": cannot open: " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError(path + ": not a regular file (a FIFO, device or socket)");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

void ensure_writable_directory(const std::string& dir) {
  if (dir.empty()) throw InputError("--out: the output directory is empty");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(dir + ": cannot create output directory: " + ec.message());
  if (!std::filesystem::is_directory(dir)) throw InputError(dir + ": output path is not a directory");
  // A new file of a name nobody chose (mkstemp: O_CREAT | O_EXCL), so that no file or link
  // already in the directory is opened, truncated or removed by the test.
  std::string probe = dir + "/.roofprobe-write-test.XXXXXX";
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) throw InputError(dir + ": output directory is not writable: " + std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace roofprobe

#include "driver/run/device_lock.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sstream>
#include <thread>

#include "driver/model/errors.hpp"
#include "driver/run/run_identity.hpp"

namespace roofprobe {

namespace {

std::string user_name() {
  if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr && pw->pw_name != nullptr) return pw->pw_name;
  return "uid " + std::to_string(::geteuid());
}

// The lock directory exists as a real directory (not a link), writable by everyone and sticky, so
// every user can create a lock file there and none can remove another's. Made so when this
// process creates it; a directory of this user's own is used as it is (ROOFPROBE_LOCK_DIR may
// name one, and its mode is the user's to choose); refused when someone else made it otherwise.
void prepare_directory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 01777) == 0) ::chmod(dir.c_str(), 01777);  // the umask trimmed the mode
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0)
    throw InputError(dir + ": cannot create the device lock directory: " + std::strerror(errno));
  if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode))
    throw InputError(dir + ": the device lock directory is not a directory (a link or a file): remove it");
  if ((st.st_mode & 01777) != 01777) {
    if (st.st_uid == ::geteuid()) return;
    if (st.st_uid != ::geteuid() && st.st_uid != 0)
      throw InputError(dir + ": the device lock directory belongs to uid " + std::to_string(st.st_uid) +
                       " and is not world-writable and sticky (mode 1777): its owner or root must fix it");
  }
}

std::string read_all(int fd) {
  std::string text;
  char buf[1024];
  ::lseek(fd, 0, SEEK_SET);
  while (text.size() < 8192) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

LockHolder parse_holder(const std::string& text) {
  LockHolder h;
  std::istringstream in(text);
  std::string line;
  long started_epoch = 0;
  while (std::getline(in, line)) {
    const std::size_t colon = line.find(": ");
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, colon), value = line.substr(colon + 2);
    if (key == "pid") h.pid = std::strtol(value.c_str(), nullptr, 10);
    if (key == "user") h.user = value;
    if (key == "started") h.started = value;
    if (key == "started_epoch") started_epoch = std::strtol(value.c_str(), nullptr, 10);
    if (key == "run") h.run = value;
  }
  if (started_epoch > 0) h.held_seconds = std::difftime(std::time(nullptr), started_epoch);
  return h;
}

void write_holder(int fd, const std::string& run) {
  std::ostringstream out;
  out << "pid: " << ::getpid() << "\nuser: " << user_name() << "\nstarted: " << utc_now()
      << "\nstarted_epoch: " << std::time(nullptr) << "\nrun: " << run << "\n";
  const std::string text = out.str();
  if (::ftruncate(fd, 0) != 0) return;  // the record is for people; the lock holds without it
  ::lseek(fd, 0, SEEK_SET);
  const ssize_t ignored = ::write(fd, text.data(), text.size());
  (void)ignored;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string device_lock_directory() {
  const char* env = std::getenv("ROOFPROBE_LOCK_DIR");
  return env != nullptr && *env != '\0' ? env : "/tmp/roofprobe-locks";
}

std::string device_lock_name(const DeviceInfo& device, const std::string& host) {
  const auto extra = [&](const char* key) {
    const auto it = device.extra.find(key);
    return it == device.extra.end() ? std::string() : it->second;
  };
  if (device.kind == "gpu") {
    if (!extra("uuid").empty()) return "gpu-" + slug(extra("uuid"), "unknown");
    return "gpu-" + slug(host, "host") + "-" + slug(extra("cuda_device"), "0");
  }
  return "cpu-" + slug(host, "host");
}

std::string LockHolder::describe() const {
  std::string s = "run " + (run.empty() ? std::string("(directory not recorded)") : run) + " (pid " +
                  std::to_string(pid) + ", user " + (user.empty() ? std::string("unknown") : user);
  if (!started.empty()) s += ", since " + started;
  if (held_seconds > 0) s += ", for " + std::to_string(static_cast<long>(held_seconds)) + " s";
  return s + ")";
}

DeviceLock::DeviceLock(const std::string& name, const std::string& what, const DeviceLockOptions& o) {
  const std::string dir = device_lock_directory();
  prepare_directory(dir);
  path_ = dir + "/" + name + ".lock";
  // An existing lock file is opened without O_CREAT: in a sticky directory, Linux's
  // fs.protected_regular refuses O_CREAT on another user's file even when it is writable.
  constexpr int kFlags = O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
  for (int attempt = 0; attempt < 3; ++attempt) {
    fd_ = ::open(path_.c_str(), kFlags);
    if (fd_ >= 0 || errno != ENOENT) break;
    fd_ = ::open(path_.c_str(), kFlags | O_CREAT | O_EXCL, 0666);
    if (fd_ >= 0 || errno != EEXIST) break;  // EEXIST: another run made it just now; open that one
  }
  if (fd_ < 0)
    throw InputError(path_ + ": cannot open the device lock: " + std::strerror(errno) +
                     (errno == ELOOP ? " (it is a symbolic link: remove it)" : ""));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw InputError(path_ + ": the device lock is not a regular file: remove it");
  }
  if (st.st_uid == ::geteuid()) ::fchmod(fd_, 0666);  // every user's runs must be able to open it
  const double start = now_seconds();
  double next_report = start;
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      const int err = errno;
      ::close(fd_);
      throw InputError(path_ + ": cannot lock: " + std::strerror(err));
    }
    const LockHolder holder = parse_holder(read_all(fd_));
    if (!o.wait) {
      ::close(fd_);
      throw InputError(what + " is in use by " + holder.describe() + "; --no-wait refuses to wait (" + path_ + ")");
    }
    if (o.give_up()) {
      ::close(fd_);
      throw InputError("stopped while waiting for " + what + ", in use by " + holder.describe());
    }
    const double now = now_seconds();
    if (now >= next_report && o.report) {
      o.report("waiting for " + what + ": in use by " + holder.describe() + "; waited " +
               std::to_string(static_cast<long>(now - start)) + " s (--no-wait refuses instead)");
      next_report = now + o.report_every;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  waited_ = now_seconds() - start;
  write_holder(fd_, o.run);
}

DeviceLock::~DeviceLock() {
  if (fd_ >= 0) ::close(fd_);
}

bool device_lock_holder(const std::string& name, LockHolder* holder) {
  const std::string path = device_lock_directory() + "/" + name + ".lock";
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  if (held && holder != nullptr) *holder = parse_holder(read_all(fd));
  ::close(fd);
  return held;
}

}  // namespace roofprobe

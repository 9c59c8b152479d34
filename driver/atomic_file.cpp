#include "driver/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "driver/errors.hpp"

namespace roofprobe {

void write_file_atomically(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw InputError(path + ": cannot write: " + std::strerror(errno));
  std::size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw InputError(path + ": write failed: " + std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw InputError(path + ": write failed: " + std::strerror(err));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw InputError(path + ": cannot replace: " + std::strerror(err));
  }
}

void ensure_writable_directory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(dir + ": cannot create output directory: " + ec.message());
  if (!std::filesystem::is_directory(dir)) throw InputError(dir + ": output path is not a directory");
  std::string probe = dir + "/.roofprobe-write-test." + std::to_string(getpid());
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw InputError(dir + ": output directory is not writable: " + std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace roofprobe

// A file with the given text for the life of the object, in the test's temporary directory.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace roofprobe {

class TempFile {
 public:
  explicit TempFile(const std::string& text, const std::string& suffix = ".csv") {
    // ctest runs each test as its own process, several at once: the pid keeps their files apart.
    static int counter = 0;
    path_ = ::testing::TempDir() + "roofprobe_test_" + std::to_string(::getpid()) + "_" + std::to_string(++counter) +
            suffix;
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace roofprobe

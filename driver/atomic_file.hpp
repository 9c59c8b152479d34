#pragma once

#include <string>

namespace roofprobe {

// Writes `content` to `path` so that readers see the old file or the whole new one, never a
// part: temp file in the same directory, fsync, rename. Throws InputError naming the path.
void write_file_atomically(const std::string& path, const std::string& content);

// Creates `dir` (and parents) and checks that a file can be written there, before any
// measurement starts. Throws InputError naming the directory.
void ensure_writable_directory(const std::string& dir);

}  // namespace roofprobe

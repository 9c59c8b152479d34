// Reading inputs and writing outputs so that nothing a user points roofprobe at can hang it,
// exhaust memory, or be destroyed: inputs are regular files (or `-`, standard input) read up to a
// limit; outputs replace a regular file atomically, keep a symbolic link (the file it names is
// replaced), and write devices and FIFOs in place, never replacing them.
#pragma once

#include <cstddef>
#include <string>

namespace roofprobe {

// Inputs read whole (CSV exports of other tools, points files): far above any real one.
inline constexpr std::size_t kMaxCsvInputBytes = std::size_t{256} << 20;

// The whole of `path` (`-`: standard input), refused with an InputError naming the path when it
// is missing, a directory, a FIFO, a device or a socket, or longer than max_bytes. `what` names
// the expected content in messages ("a machine file").
std::string read_input_file(const std::string& path, std::size_t max_bytes, const std::string& what);

// Refuses (InputError) an input path that read_input_file would refuse, without reading it.
void check_input_file(const std::string& path, const std::string& what);

// Writes `content` to `path` so that readers see the old file or the whole new one, never a
// part: temp file in the same directory, fsync, rename. A symbolic link stays a link (the file it
// points to is replaced); a character device or FIFO is written in place; `-` is standard output.
// Every write, fsync and close is checked: a failure leaves the previous file intact and throws
// InputError naming the path.
void write_file_atomically(const std::string& path, const std::string& content);

// Refuses (InputError) an output path write_file_atomically could not write: empty, a directory
// or a socket, a link loop, or a directory that does not exist. Checked before work starts.
void check_output_path(const std::string& path);

// Creates `dir` (and parents) and checks that a file can be written there, before any
// measurement starts. Throws InputError naming the directory.
void ensure_writable_directory(const std::string& dir);

}  // namespace roofprobe

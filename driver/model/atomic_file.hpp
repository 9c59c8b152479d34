// Reading inputs and writing outputs so that nothing a user points roofprobe at can hang it,
// exhaust memory, or be destroyed: inputs are regular files (or `-`, standard input) read up to a
// limit; outputs replace a regular file atomically, keep a symbolic link (the file it names is
// replaced), and write devices and FIFOs in place, never replacing them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace roofprobe {

// Inputs read whole (CSV exports of other tools, points files): far above any real one.
inline constexpr std::size_t kMaxCsvInputBytes = std::size_t{256} << 20;

// The whole of `path` (`-`: standard input), refused with an InputError naming the path when it
// is missing, a directory, a FIFO, a device or a socket, or longer than max_bytes. `what` names
// the expected content in messages ("a machine file").
std::string read_input_file(const std::string& path, std::size_t max_bytes, const std::string& what);

// Refuses (InputError) an input path that read_input_file would refuse, without reading it.
void check_input_file(const std::string& path, const std::string& what);

// How an output meets what is already at its path.
struct OutputRules {
  // A file the user named (--out FILE) may be a link to where they keep it: the file it names is
  // replaced. A file roofprobe names itself inside an output directory is never reached through a
  // link (one planted there, even dangling, could point anywhere): such a link is refused.
  bool follow_links = true;
  // Empty: an existing regular file is replaced. Otherwise only a file whose text begins with this
  // mark (one roofprobe wrote) is replaced; any other file of that name is the user's and refused.
  std::string replace_only_marked;
  // Refuses any existing file at the path (a run's record is written once).
  bool never_replace = false;
};

// Rules for a file roofprobe names inside an output directory: links refused, and when `mark` is
// given only a file carrying it is replaced.
OutputRules inside_output_directory(const std::string& mark = std::string());

// Writes `content` to `path` so that readers see the old file or the whole new one, never a
// part: temp file in the same directory, fsync, rename. With the default rules a symbolic link
// stays a link (the file it points to is replaced); a character device or FIFO is written in
// place; `-` is standard output. Every write, fsync and close is checked: a failure leaves the
// previous file intact and throws InputError naming the path.
void write_file_atomically(const std::string& path, const std::string& content, const OutputRules& rules = {});

// Refuses (InputError naming the path) what write_file_atomically with these rules would refuse
// at `path` (a link, a user's file, an existing file), without writing: so a command that writes
// several files checks them all before it writes the first.
void check_output_replaceable(const std::string& path, const OutputRules& rules);

// Refuses (InputError, naming both) an output that is one of the command's inputs: the same file
// by device and inode, however it is spelled (another path, a hard link, a symbolic link).
// `flag` names the option in the message ("--out"). Outputs that do not exist yet pass.
void check_output_is_not_an_input(const std::string& output, const std::vector<std::string>& inputs,
                                  const std::string& flag);

// True when both paths name one existing file (device and inode).
bool same_file(const std::string& a, const std::string& b);

// Creates the directory `path` (its parent must exist) or accepts an existing directory; a
// symbolic link or any other file there is refused (InputError): roofprobe never writes its
// outputs into a directory reached through a link planted inside an output directory.
void ensure_subdirectory_without_link(const std::string& path);

// True when `path` itself (not what it names) is a symbolic link, dangling or not.
bool is_symbolic_link(const std::string& path);

// Opens `path` for appending without following a symbolic link (O_NOFOLLOW), creating it 0644;
// returns the descriptor. Throws InputError naming the path (a link there is refused by name).
int open_for_append_without_link(const std::string& path);

// Refuses (InputError) an output path write_file_atomically could not write: empty, a directory
// or a socket, a link loop, or a directory that does not exist. Checked before work starts.
void check_output_path(const std::string& path);

// Creates `dir` (and parents) and checks that a file can be written there, before any
// measurement starts. Throws InputError naming the directory.
void ensure_writable_directory(const std::string& dir);

}  // namespace roofprobe

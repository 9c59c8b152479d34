// Writing the scripts and running gnuplot on them.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "driver/model/atomic_file.hpp"
#include "driver/model/errors.hpp"
#include "driver/model/pending_files.hpp"
#include "plot/plot.hpp"

namespace roofprobe {

namespace {

namespace fs = std::filesystem;

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string temp_suffix() { return ".tmp" + std::to_string(::getpid()); }

// Every script and data file roofprobe writes begins with this line: a file of the same name
// without it is the user's own and is never replaced.
constexpr const char* kOwnMark = "# roofprobe";

// Small text files, atomically (driver/model/atomic_file.hpp), never through a link planted in
// the plot directory, and never over a file roofprobe did not write.
void write_text_file(const fs::path& path, const std::string& text) {
  const bool marked = text.rfind(kOwnMark, 0) == 0;
  const std::string content =
      marked ? text : std::string(kOwnMark) + " plot data: " + path.filename().string() + "\n" + text;
  write_file_atomically(path.string(), content, inside_output_directory(kOwnMark));
}

// An image carries no mark, but roofprobe writes VIEW.gp beside every VIEW.<format> it renders:
// an existing image is roofprobe's to replace only with a marked script of its name beside it.
// Any other (a user's picture, or an input of the command that happens to have the name) is
// refused.
void check_image_replaceable(const fs::path& dir, const std::string& view, const std::string& format) {
  const fs::path image = dir / (view + "." + format);
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(image, ec))) return;
  check_output_replaceable(image.string(), inside_output_directory());  // a link, a FIFO, a device
  const fs::path script = dir / (view + ".gp");
  if (!fs::exists(fs::symlink_status(script, ec)))
    throw InputError(image.string() + ": is a file roofprobe did not write (no " + script.filename().string() +
                     " of roofprobe's beside it); it is not replaced (move it away, or choose another output)");
  check_output_replaceable(script.string(), inside_output_directory(kOwnMark));
}

// Every file a script writes, checked before the first is written: a user's file of one of these
// names stops the command with nothing written.
void check_plot_files(const fs::path& dir, const std::vector<PlotScript>& scripts, const std::string& format) {
  for (const PlotScript& script : scripts) {
    check_output_replaceable((dir / (script.view + ".gp")).string(), inside_output_directory(kOwnMark));
    for (const auto& [name, text] : script.data_files)
      check_output_replaceable((dir / name).string(), inside_output_directory(kOwnMark));
    check_image_replaceable(dir, script.view, format);
  }
}

// The plot directory: created if missing. One roofprobe named is never reached through a link
// (one planted there could point anywhere); one the user named may be a link of theirs.
void ensure_plot_directory(const fs::path& dir, bool named_by_user) {
  if (!named_by_user && is_symbolic_link(dir.string())) ensure_subdirectory_without_link(dir.string());
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError("cannot create plot directory " + dir.string() + ": " + ec.message());
}

struct ProcessResult {
  bool ok = false;
  std::string failure;  // exit status or signal, when not ok
  std::string errors;   // everything the process wrote to stderr
};

// Runs `argv` with `dir` as working directory (the scripts name their data files bare), stdin
// and stdout on /dev/null and stderr captured. fork/exec rather than system(): no shell
// quoting of user paths, and the caller's working directory stays as it is.
// `output`: the file the process writes, removed if a signal ends roofprobe while it runs.
ProcessResult run_in_directory(const std::vector<std::string>& argv, const std::string& dir,
                               const std::string& output) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
    throw InputError(std::string("cannot run gnuplot: pipe: ") + std::strerror(errno));
  // The ending signals wait until the child is named: one that came between the fork and that
  // would leave a gnuplot nobody ends, writing the file after roofprobe removed it.
  PendingFile writing(output);
  sigset_t ending, before;
  sigemptyset(&ending);
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&ending, signal);
  ::sigprocmask(SIG_BLOCK, &ending, &before);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::sigprocmask(SIG_SETMASK, &before, nullptr);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    throw InputError(std::string("cannot run gnuplot: fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec; gnuplot gets the signal mask roofprobe had.
    ::sigprocmask(SIG_SETMASK, &before, nullptr);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    const int null_fd = ::open("/dev/null", O_RDWR);
    if (null_fd >= 0) {
      ::dup2(null_fd, STDIN_FILENO);
      ::dup2(null_fd, STDOUT_FILENO);
    }
    if (::chdir(dir.c_str()) != 0) {
      static const char msg[] = "cannot enter the plot directory\n";
      (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
      ::_exit(127);
    }
    ::execv(args[0], args.data());
    static const char msg[] = "cannot execute gnuplot\n";
    (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(127);
  }

  writing.set_child(pid);
  ::sigprocmask(SIG_SETMASK, &before, nullptr);
  ::close(pipe_fds[1]);
  ProcessResult result;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
    if (n > 0) {
      result.errors.append(buf, std::size_t(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  writing.child_ended();
  if (WIFEXITED(status)) {
    result.ok = WEXITSTATUS(status) == 0;
    result.failure = "exit status " + std::to_string(WEXITSTATUS(status));
  } else if (WIFSIGNALED(status)) {
    result.failure = "killed by signal " + std::to_string(WTERMSIG(status));
  }
  return result;
}

// gnuplot echoes the offending command and a caret before its `"x.gp" line N: message`;
// the message line is the one worth a one-line error.
std::string first_error_line(const std::string& errors) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= errors.size()) {
    std::size_t end = errors.find('\n', start);
    if (end == std::string::npos) end = errors.size();
    std::string line = errors.substr(start, end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.find_first_not_of(" \t^") != std::string::npos) lines.push_back(line);
    start = end + 1;
  }
  for (const std::string& line : lines)
    if (line.find(".gp\" line ") != std::string::npos) return line;
  return lines.empty() ? std::string() : lines.front();
}

void remove_quietly(const fs::path& path) {
  std::error_code ignored;
  fs::remove(path, ignored);
}

// Runs gnuplot on one written script; the image appears under its final name only on success.
fs::path render_one(const std::string& gnuplot, const PlotScript& script, const fs::path& dir,
                    const std::string& format) {
  const std::string image = script.view + "." + format;
  const std::string temp = "." + image + temp_suffix();
  const fs::path script_path = dir / (script.view + ".gp");
  remove_quietly(dir / temp);
  // From before gnuplot starts until the rename: a signal at any moment leaves no temp image.
  const PendingFile image_pending((dir / temp).string());
  const ProcessResult run =
      run_in_directory({gnuplot, "-e", "outfile=" + plot_detail::gnuplot_string(temp), script.view + ".gp"},
                       dir.string(), (dir / temp).string());
  if (!run.ok) {
    remove_quietly(dir / temp);
    std::string why = first_error_line(run.errors);
    if (why.empty()) why = run.failure;
    throw InputError("gnuplot failed on " + script_path.string() + ": " + why);
  }
  std::error_code ec;
  if (!fs::exists(dir / temp, ec))
    throw InputError("gnuplot failed on " + script_path.string() + ": it wrote no image");
  fs::rename(dir / temp, dir / image, ec);
  if (ec) {
    remove_quietly(dir / temp);
    throw InputError("cannot write " + (dir / image).string() + ": " + ec.message());
  }
  return dir / image;
}

std::string gnuplot_missing_message(const fs::path& dir) {
  std::string message;
  const char* env = std::getenv("ROOFPROBE_GNUPLOT");
  if (env && *env)
    message = "gnuplot not found: ROOFPROBE_GNUPLOT=" + std::string(env) +
              " is not an executable file; point it at gnuplot or unset it (apt-get install "
              "gnuplot-nox)";
  else
    message = "gnuplot not found: install it (apt-get install gnuplot-nox) or set ROOFPROBE_GNUPLOT";
  return message + "; machine.yaml and sweep.csv are unaffected (the gnuplot scripts are in " + dir.string() + ")";
}

// gnuplot runs in the plot directory, so a relative path found here must not stay relative.
std::string absolute(const std::string& path) {
  std::error_code ec;
  const fs::path full = fs::absolute(path, ec);
  return ec ? path : full.lexically_normal().string();
}

}  // namespace

std::string find_gnuplot() {
  // An explicit choice is honoured or reported, never silently replaced by another gnuplot.
  if (const char* env = std::getenv("ROOFPROBE_GNUPLOT"); env && *env)
    return is_executable_file(env) ? absolute(env) : std::string();
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (dir.empty()) dir = ".";  // an empty PATH entry means the working directory
    const std::string candidate = dir + "/gnuplot";
    if (is_executable_file(candidate)) return absolute(candidate);
    start = end + 1;
  }
  return {};
}

PlotReport render_plots(const Machine& machine, const std::vector<Sample>& samples, const PlotOptions& options) {
  PlotReport report;
  // Builds first: an unknown format is reported before anything is written.
  const std::vector<PlotScript> scripts = build_plot_scripts(machine, samples, options, &report.skipped);

  const fs::path dir = options.out_dir.empty() ? fs::path(".") : fs::path(options.out_dir);
  ensure_plot_directory(dir, options.out_dir_named_by_user);
  check_plot_files(dir, scripts, options.format);

  // Scripts and data are written even without gnuplot: they render anywhere gnuplot exists.
  for (const PlotScript& script : scripts) {
    write_text_file(dir / (script.view + ".gp"), script.script);
    for (const auto& [name, text] : script.data_files) write_text_file(dir / name, text);
  }
  if (scripts.empty()) return report;

  const std::string gnuplot = find_gnuplot();
  if (gnuplot.empty()) throw InputError(gnuplot_missing_message(dir));
  for (const PlotScript& script : scripts)
    report.written.push_back(render_one(gnuplot, script, dir, options.format).string());
  return report;
}

std::string render_script(const PlotScript& script, const PlotOptions& options) {
  const fs::path dir = options.out_dir.empty() ? fs::path(".") : fs::path(options.out_dir);
  ensure_plot_directory(dir, options.out_dir_named_by_user);
  check_plot_files(dir, {script}, options.format);
  write_text_file(dir / (script.view + ".gp"), script.script);
  for (const auto& [name, text] : script.data_files) write_text_file(dir / name, text);
  const std::string gnuplot = find_gnuplot();
  if (gnuplot.empty()) throw InputError(gnuplot_missing_message(dir));
  return render_one(gnuplot, script, dir, options.format).string();
}

}  // namespace roofprobe

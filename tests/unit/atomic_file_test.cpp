// driver/model/atomic_file: outputs never replace an input, never go through a link planted in an
// output directory, and never replace a file the user owns where roofprobe names the file itself.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "driver/model/atomic_file.hpp"
#include "driver/model/errors.hpp"
#include "driver/model/pending_files.hpp"
#include "driver/run/run_identity.hpp"

namespace roofprobe {
namespace {

namespace fs = std::filesystem;

class OutputRulesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "atomic_file_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  static void put(const std::string& p, const std::string& text) { std::ofstream(p) << text; }
  static std::string get(const std::string& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static std::string error_of(const std::function<void()>& f) {
    try {
      f();
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
  std::string dir_;
};

TEST_F(OutputRulesTest, AnOutputThatIsAnInputIsRefusedHoweverItIsSpelled) {
  put(path("sweep.csv"), "input");
  fs::create_directories(path("sub"));
  const std::string other_spelling = path("sub/../sweep.csv");
  ::link(path("sweep.csv").c_str(), path("hard.csv").c_str());
  fs::create_symlink(path("sweep.csv"), path("soft.csv"));
  for (const std::string& out : {path("sweep.csv"), other_spelling, path("hard.csv"), path("soft.csv")}) {
    const std::string e = error_of([&] { check_output_is_not_an_input(out, {path("sweep.csv")}, "--out"); });
    EXPECT_EQ(e, "--out " + out + ": is the input " + path("sweep.csv") +
                     " (the same file); roofprobe never writes over its input: choose another --out");
  }
  EXPECT_EQ(get(path("sweep.csv")), "input");
  // Another file, one not there yet, and standard output pass.
  put(path("other.csv"), "x");
  EXPECT_EQ(error_of([&] { check_output_is_not_an_input(path("other.csv"), {path("sweep.csv")}, "--out"); }), "");
  EXPECT_EQ(error_of([&] { check_output_is_not_an_input(path("new.yaml"), {path("sweep.csv")}, "--out"); }), "");
  EXPECT_EQ(error_of([&] { check_output_is_not_an_input("-", {"-"}, "--out"); }), "");
}

TEST_F(OutputRulesTest, ALinkInAnOutputDirectoryIsRefusedNotFollowedEvenDangling) {
  put(path("victim"), "the user's");
  fs::create_symlink(path("victim"), path("config.yaml"));
  fs::create_symlink(path("nowhere/created"), path("dangling.yaml"));
  for (const std::string& name : {"config.yaml", "dangling.yaml"}) {
    EXPECT_EQ(error_of([&] { write_file_atomically(path(name), "new", inside_output_directory()); }),
              path(name) +
                  ": is a symbolic link; roofprobe does not write through a link in an output directory (remove "
                  "it, or choose another output)");
    EXPECT_TRUE(fs::is_symlink(path(name)));
  }
  EXPECT_EQ(get(path("victim")), "the user's");
  EXPECT_FALSE(fs::exists(path("nowhere")));
  // The default rules (a file the user named) keep a link and replace what it names.
  write_file_atomically(path("config.yaml"), "named", {});
  EXPECT_TRUE(fs::is_symlink(path("config.yaml")));
  EXPECT_EQ(get(path("victim")), "named");
}

TEST_F(OutputRulesTest, AppendingRefusesALinkEvenDangling) {
  fs::create_symlink(path("elsewhere.csv"), path("sweep.csv"));
  EXPECT_NE(error_of([&] { ::close(open_for_append_without_link(path("sweep.csv"))); }).find("is a symbolic link"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(path("elsewhere.csv")));
  const int fd = open_for_append_without_link(path("real.csv"));
  EXPECT_GE(fd, 0);
  ::close(fd);
}

TEST_F(OutputRulesTest, OnlyAFileRoofprobeWroteIsReplacedWhereRoofprobeNamesIt) {
  const OutputRules rules = inside_output_directory("# roofprobe");
  put(path("report.gp"), "my own script\n");
  EXPECT_EQ(error_of([&] { write_file_atomically(path("report.gp"), "# roofprobe new\n", rules); }),
            path("report.gp") +
                ": is a file roofprobe did not write; it is not replaced (move it away, or choose another output)");
  EXPECT_EQ(error_of([&] { check_output_replaceable(path("report.gp"), rules); }).empty(), false);
  EXPECT_EQ(get(path("report.gp")), "my own script\n");
  write_file_atomically(path("ours.gp"), "# roofprobe first\n", rules);
  write_file_atomically(path("ours.gp"), "# roofprobe second\n", rules);
  EXPECT_EQ(get(path("ours.gp")), "# roofprobe second\n");
}

TEST_F(OutputRulesTest, NeverReplaceRefusesAnyExistingFile) {
  OutputRules once = inside_output_directory();
  once.never_replace = true;
  write_file_atomically(path("run.yaml"), "first", once);
  EXPECT_EQ(error_of([&] { write_file_atomically(path("run.yaml"), "second", once); }),
            path("run.yaml") + ": already exists; roofprobe never replaces it");
  EXPECT_EQ(get(path("run.yaml")), "first");
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << "no temp file is left";
}

TEST_F(OutputRulesTest, ASubdirectoryReachedThroughALinkIsRefused) {
  fs::create_directories(path("elsewhere"));
  fs::create_directory_symlink(path("elsewhere"), path("plots"));
  EXPECT_NE(error_of([&] { ensure_subdirectory_without_link(path("plots")); }).find("is a symbolic link"),
            std::string::npos);
  ensure_subdirectory_without_link(path("real"));
  EXPECT_TRUE(fs::is_directory(path("real")));
}

// Names built from a host or device name never climb out of results/ or hide.
// A process that a signal ends while it writes a file under a temporary name leaves no such file,
// and still ends by that signal; a file no longer pending is kept.
TEST_F(OutputRulesTest, ASignalRemovesThePendingFilesAndStillEndsTheProcess) {
  const std::string temp = path("out.json.tmp"), done = path("done.json.tmp");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    remove_pending_files_on_signals();
    put(done, "whole");
    { const PendingFile finished(done); }
    put(temp, "half of it");
    const PendingFile pending(temp);
    ::raise(SIGTERM);
    ::_exit(0);  // not reached: the signal ends the process
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_FALSE(fs::exists(temp));
  EXPECT_EQ(get(done), "whole");
}

TEST_F(OutputRulesTest, AnOpenDescriptorIsWrittenNotReopened) {
  const std::string log = path("log.txt");
  put(log, "mine\n");
  const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  write_file_atomically("/dev/fd/" + std::to_string(fd), "appended\n");
  ::close(fd);
  EXPECT_EQ(get(log), "mine\nappended\n");
  EXPECT_NE(error_of([] { write_file_atomically("/dev/fd/987", "x"); }).find("not open"), std::string::npos);
}

TEST_F(OutputRulesTest, ADanglingLinkTheUserNamedStaysALink) {
  fs::create_directories(path("store"));
  fs::create_symlink("store/out.json", path("out.json"));
  write_file_atomically(path("out.json"), "new");
  EXPECT_TRUE(fs::is_symlink(path("out.json")));
  EXPECT_EQ(get(path("store/out.json")), "new");
}

TEST(Slug, NeverNamesADirectoryAboveOrAHiddenOne) {
  EXPECT_EQ(slug("..", "host"), "host");
  EXPECT_EQ(slug(".", "host"), "host");
  EXPECT_EQ(slug("../../etc", "host"), "etc");
  EXPECT_EQ(slug(".hidden", "host"), "hidden");
  EXPECT_EQ(slug("node-1.example.org", "host"), "node-1.example.org");
  EXPECT_EQ(slug("AMD EPYC 7B13", "device"), "AMD-EPYC-7B13");
  EXPECT_EQ(slug("a/../b", "x"), "a-..-b");
}

}  // namespace
}  // namespace roofprobe

// driver/run/device_lock: one lock per device for every roofprobe process on the node. flock
// locks belong to an open file, so two DeviceLock objects in one process contend exactly as two
// processes do.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "driver/model/errors.hpp"
#include "driver/run/device_lock.hpp"

namespace roofprobe {
namespace {

namespace fs = std::filesystem;

class DeviceLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "roofprobe_locks_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    ::setenv("ROOFPROBE_LOCK_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("ROOFPROBE_LOCK_DIR");
    fs::remove_all(dir_);
  }
  std::string dir_;
};

TEST_F(DeviceLockTest, ASecondRunWithNoWaitIsRefusedNamingTheRunInTheWay) {
  DeviceLockOptions first;
  first.run = "results/host/cpu/first";
  auto held = std::make_unique<DeviceLock>("cpu-node1", "the CPU of node1", first);
  LockHolder holder;
  ASSERT_TRUE(device_lock_holder("cpu-node1", &holder));
  EXPECT_EQ(holder.pid, ::getpid());
  EXPECT_EQ(holder.run, "results/host/cpu/first");
  EXPECT_FALSE(holder.user.empty());
  EXPECT_FALSE(holder.started.empty());

  DeviceLockOptions second;
  second.wait = false;
  try {
    DeviceLock again("cpu-node1", "the CPU of node1", second);
    FAIL() << "a second lock of one device was granted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("the CPU of node1 is in use by run results/host/cpu/first (pid " + std::to_string(::getpid()) +
                             ", user ",
                         0),
              0u)
        << what;
    EXPECT_NE(what.find("--no-wait refuses to wait"), std::string::npos) << what;
  }
  held.reset();  // released: the next run gets it
  EXPECT_FALSE(device_lock_holder("cpu-node1", nullptr));
  DeviceLock next("cpu-node1", "the CPU of node1", second);
  // Another device's lock is independent.
  DeviceLock gpu("gpu-GPU-1234", "GPU 0", second);
}

TEST_F(DeviceLockTest, AWaitingRunSaysForWhomAndStopsWhenAskedTo) {
  DeviceLockOptions first;
  first.run = "first-run";
  DeviceLock held("gpu-GPU-abc", "GPU 0 (GPU-abc)", first);
  DeviceLockOptions second;
  std::vector<std::string> reports;
  second.report = [&](const std::string& line) { reports.push_back(line); };
  second.give_up = [&] { return !reports.empty(); };  // a stop signal after the first report
  try {
    DeviceLock waiting("gpu-GPU-abc", "GPU 0 (GPU-abc)", second);
    FAIL() << "the lock was granted while held";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("stopped while waiting for GPU 0 (GPU-abc), in use by run first-run", 0), 0u)
        << e.what();
  }
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].rfind("waiting for GPU 0 (GPU-abc): in use by run first-run (pid ", 0), 0u) << reports[0];
}

TEST_F(DeviceLockTest, TheDirectoryIsStickyAndWorldWritableAndTheFilesOpenToEveryUser) {
  DeviceLock held("cpu-node1", "the CPU", DeviceLockOptions{});
  struct stat st {};
  ASSERT_EQ(::stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 01777u);
  ASSERT_EQ(::stat(held.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u);
}

TEST_F(DeviceLockTest, ADirectoryOfTheUsersOwnKeepsItsMode) {
  fs::create_directories(dir_);
  ::chmod(dir_.c_str(), 0755);  // ROOFPROBE_LOCK_DIR naming a directory the user keeps
  { DeviceLock held("cpu-node1", "the CPU", DeviceLockOptions{}); }
  struct stat st {};
  ASSERT_EQ(::stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u) << "the lock never makes a user's directory world-writable";
  // A second lock opens the file the first one left, without creating it again.
  DeviceLock again("cpu-node1", "the CPU", DeviceLockOptions{});
  EXPECT_TRUE(fs::exists(again.path()));
}

TEST_F(DeviceLockTest, ALinkPlantedAsTheLockFileOrDirectoryIsRefused) {
  fs::create_directories(dir_);
  ::chmod(dir_.c_str(), 01777);
  fs::create_symlink(dir_ + "/victim", dir_ + "/cpu-node1.lock");
  EXPECT_THROW(DeviceLock("cpu-node1", "the CPU", DeviceLockOptions{}), InputError);
  EXPECT_FALSE(fs::exists(dir_ + "/victim"));
  fs::remove_all(dir_);
  fs::create_directories(dir_ + "-real");
  fs::create_directory_symlink(dir_ + "-real", dir_);
  EXPECT_THROW(DeviceLock("cpu-node1", "the CPU", DeviceLockOptions{}), InputError);
  fs::remove(dir_);
  fs::remove_all(dir_ + "-real");
}

TEST(DeviceLockName, AGpuByItsUuidTheCpuByItsHost) {
  DeviceInfo gpu;
  gpu.kind = "gpu";
  gpu.extra["uuid"] = "GPU-8a1b2c3d-0000-1111-2222-333344445555";
  EXPECT_EQ(device_lock_name(gpu, "node1"), "gpu-GPU-8a1b2c3d-0000-1111-2222-333344445555");
  gpu.extra.erase("uuid");
  gpu.extra["cuda_device"] = "3";
  EXPECT_EQ(device_lock_name(gpu, "node1"), "gpu-node1-3");
  DeviceInfo cpu;
  cpu.kind = "cpu";
  EXPECT_EQ(device_lock_name(cpu, ".."), "cpu-host");
  EXPECT_EQ(device_lock_name(cpu, "node1.cluster"), "cpu-node1.cluster");
}

}  // namespace
}  // namespace roofprobe

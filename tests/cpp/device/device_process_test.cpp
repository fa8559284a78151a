// Devices held by other processes (fork): a waiter with a timeout gives up
// after about the timeout, succeeds once the holder releases the device,
// and a killed holder releases it too. Children only attach, report through
// a pipe and wait; they leave with _exit so that no test machinery runs twice.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device_test_util.hpp"

namespace mrt {
namespace {

using device_test::errorOf;
using device_test::LockDir;
using device_test::managerIn;
using ::testing::HasSubstr;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A child process that attaches device `id`, writes 'y' (or 'n') to the
// parent, then waits for one byte from the parent and exits, detaching.
struct Holder {
  pid_t pid = -1;
  int toParent[2] = {-1, -1};
  int toChild[2] = {-1, -1};

  Holder(const LockDir &dir, std::int64_t id) {
    if (::pipe(toParent) != 0 || ::pipe(toChild) != 0) throw std::runtime_error("pipe failed");
    pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      char ok = 'n';
      try {
        auto device = managerIn(dir).tryGetSpecificDevice(id);
        ok = device ? 'y' : 'n';
        (void)!::write(toParent[1], &ok, 1);
        char go = 0;
        (void)!::read(toChild[0], &go, 1);
      } catch (...) {
        (void)!::write(toParent[1], &ok, 1);
      }
      ::_exit(0);
    }
  }
  bool attached() const {
    char ok = 0;
    return ::read(toParent[0], &ok, 1) == 1 && ok == 'y';
  }
  void release() const {
    const char go = 'g';
    (void)!::write(toChild[1], &go, 1);
  }
  void kill() const { ::kill(pid, SIGKILL); }
  ~Holder() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      int status = 0;
      ::waitpid(pid, &status, 0);
    }
    for (int fd : {toParent[0], toParent[1], toChild[0], toChild[1]}) ::close(fd);
  }
};

TEST(DeviceAcrossProcesses, AWaiterTimesOutWhileHeldAndSucceedsOnceReleased) {
  LockDir dir;
  const DeviceManager manager = managerIn(dir, 4);
  Holder holder(dir, 1);
  ASSERT_TRUE(holder.attached());

  const auto start = Clock::now();
  const Error error =
      errorOf([&] { manager.getSpecificDevice(1, DeviceOptions{}, DeviceWaitConfig(50ms, 5ms)); });
  EXPECT_GE(Clock::now() - start, 50ms);
  EXPECT_EQ(error.code(), ErrorCode::Unavailable);
  EXPECT_THAT(error.what(), HasSubstr("candidates 1 (IPU 1) busy"));
  EXPECT_THAT(error.what(), HasSubstr("busy: 1, 4, 6"));
  EXPECT_FALSE(manager.isFree(1));
  EXPECT_EQ(manager.getDevice(1)->id(), 0);  // other IPUs are unaffected

  holder.release();
  auto device = manager.getSpecificDevice(1, DeviceOptions{}, DeviceWaitConfig(10s, 2ms));
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(device->id(), 1);
}

TEST(DeviceAcrossProcesses, AKilledHolderReleasesTheDevice) {
  LockDir dir;
  const DeviceManager manager = managerIn(dir, 4);
  Holder holder(dir, 6);  // all four IPUs
  ASSERT_TRUE(holder.attached());
  EXPECT_EQ(manager.tryGetDevice(1), nullptr);

  std::thread killer([&] {
    std::this_thread::sleep_for(30ms);
    holder.kill();
  });
  auto device = manager.getDevice(4, {}, DeviceWaitConfig(DeviceWaitStrategy::WAIT_FOREVER, 0s, 2ms));
  killer.join();
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(device->id(), 6);
}

}  // namespace
}  // namespace mrt

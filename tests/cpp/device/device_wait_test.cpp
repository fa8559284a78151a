// Wait strategies against devices held and released by other threads.
// Timing is only asserted as a lower bound (a wait lasts at least its
// timeout); nothing asserts how fast a machine is.
#include <array>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

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

TEST(DeviceWait, WaitWithTimeoutWaitsAtLeastTheTimeoutThenNamesTheBusyDevice) {
  LockDir dir;
  const DeviceManager manager = managerIn(dir, 2);
  auto held = manager.getSpecificDevice(0);
  const DeviceWaitConfig wait(60ms, 5ms);

  auto start = Clock::now();
  const Error error = errorOf([&] { manager.getSpecificDevice(0, DeviceOptions{}, wait); });
  EXPECT_GE(Clock::now() - start, 60ms);
  EXPECT_EQ(error.code(), ErrorCode::Unavailable);
  EXPECT_THAT(error.what(), HasSubstr("cannot attach device 0 (IPU 0): candidates 0 (IPU 0) busy"));
  EXPECT_THAT(error.what(), HasSubstr("(WAIT_WITH_TIMEOUT, timeout 60 ms, retry every 5 ms)"));
  EXPECT_THAT(error.what(), ::testing::ContainsRegex("waited [0-9]+ ms"));

  start = Clock::now();
  EXPECT_EQ(manager.tryGetDevice(2, {}, wait), nullptr);  // the pair needs IPU 0 too
  EXPECT_GE(Clock::now() - start, 60ms);
  EXPECT_EQ(manager.tryGetSpecificDevice(1, DeviceOptions{}, wait)->id(), 1);  // free devices come at once
}

TEST(DeviceWait, WaitWithTimeoutSucceedsWhenTheDeviceIsReleasedInTime) {
  LockDir dir;
  const DeviceManager manager = managerIn(dir, 1);
  auto held = manager.getDevice(1);
  std::thread releaser([&] {
    std::this_thread::sleep_for(20ms);
    held.reset();
  });
  auto device = manager.getDevice(1, {}, DeviceWaitConfig(10s, 2ms));
  releaser.join();
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(device->id(), 0);
}

TEST(DeviceWait, WaitForeverSucceedsWhenAnotherThreadReleases) {
  LockDir dir;
  const DeviceManager manager = managerIn(dir, 2);
  auto held = manager.getSpecificDevice(2);  // both IPUs
  std::atomic<bool> released{false};
  std::thread releaser([&] {
    std::this_thread::sleep_for(30ms);
    released = true;
    held.reset();
  });
  auto device = manager.getDevice(1, {}, DeviceWaitConfig(DeviceWaitStrategy::WAIT_FOREVER, 0s, 2ms));
  EXPECT_TRUE(released.load());
  releaser.join();
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(device->numIpus(), 1);
}

TEST(DeviceWait, ConcurrentCallersNeverShareADevice) {
  LockDir dir;
  const DeviceManager manager = managerIn(dir, 4);
  constexpr int kThreads = 8;

  // Without waiting: exactly one caller per single-IPU device.
  std::vector<std::shared_ptr<Device>> got(kThreads);
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) threads.emplace_back([&, t] { got[t] = manager.tryGetDevice(1); });
    for (auto &thread : threads) thread.join();
  }
  std::vector<std::int64_t> ids;
  for (const auto &device : got) {
    if (device) ids.push_back(device->id());
  }
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::int64_t>{0, 1, 2, 3}));
  got.clear();

  // Waiting forever: everyone gets a turn, and no id is ever held twice.
  std::array<std::atomic<int>, 4> holders{};
  std::atomic<int> overlaps{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < 3; ++round) {
        auto device = manager.getDevice(1, {}, DeviceWaitConfig(DeviceWaitStrategy::WAIT_FOREVER, 0s, 1ms));
        auto &holder = holders[static_cast<std::size_t>(device->id())];
        if (holder.fetch_add(1) != 0) ++overlaps;
        std::this_thread::sleep_for(1ms);
        holder.fetch_sub(1);
      }
    });
  }
  for (auto &thread : threads) thread.join();
  EXPECT_EQ(overlaps.load(), 0);
  for (std::int64_t id = 0; id < 7; ++id) EXPECT_TRUE(manager.isFree(id)) << id;
}

}  // namespace
}  // namespace mrt

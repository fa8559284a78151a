// DeviceManager over the simulated pool: listing, getDevice/tryGetDevice by
// count and for a model, getSpecificDevice, busy devices, bad arguments, and
// that the manager stays usable after each error.
#include <cstdlib>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device_test_util.hpp"

namespace mrt {
namespace {

using device_test::addOneModel;
using device_test::errorOf;
using device_test::LockDir;
using device_test::managerIn;
using device_test::withDeviceOptions;
using ::testing::HasSubstr;

TEST(DeviceManager, ListsTheSimulatedSystem) {
  LockDir dir;
  const DeviceManager manager = managerIn(dir, 4);
  EXPECT_EQ(manager.ipuHardwareVersion(), 2);
  const auto &infos = manager.deviceInfos();
  ASSERT_EQ(infos.size(), 7u);  // 4 singles, 2 pairs, 1 quad
  std::vector<unsigned> sizes;
  for (const auto &info : infos) sizes.push_back(info.numIpus);
  EXPECT_EQ(sizes, (std::vector<unsigned>{1, 1, 1, 1, 2, 2, 4}));
  for (std::int64_t id = 0; id < 7; ++id) EXPECT_TRUE(manager.isFree(id)) << id;

  const DeviceManager c600 = managerIn(dir, 2, hwsim::IpuVersion::Ipu21);
  EXPECT_EQ(c600.ipuHardwareVersion(), 21);
  EXPECT_EQ(c600.deviceInfos().size(), 3u);
  EXPECT_EQ(c600.deviceInfos()[0].target.name, "C600");
}

TEST(DeviceManager, ASystemWithoutIpus) {
  LockDir dir;
  const DeviceManager manager = managerIn(dir, 0);
  EXPECT_EQ(manager.ipuHardwareVersion(), 0);
  EXPECT_TRUE(manager.deviceInfos().empty());
  const Error error = errorOf([&] { manager.getDevice(1); });
  EXPECT_EQ(error.code(), ErrorCode::Unavailable);
  EXPECT_THAT(error.what(), HasSubstr("the system has no IPUs"));
  EXPECT_EQ(manager.tryGetDevice(1), nullptr);
  EXPECT_EQ(errorOf([&] { manager.getSpecificDevice(0); }).code(), ErrorCode::NotFound);
}

TEST(DeviceManager, TheEnvironmentDescribesTheSystem) {
  LockDir dir;
  ::setenv("MRT_HWSIM_LOCK_DIR", dir.path().c_str(), 1);
  ::setenv("MRT_HWSIM_IPUS", "2x21", 1);
  const DeviceManager c600;
  EXPECT_EQ(c600.ipuHardwareVersion(), 21);
  EXPECT_EQ(c600.deviceInfos().size(), 3u);
  {
    auto device = c600.getDevice(2);
    EXPECT_EQ(device->ipuVersion(), 21);
    EXPECT_TRUE(std::filesystem::exists(dir.path() + "/ipu1.lock"));  // the locks live in our directory
  }
  ::setenv("MRT_HWSIM_IPUS", "0", 1);
  EXPECT_EQ(DeviceManager().ipuHardwareVersion(), 0);
  ::setenv("MRT_HWSIM_IPUS", "lots", 1);
  const Error error = errorOf([] { DeviceManager(); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(error.what(), HasSubstr("MRT_HWSIM_IPUS 'lots'"));
  ::unsetenv("MRT_HWSIM_IPUS");
  ::unsetenv("MRT_HWSIM_LOCK_DIR");
}

// Managers made one after another for one system share its description
// (the most recent configuration's is kept); one in another lock directory
// is another system, whose devices are all free, and the first system's
// are still held.
TEST(DeviceManager, EachLockDirectoryIsASystemOfItsOwn) {
  LockDir first, second;
  const DeviceManager a = managerIn(first, 4);
  const auto held = a.getDevice(1);
  EXPECT_EQ(held->id(), 0);
  const DeviceManager b = managerIn(second, 4);
  EXPECT_TRUE(b.isFree(0));
  EXPECT_EQ(b.getDevice(1)->id(), 0);
  const DeviceManager again = managerIn(first, 4);
  EXPECT_FALSE(again.isFree(0));
  EXPECT_EQ(again.getDevice(1)->id(), 1);
  EXPECT_EQ(&managerIn(first, 4).deviceInfos(), &again.deviceInfos());  // the same description
  const DeviceManager eight = managerIn(first, 8);
  EXPECT_EQ(eight.deviceInfos().size(), 15u);
  EXPECT_EQ(a.deviceInfos().size(), 7u);  // a manager keeps the system it was made for
}

// The lock directory is made at the first attach that needs it, with its
// missing parents.
TEST(DeviceManager, AMissingLockDirectoryIsMade) {
  LockDir dir;
  hwsim::SystemConfig config;
  config.numIpus = 2;
  config.lockDirectory = dir.path() + "/not/yet";
  const DeviceManager manager(config);
  EXPECT_TRUE(manager.isFree(1));
  const auto device = manager.getDevice(2);
  EXPECT_TRUE(std::filesystem::exists(config.lockDirectory + "/ipu1.lock"));
  EXPECT_FALSE(manager.isFree(1));
}

TEST(DeviceManager, AnUnusableLockDirectoryIsUnavailable) {
  hwsim::SystemConfig config;
  config.lockDirectory = "/proc/mrt-device-test/locks";  // nobody can create directories in /proc
  const DeviceManager manager(config);
  const Error error = errorOf([&] { manager.getDevice(1); });
  EXPECT_EQ(error.code(), ErrorCode::Unavailable);
  EXPECT_THAT(error.what(), HasSubstr("/proc/mrt-device-test"));
  EXPECT_EQ(errorOf([&] { manager.tryGetSpecificDevice(0); }).code(), ErrorCode::Unavailable);
}

TEST(DeviceManager, GetDeviceAttachesFreeDevicesExclusively) {
  LockDir dir;
  const DeviceManager manager = managerIn(dir, 4);
  auto first = manager.getDevice(1);
  auto second = manager.getDevice(1);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(first->id(), 0);
  EXPECT_EQ(second->id(), 1);
  EXPECT_EQ(first->numIpus(), 1);
  EXPECT_EQ(first->ipuVersion(), 2);
  EXPECT_FALSE(first->isIpuModel());
  EXPECT_TRUE(first->device().isAttached());
  EXPECT_EQ(first->device().getTarget().tilesPerIpu, 1472u);
  EXPECT_FALSE(manager.isFree(0));
  EXPECT_FALSE(manager.isFree(4));  // the pair of IPUs 0 and 1
  EXPECT_TRUE(manager.isFree(2));

  // IPUs 0 and 1 are held, so the only free pair is device 5 (IPUs 2, 3).
  auto pair = manager.getDevice(2);
  EXPECT_EQ(pair->id(), 5);
  EXPECT_EQ(pair->device().ipus(), (std::vector<unsigned>{2, 3}));

  first.reset();  // detaches
  EXPECT_TRUE(manager.isFree(0));
  EXPECT_EQ(manager.getDevice(1)->id(), 0);
}

TEST(DeviceManager, BusyDevicesGiveUnavailableNamingThem) {
  LockDir dir;
  const DeviceManager manager = managerIn(dir, 2);
  auto a = manager.getDevice(1);
  auto b = manager.getDevice(1);
  EXPECT_EQ(manager.tryGetDevice(1), nullptr);
  const Error error = errorOf([&] { manager.getDevice(1); });
  EXPECT_EQ(error.code(), ErrorCode::Unavailable);
  EXPECT_THAT(error.what(), HasSubstr("cannot attach a device of 1 IPU"));
  EXPECT_THAT(error.what(), HasSubstr("candidates 0 (IPU 0) busy, 1 (IPU 1) busy"));
  EXPECT_THAT(error.what(), HasSubstr("did not wait (NO_WAIT)"));
  EXPECT_THAT(error.what(),
              HasSubstr("system: 2 IPUs of version 2 (GC200) as devices 0-1 (1 IPU each), 2 (2 IPUs)"));
  EXPECT_THAT(error.what(), HasSubstr("busy: 0, 1, 2"));

  const Error pair = errorOf([&] { manager.getDevice(2); });
  EXPECT_EQ(pair.code(), ErrorCode::Unavailable);
  EXPECT_THAT(pair.what(), HasSubstr("candidates 2 (IPUs 0-1) busy"));

  b.reset();
  auto again = manager.getDevice(1);
  EXPECT_EQ(again->id(), 1);
}

TEST(DeviceManager, SizesTheSystemDoesNotHaveFailAtOnceEvenWhenWaiting) {
  LockDir dir;
  const DeviceManager manager = managerIn(dir, 4);
  const Error error =
      errorOf([&] { manager.getDevice(8, {}, DeviceWaitConfig(DeviceWaitStrategy::WAIT_FOREVER)); });
  EXPECT_EQ(error.code(), ErrorCode::Unavailable);
  EXPECT_THAT(error.what(), HasSubstr("the system has no device of 8 IPUs"));
  EXPECT_EQ(manager.tryGetDevice(8, {}, DeviceWaitConfig(DeviceWaitStrategy::WAIT_FOREVER)), nullptr);
}

TEST(DeviceManager, SpecificDevicesById) {
  LockDir dir;
  const DeviceManager manager = managerIn(dir, 4);
  auto three = manager.getSpecificDevice(3);
  EXPECT_EQ(three->id(), 3);
  EXPECT_EQ(three->device().ipus(), (std::vector<unsigned>{3}));
  EXPECT_EQ(manager.tryGetSpecificDevice(3), nullptr);
  EXPECT_EQ(manager.tryGetSpecificDevice(5), nullptr);  // IPUs 2 and 3
  const Error busy = errorOf([&] { manager.getSpecificDevice(6); });
  EXPECT_EQ(busy.code(), ErrorCode::Unavailable);
  EXPECT_THAT(busy.what(), HasSubstr("cannot attach device 6 (IPUs 0-3): candidates 6 (IPUs 0-3) busy"));
  EXPECT_THAT(busy.what(), HasSubstr("busy: 3, 5, 6"));

  for (std::int64_t bad : {std::int64_t{7}, std::int64_t{-1}, std::int64_t{1} << 40}) {
    const Error missing = errorOf([&] { manager.getSpecificDevice(bad); });
    EXPECT_EQ(missing.code(), ErrorCode::NotFound) << bad;
    EXPECT_THAT(missing.what(), HasSubstr(fmt::format("no device {}: system: 4 IPUs", bad)));
    EXPECT_EQ(errorOf([&] { manager.tryGetSpecificDevice(bad); }).code(), ErrorCode::NotFound);
    EXPECT_EQ(errorOf([&] { manager.isFree(bad); }).code(), ErrorCode::NotFound);
  }
  EXPECT_EQ(manager.getSpecificDevice(2)->id(), 2);  // still usable
}

TEST(DeviceManager, BadArgumentsAreRejectedAndTheManagerStaysUsable) {
  LockDir dir;
  const DeviceManager manager = managerIn(dir, 4);
  for (std::int64_t count : {0, -1}) {
    const Error error = errorOf([&] { manager.getDevice(count); });
    EXPECT_EQ(error.code(), ErrorCode::InvalidArgument) << count;
    EXPECT_THAT(error.what(), HasSubstr(fmt::format("num_ipus must be at least 1 (got {})", count)));
    EXPECT_EQ(errorOf([&] { manager.tryGetDevice(count); }).code(), ErrorCode::InvalidArgument);
  }
  for (std::int64_t count : {3, 6}) {
    const Error error = errorOf([&] { manager.getDevice(count); });
    EXPECT_EQ(error.code(), ErrorCode::InvalidArgument) << count;
    EXPECT_THAT(error.what(), HasSubstr(fmt::format("num_ipus {} is not a power of two", count)));
    EXPECT_EQ(errorOf([&] { manager.tryGetDevice(count); }).code(), ErrorCode::InvalidArgument);
  }
  const Error unknown = errorOf([&] { manager.getDevice(1, {{"ipuLinkDomainSize", "4"}, {"bogus", "1"}}); });
  EXPECT_EQ(unknown.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(unknown.what(), HasSubstr("unknown device option 'bogus'"));
  const Error badValue = errorOf([&] { manager.getSpecificDevice(0, {{"ipuLinkTopology", "ring"}}); });
  EXPECT_EQ(badValue.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(badValue.what(),
              HasSubstr("device option 'ipuLinkTopology': 'ring' is not one of mesh, torus"));
  EXPECT_EQ(errorOf([&] {
              manager.getDevice(1, {{"ipuLinkDomainSize", "0"}});
            }).code(),
            ErrorCode::InvalidArgument);
  const Error negative =
      errorOf([&] { manager.getDevice(1, {}, DeviceWaitConfig(std::chrono::milliseconds(-1))); });
  EXPECT_EQ(negative.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(negative.what(), HasSubstr("timeout must not be negative"));
  const Error negativeSleep = errorOf([&] {
    manager.getDevice(1, {},
                      DeviceWaitConfig(DeviceWaitStrategy::WAIT_FOREVER, {}, std::chrono::seconds(-1)));
  });
  EXPECT_THAT(negativeSleep.what(), HasSubstr("sleep time must not be negative"));

  // Nothing was attached by the failed calls; good options are accepted.
  for (std::int64_t id = 0; id < 7; ++id) EXPECT_TRUE(manager.isFree(id)) << id;
  auto device = manager.getDevice(
      2,
      {{"ipuLinkDomainSize", "64"}, {"ipuLinkConfiguration", "slidingWindow"}, {"ipuLinkTopology", "torus"}},
      {}, DeviceConstraints(true));
  EXPECT_EQ(device->numIpus(), 2);
  EXPECT_TRUE(device->supportsRemoteBuffers());
}

TEST(DeviceManager, DevicesForAModel) {
  LockDir dir;
  const DeviceManager manager = managerIn(dir, 4);
  auto one = manager.getDevice(addOneModel(1));
  EXPECT_EQ(one->numIpus(), 1);
  EXPECT_EQ(one->id(), 0);
  auto two = manager.getDevice(addOneModel(2));
  EXPECT_EQ(two->numIpus(), 2);
  EXPECT_EQ(two->id(), 5);

  example_models::ExampleOptions remote;
  remote.tiles = 4;
  auto remoteDevice = manager.getDevice(example_models::buildExampleModel("remote_buffer", remote));
  EXPECT_EQ(remoteDevice->id(), 1);

  // The quad overlaps both held pairs' IPUs.
  const auto four = addOneModel(4);
  EXPECT_EQ(manager.tryGetDevice(four), nullptr);
  const Error busy = errorOf([&] { manager.getDevice(four); });
  EXPECT_EQ(busy.code(), ErrorCode::Unavailable);
  EXPECT_THAT(busy.what(), HasSubstr("cannot attach a device of 4 IPUs for model 'add_one'"));
}

TEST(DeviceManager, AModelForAnotherIpuVersionSaysSo) {
  LockDir dir;
  const auto c600Model = addOneModel(1, 21);
  const DeviceManager mk2 = managerIn(dir, 4);
  const Error error =
      errorOf([&] { mk2.getDevice(c600Model, DeviceWaitConfig(DeviceWaitStrategy::WAIT_FOREVER)); });
  EXPECT_EQ(error.code(), ErrorCode::Unavailable);
  EXPECT_THAT(error.what(), HasSubstr("the model needs IPU version 21, but the system's IPUs are version 2"));
  EXPECT_EQ(mk2.tryGetDevice(c600Model), nullptr);
  EXPECT_EQ(errorOf([&] { mk2.getSpecificDevice(0, c600Model); }).code(), ErrorCode::Unavailable);
  EXPECT_EQ(mk2.tryGetSpecificDevice(0, c600Model), nullptr);

  const DeviceManager c600 = managerIn(dir, 4, hwsim::IpuVersion::Ipu21);
  auto device = c600.getDevice(c600Model);
  EXPECT_EQ(device->ipuVersion(), 21);
  EXPECT_EQ(device->device().getTarget().name, "C600");
}

TEST(DeviceManager, ModelDeviceOptionsAreChecked) {
  LockDir dir;
  const DeviceManager manager = managerIn(dir, 4);
  const auto good = withDeviceOptions(*addOneModel(), {{"ipuLinkDomainSize", "4"}});
  EXPECT_EQ(manager.getDevice(good)->id(), 0);
  const auto bad = withDeviceOptions(*addOneModel(), {{"numIpus", "1"}});
  const Error error = errorOf([&] { manager.getDevice(bad); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(error.what(), HasSubstr("model 'add_one': unknown device option 'numIpus'"));
  EXPECT_EQ(errorOf([&] { manager.tryGetSpecificDevice(1, bad); }).code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(errorOf([&] { manager.getDevice(std::shared_ptr<const popef::Model>()); }).code(),
            ErrorCode::InvalidArgument);
}

TEST(DeviceManager, SpecificDeviceForAModel) {
  LockDir dir;
  const DeviceManager manager = managerIn(dir, 4);
  const auto two = addOneModel(2);
  const Error small = errorOf([&] { manager.getSpecificDevice(0, two); });
  EXPECT_EQ(small.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(small.what(), HasSubstr("model 'add_one': needs 2 IPUs, but device 0 has 1 IPU"));
  auto device = manager.getSpecificDevice(4, two);
  EXPECT_EQ(device->id(), 4);
  EXPECT_EQ(manager.tryGetSpecificDevice(6, two), nullptr);  // the quad holds IPUs 0 and 1 too
  const Error busy = errorOf([&] { manager.getSpecificDevice(4, two); });
  EXPECT_EQ(busy.code(), ErrorCode::Unavailable);
  EXPECT_THAT(busy.what(), HasSubstr("cannot attach device 4 (IPUs 0-1) for model 'add_one'"));
}

}  // namespace
}  // namespace mrt

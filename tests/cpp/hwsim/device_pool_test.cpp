// The simulated IPU system: device ids and groups, exclusive attach across
// processes (fork), release when the holder is killed, and the free query.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>

#include "hwsim/device.hpp"
#include "hwsim/error.hpp"

namespace {

class DevicePool : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "hwsim_locks_" + std::to_string(::getpid());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  hwsim::DeviceManager manager(unsigned ipus = 4) {
    hwsim::SystemConfig c;
    c.numIpus = ipus;
    c.lockDirectory = dir_;
    return hwsim::DeviceManager(c);
  }
  std::string dir_;
};

TEST_F(DevicePool, IdsCoverSinglesAndPowerOfTwoGroups) {
  const auto infos = manager(4).getDeviceInfos();
  ASSERT_EQ(infos.size(), 7u);  // 4 singles, 2 pairs, 1 quad
  EXPECT_EQ(infos[4].ipus, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(infos[5].ipus, (std::vector<unsigned>{2, 3}));
  EXPECT_EQ(infos[6].numIpus, 4u);
  EXPECT_EQ(infos[6].target.numIpus, 4u);
  EXPECT_EQ(infos[6].target.tilesPerIpu, 1472u);
  EXPECT_EQ(manager(8).getDevices(2).size(), 4u);
}

TEST_F(DevicePool, ConfigParsing) {
  auto c = hwsim::SystemConfig::parse("2x21");
  EXPECT_EQ(c.numIpus, 2u);
  EXPECT_EQ(c.ipuVersion, hwsim::IpuVersion::Ipu21);
  EXPECT_EQ(hwsim::SystemConfig::parse("8").numIpus, 8u);
  EXPECT_EQ(hwsim::SystemConfig::parse("8").ipuVersion, hwsim::IpuVersion::Ipu2);
  EXPECT_THROW(hwsim::SystemConfig::parse("x"), hwsim::Error);
  EXPECT_THROW(hwsim::SystemConfig::parse("2x3"), hwsim::Error);
  EXPECT_THROW(hwsim::SystemConfig::parse("0"), hwsim::Error);
  hwsim::SystemConfig c21;
  c21.numIpus = 2;
  c21.ipuVersion = hwsim::IpuVersion::Ipu21;
  c21.lockDirectory = dir_;
  EXPECT_EQ(hwsim::DeviceManager(c21).getDevice(0).getTarget().name, "C600");
}

TEST_F(DevicePool, AttachIsExclusiveWithinAProcessAndGroupsOverlap) {
  auto m = manager();
  auto a = m.getDevice(0);
  auto b = m.getDevice(0);
  auto pair = m.getDevice(4);  // IPUs 0 and 1
  ASSERT_TRUE(a.attach());
  EXPECT_FALSE(b.attach());
  EXPECT_FALSE(pair.attach());
  EXPECT_FALSE(m.isFree(0));
  EXPECT_FALSE(m.isFree(4));
  EXPECT_TRUE(m.isFree(1));
  EXPECT_EQ(m.getFreeDeviceIds(), (std::vector<unsigned>{1, 2, 3, 5}));
  a.detach();
  EXPECT_TRUE(pair.attach());
  EXPECT_FALSE(m.getDevice(1).attach());
  EXPECT_THROW(m.getDevice(99), hwsim::Error);
}

TEST_F(DevicePool, TwoProcessesCannotAttachTheSameIpuAndAKilledHolderReleasesIt) {
  int toParent[2];
  ASSERT_EQ(::pipe(toParent), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto dev = manager().getDevice(2);
    const char ok = dev.attach() ? 'y' : 'n';
    (void)!::write(toParent[1], &ok, 1);
    for (;;) ::pause();  // hold the IPU until killed
  }
  char ok = 0;
  ASSERT_EQ(::read(toParent[0], &ok, 1), 1);
  ASSERT_EQ(ok, 'y');
  auto m = manager();
  auto dev = m.getDevice(2);
  EXPECT_FALSE(dev.attach());
  EXPECT_FALSE(m.isFree(2));
  EXPECT_FALSE(m.getDevice(5).attach());  // the pair holding IPU 2
  EXPECT_TRUE(m.getDevice(3).attach());
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(m.isFree(2));
  EXPECT_TRUE(dev.attach());
  ::close(toParent[0]);
  ::close(toParent[1]);
}

TEST_F(DevicePool, ResetClearsThePendingRecovery) {
  auto dev = manager().getDevice(1);
  EXPECT_EQ(dev.pendingRecovery(), hwsim::RecoveryAction::None);
  EXPECT_THROW(dev.reset(), hwsim::Error);  // not attached
  ASSERT_TRUE(dev.attach());
  dev.reset();
  EXPECT_EQ(dev.pendingRecovery(), hwsim::RecoveryAction::None);
}

}  // namespace

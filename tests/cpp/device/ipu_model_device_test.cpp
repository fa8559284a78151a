// IPU Model devices: outside the pool, never busy, with the requested
// architecture, IPU count and tiles; from numbers or from a model.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <hwsim/executable.hpp>

#include "device_test_util.hpp"

namespace mrt {
namespace {

using device_test::addOneModel;
using device_test::errorOf;
using device_test::LockDir;
using device_test::managerIn;
using ::testing::HasSubstr;

TEST(IpuModelDevice, HasTheRequestedShapeAndLeavesThePoolAlone) {
  LockDir dir;
  const DeviceManager manager = managerIn(dir, 4);
  auto device = manager.createIpuModelDevice(2, 21, 8);
  EXPECT_TRUE(device->isIpuModel());
  EXPECT_EQ(device->id(), -1);
  EXPECT_EQ(device->numIpus(), 2);
  EXPECT_EQ(device->ipuVersion(), 21);
  const hwsim::Target &target = device->device().getTarget();
  EXPECT_EQ(target.ipuVersion, hwsim::IpuVersion::Ipu21);
  EXPECT_EQ(target.tilesPerIpu, 8u);
  EXPECT_EQ(target.numIpus, 2u);
  EXPECT_TRUE(device->device().isAttached());
  auto another = manager.createIpuModelDevice(2, 21, 8);  // never busy
  EXPECT_TRUE(another->device().isAttached());
  for (std::int64_t id = 0; id < 7; ++id) EXPECT_TRUE(manager.isFree(id)) << id;

  auto defaults = manager.createIpuModelDevice(1);
  EXPECT_EQ(defaults->ipuVersion(), 2);
  EXPECT_EQ(defaults->device().getTarget().tilesPerIpu, 1472u);
}

TEST(IpuModelDevice, SmallModelsHaveFourTiles) {
  LockDir dir;
  const DeviceManager manager = managerIn(dir, 4);
  auto mk2 = manager.createSmallIpuModelDevice(1);
  EXPECT_EQ(mk2->device().getTarget().tilesPerIpu, 4u);
  EXPECT_EQ(mk2->device().getTarget().name, "IPU-Model small");
  EXPECT_EQ(mk2->ipuVersion(), 2);
  auto c600 = manager.createSmallIpuModelDevice(4, 21);
  EXPECT_EQ(c600->device().getTarget().tilesPerIpu, 4u);
  EXPECT_EQ(c600->numIpus(), 4);
  EXPECT_EQ(c600->ipuVersion(), 21);
}

TEST(IpuModelDevice, FromAModel) {
  LockDir dir;
  const DeviceManager manager = managerIn(dir, 4);
  const auto model = addOneModel(2, 21);
  auto full = manager.createIpuModelDevice(model);
  EXPECT_EQ(full->numIpus(), 2);
  EXPECT_EQ(full->ipuVersion(), 21);
  EXPECT_EQ(full->device().getTarget().tilesPerIpu, 1472u);
  auto tiles = manager.createIpuModelDevice(model, 4);
  EXPECT_EQ(tiles->device().getTarget().tilesPerIpu, 4u);
  auto small = manager.createSmallIpuModelDevice(model);
  EXPECT_EQ(small->numIpus(), 2);
  EXPECT_EQ(small->ipuVersion(), 21);
  // The model was compiled for 4 tiles per IPU of version 21: the small device
  // can load its executable, the full-size one cannot.
  const auto bytes = model->executable().bytes();
  const hwsim::Executable exe = hwsim::Executable::deserialize(bytes.data(), bytes.size());
  EXPECT_TRUE(hwsim::isCompatible(exe.target(), small->device().getTarget()));
  EXPECT_FALSE(hwsim::isCompatible(exe.target(), full->device().getTarget()));
  EXPECT_EQ(errorOf([&] { manager.createSmallIpuModelDevice(std::shared_ptr<const popef::Model>()); }).code(),
            ErrorCode::InvalidArgument);
}

TEST(IpuModelDevice, BadArguments) {
  LockDir dir;
  const DeviceManager manager = managerIn(dir, 4);
  const Error ipus = errorOf([&] { manager.createIpuModelDevice(0); });
  EXPECT_EQ(ipus.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(ipus.what(), HasSubstr("num_ipus must be between 1 and 256 (got 0)"));
  const Error version = errorOf([&] { manager.createSmallIpuModelDevice(1, 3); });
  EXPECT_EQ(version.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(version.what(), HasSubstr("ipu_version 3 is not 2 (Mk2) or 21 (C600)"));
  for (std::int64_t tiles : {-1, 1473}) {
    const Error error = errorOf([&] { manager.createIpuModelDevice(1, 2, tiles); });
    EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
    EXPECT_THAT(error.what(),
                HasSubstr(fmt::format("tiles_per_ipu {} is out of range: 0 (the default) to 1472", tiles)));
  }
  EXPECT_EQ(manager.createIpuModelDevice(1, 2, 1472)->device().getTarget().tilesPerIpu, 1472u);
}

}  // namespace
}  // namespace mrt

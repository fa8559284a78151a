// The active-session slot of a Device, which Session uses to switch two
// sessions sharing one device: the displaced session is told first.
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "device_test_util.hpp"

namespace mrt {
namespace {

using device_test::LockDir;
using device_test::managerIn;

TEST(SessionSlot, BindingASecondSessionDisplacesTheFirst) {
  LockDir dir;
  auto device = managerIn(dir).createSmallIpuModelDevice(1);
  int first = 0;
  int second = 0;
  std::vector<std::string> events;
  EXPECT_FALSE(device->isActiveSession(&first));
  EXPECT_FALSE(device->isActiveSession(nullptr));

  device->bindToSession(&first, [&] {
    // The displaced session still sees itself active, and may unbind itself.
    events.push_back(device->isActiveSession(&first) ? "first displaced while active" : "first displaced");
    device->unbindSession();
  });
  EXPECT_TRUE(device->isActiveSession(&first));
  device->bindToSession(&first,
                        [&] { events.push_back("first displaced (new callback)"); });  // rebind: no call
  EXPECT_TRUE(events.empty());

  device->bindToSession(&second, [&] { events.push_back("second displaced"); });
  EXPECT_EQ(events, (std::vector<std::string>{"first displaced (new callback)"}));
  EXPECT_FALSE(device->isActiveSession(&first));
  EXPECT_TRUE(device->isActiveSession(&second));

  device->unbindSession();  // the session leaves on its own: no callback
  EXPECT_FALSE(device->isActiveSession(&second));
  device->bindToSession(&first);
  EXPECT_EQ(events.size(), 1u);
  EXPECT_TRUE(device->isActiveSession(&first));
}

TEST(SessionSlot, AFailingDisplacedSessionStaysActive) {
  LockDir dir;
  auto device = managerIn(dir).createSmallIpuModelDevice(1);
  int first = 0;
  int second = 0;
  device->bindToSession(&first, [] { throw std::runtime_error("save failed"); });
  EXPECT_THROW(device->bindToSession(&second), std::runtime_error);
  EXPECT_TRUE(device->isActiveSession(&first));
  EXPECT_FALSE(device->isActiveSession(&second));
  EXPECT_THROW(device->bindToSession(nullptr), Error);
}

}  // namespace
}  // namespace mrt

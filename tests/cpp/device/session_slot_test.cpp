// The active-session slot of a Device, which Session uses to switch two
// sessions sharing one device: the displaced session is told first.
#include <stdexcept>
#include <string>
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
    device->unbindSession(&first);
  });
  EXPECT_TRUE(device->isActiveSession(&first));
  device->bindToSession(&first,
                        [&] { events.push_back("first displaced (new callback)"); });  // rebind: no call
  EXPECT_TRUE(events.empty());

  device->bindToSession(&second, [&] { events.push_back("second displaced"); });
  EXPECT_EQ(events, (std::vector<std::string>{"first displaced (new callback)"}));
  EXPECT_FALSE(device->isActiveSession(&first));
  EXPECT_TRUE(device->isActiveSession(&second));

  device->unbindSession(&second);  // the session leaves on its own: no callback
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

// Models fused into one executable each run on their own tiles: their
// sessions share the device; anything else displaces all of them.
TEST(SessionSlot, SessionsOfModelsFusedTogetherCoexist) {
  LockDir dir;
  auto device = managerIn(dir).createSmallIpuModelDevice(1);
  int a = 0, b = 0, a2 = 0, plain = 0;
  std::vector<std::string> events;
  device->bindToSession(&a, [&] { events.push_back("a displaced"); }, {"a+b#1", "a"});
  device->bindToSession(&b, [&] { events.push_back("b displaced"); }, {"a+b#1", "b"});
  EXPECT_TRUE(device->isActiveSession(&a));
  EXPECT_TRUE(device->isActiveSession(&b));
  EXPECT_TRUE(events.empty());
  // A second session of model a has the same tiles as the first: a and b go.
  device->bindToSession(&a2, [&] { events.push_back("a2 displaced"); }, {"a+b#1", "a"});
  EXPECT_EQ(events, (std::vector<std::string>{"a displaced", "b displaced"}));
  EXPECT_FALSE(device->isActiveSession(&a));
  EXPECT_FALSE(device->isActiveSession(&b));
  EXPECT_TRUE(device->isActiveSession(&a2));
  // Model b of another fused executable does not coexist with a2 either.
  device->bindToSession(&b, {}, {"a+b#2", "b"});
  EXPECT_FALSE(device->isActiveSession(&a2));
  // Leaving touches only the session that leaves.
  device->bindToSession(&a, {}, {"a+b#2", "a"});
  device->unbindSession(&b);
  EXPECT_TRUE(device->isActiveSession(&a));
  EXPECT_FALSE(device->isActiveSession(&b));
  // A model of its own displaces fused sessions (and they it).
  device->bindToSession(&plain);
  EXPECT_FALSE(device->isActiveSession(&a));
  device->bindToSession(&b, {}, {"a+b#2", "b"});
  EXPECT_FALSE(device->isActiveSession(&plain));
}

}  // namespace
}  // namespace mrt

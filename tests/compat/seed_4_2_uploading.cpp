// The seed's User Guide, section 4.2 "Uploading your model to the IPU", as
// one program: an Immediate session, a Deferred one bound to a device from
// DeviceManager, unloadFromDevice() and reload(). Seed lines are marked
// "seed:", what the seed elides "filled:".
#include <cstring>

#include "compat_test_util.hpp"
#include "model_runtime/ModelRuntime.hpp"

using compat_test::require;

namespace {

// filled: one add_one round through the session's callbacks; returns y.
std::vector<float> addOne(model_runtime::Session &session, const std::vector<float> &x) {
  std::vector<float> y(x.size());
  session.setCallbackForAnchor("x", [&x](void *dest) { std::memcpy(dest, x.data(), x.size() * sizeof(float)); });
  session.setCallbackForAnchor("y", [&y](void *src) { std::memcpy(y.data(), src, y.size() * sizeof(float)); });
  session.runMainPrograms();
  return y;
}

void requireAddOne(model_runtime::Session &session, float value, const char *what) {
  const std::vector<float> y = addOne(session, std::vector<float>(compat_test::kAddOneN, value));
  for (float v : y) require(v == value + 1.0f, what);
}

}  // namespace

int main() {
  compat_test::usePrivateSystem();
  // filled: "Assuming there is a model (popef::Model) prepared/loaded in advance"
  std::shared_ptr<popef::Model> model = popef::createModel({compat_test::modelPath("add_one")});
  {
    // seed:
    model_runtime::SessionConfig config{model_runtime::LaunchPolicy::Immediate};
    model_runtime::Session session(model, config);
    requireAddOne(session, 1.0f, "an Immediate session runs add_one");
  }
  {
    // seed:
    model_runtime::DeviceManager devices;

    // Acquire a device suitable for the model
    auto device = devices.getDevice(model);

    // Create Session object, by default in deferred device creation mode
    model_runtime::Session session(model);

    // Explicitly bind the session to the device
    session.bindToDevice(device);  // filled: the seed's line is lost
    requireAddOne(session, 2.0f, "a Deferred session bound to a device runs add_one");

    // seed: "Assuming there is a session (Session) already created and the user provided device"
    session.unloadFromDevice();  // unload the session from the device
    bool refused = false;        // filled: an unloaded session runs nothing
    try {
      session.runMainPrograms();
    } catch (const std::runtime_error &) {
      refused = true;
    }
    require(refused, "an unloaded session refuses to run");
    session.reload();  // rebind the session to the device and reload the executable
    requireAddOne(session, 3.0f, "a reloaded session runs add_one");

    // filled: the same device again, and unloading twice throws.
    session.bindToDevice(device);
    requireAddOne(session, 4.0f, "rebinding to the same device");
    session.unloadFromDevice();
    refused = false;
    try {
      session.unloadFromDevice();
    } catch (const std::runtime_error &) {
      refused = true;
    }
    require(refused, "unloadFromDevice throws when the session is not bound");
  }
  std::printf("4.2: Immediate, Deferred, unload and reload ran add_one\n");
  return 0;
}

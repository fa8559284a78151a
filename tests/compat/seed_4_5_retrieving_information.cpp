// The seed's User Guide, section 4.5 "Retrieving information from a
// session", as one program: user output anchors, a buffer per output, a
// CallbackFactory writing each output to its slot, and the unbound-anchor
// checks. Seed lines are marked "seed:", what the seed elides "filled:",
// fixes to its text "fixed:".
#include <array>
#include <cstddef>
#include <cstring>

#include "compat_test_util.hpp"
#include "model_runtime/ModelRuntime.hpp"

using compat_test::require;

int main() {
  compat_test::usePrivateSystem();
  // filled: "Assuming there is a session already created", bound to a device.
  auto model = popef::createModel({compat_test::modelPath("mlp")});
  model_runtime::SessionConfig config{model_runtime::LaunchPolicy::Immediate};
  model_runtime::Session session(std::move(model), config);

  // seed:
  const int MAX_SIZE = 1024;  // max size of a single model output
  std::vector<const popef::Anchor *> output_anchors = session.getUserOutputAnchors();
  const size_t number_of_outputs = output_anchors.size();
  require(number_of_outputs == 1, "mlp has one user output");

  // fixed: the seed's SIZE is its MAX_SIZE.
  std::vector<std::array<std::byte, MAX_SIZE>> outputs(number_of_outputs);

  // fixed: the seed declares handles_to_outputs_map and fills
  // handles_to_idx_map; anchors are pointers.
  std::map<std::string, std::byte *> handles_to_idx_map;
  for (size_t idx = 0; idx < number_of_outputs; idx++) {
    const std::string &anchor_name = output_anchors[idx]->name();
    handles_to_idx_map.emplace(anchor_name, outputs[idx].data());
  }

  // seed: the factory. fixed: it captures the map, looks it up with at(),
  // and the destination is not const.
  const auto output_factory = [&handles_to_idx_map](const model_runtime::CallbackInfo &ci) {
    const std::string &name = ci.anchor.name();
    const popef::TensorInfo::ShapeDimType size = ci.anchor.tensorInfo().sizeInBytes();
    std::byte *dst = handles_to_idx_map.at(name);

    // based on Tensor name the proper slot in the user buffer is used
    const auto cb = [dst, size](void *src) { std::memcpy(dst, src, static_cast<size_t>(size)); };
    return cb;
  };

  // filled: before any handler, image and probs are unbound in Main.
  const auto &flow = session.model()->metadata.programFlow();
  auto unbound = session.anchorsNotConnectedToCallbacks(flow.main());
  require(unbound.size() == 1 && unbound.begin()->second.size() == 2, "image and probs are unbound in Main");
  bool refused = false;
  try {
    session.errorIfAnchorsAreNotConnectedToCallbacks(flow.main());
  } catch (const std::runtime_error &e) {
    refused = std::string(e.what()).find("image") != std::string::npos;
  }
  require(refused, "errorIfAnchorsAreNotConnectedToCallbacks names the unbound anchor");

  // filled: use the factory, feed image, run, check by reference math.
  session.setUserOutputHandler(output_factory);
  const auto image = compat_test::randomFloats(compat_test::kImage, 8, 0.0f, 1.0f);
  session.setUserInputHandler([&image](const model_runtime::CallbackInfo &ci) -> poplar::StreamCallbackHandle {
    if (ci.anchor.name() != "image") return nullptr;
    return [&image](void *dst) { std::memcpy(dst, image.data(), image.size() * sizeof(float)); };
  });
  session.errorIfAnchorsAreNotConnectedToCallbacks(flow.main());
  require(session.anchorsNotConnectedToCallbacks(flow.main()).empty(), "every Main anchor is bound");
  require(session.getInputAnchors().size() == 5 && session.getUserInputAnchors().size() == 1,
          "5 inputs, of which only image needs the user");
  session.runMainPrograms();
  std::vector<float> probs(compat_test::kClasses);
  std::memcpy(probs.data(), outputs[0].data(), probs.size() * sizeof(float));
  const double error = compat_test::maxError(probs.data(), compat_test::mlpReference(*session.model(), image));
  require(error < 1e-5, "the output slot holds mlp's reference output");
  std::printf("4.5: output slots by anchor, max error %g\n", error);
  return 0;
}

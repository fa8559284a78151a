// The seed's User Guide, section 4.3 "Handlers for model tensors", as one
// program: the Save-program predicate, setCallbackForAnchor with the seed's
// input and output callbacks, and a CallbackFactory given to
// setUserOutputHandler. Seed lines are marked "seed:", what the seed elides
// "filled:", fixes to its text "fixed:".
#include <cstring>
#include <iostream>

#include "compat_test_util.hpp"
#include "model_runtime/ModelRuntime.hpp"

using namespace model_runtime;
using compat_test::require;

int main() {
  compat_test::usePrivateSystem();
  // filled: "Assuming there is a model (popef::Model) prepared/loaded in advance"
  std::shared_ptr<popef::Model> loaded = popef::createModel({compat_test::modelPath("mlp")});
  const popef::Model &model = *loaded;

  // seed:
  const auto &programFlow = model.metadata.programFlow();
  const auto accept_policy = AnchorCallbackPolicy::BIND_EMPTY_CB;  // bind an empty callback to every Anchor
                                                                   // that is "owned" by Save programs
  const auto reject_policy = AnchorCallbackPolicy::SKIP_CB;        // skip assigning callback to remaining Anchors
  // fixed: the seed's text lost the factory's name on this line.
  const auto empty_cb_for_save_program_tensors_predicate =
      predicate_factory::anchor_callbacks::predProgramFlowSave(programFlow, accept_policy, reject_policy);
  for (const auto &anchor : model.metadata.anchors()) {  // filled: mlp has no Save program
    require(empty_cb_for_save_program_tensors_predicate(anchor) == AnchorCallbackPolicy::SKIP_CB,
            "no anchor of mlp is owned by a Save program");
  }

  // filled: "Assuming there is a session (Session) already created", bound.
  DeviceManager devices;
  Session session(loaded);
  session.bindToDevice(devices.getDevice(loaded));
  const auto user_space_for_input_tensor = compat_test::randomFloats(compat_test::kImage, 5, 0.0f, 1.0f);
  std::vector<float> user_space_for_output_tensor(compat_test::kClasses);

  // seed:
  const std::string input_anchor_handle = "image";  // filled: mlp's input handle
  const auto input_callback = [&user_space_for_input_tensor](void *dest) {
    auto &io = user_space_for_input_tensor;
    std::memcpy(dest, io.data(), io.size() * sizeof(float));
    printf("Copying input from host to IPU\n");
  };  // filled: closing brace
  const std::string output_anchor_handle = "probs";  // filled: mlp's output handle
  // fixed: the seed copies into user_space_for_input_tensor here.
  const auto output_callback = [&user_space_for_output_tensor](void *src) {
    auto &io = user_space_for_output_tensor;
    std::memcpy(io.data(), src, io.size() * sizeof(float));
    printf("Copying output from IPU to host\n");
  };  // filled: closing brace
  session.setCallbackForAnchor(input_anchor_handle, input_callback);
  session.setCallbackForAnchor(output_anchor_handle, output_callback);

  session.runMainPrograms();  // filled: run and check by reference math
  const auto expected = compat_test::mlpReference(model, user_space_for_input_tensor);
  require(compat_test::maxError(user_space_for_output_tensor.data(), expected) < 1e-5,
          "setCallbackForAnchor: mlp output matches the reference");

  // seed: the output factory. fixed: the branches return different lambda
  // types, so the factory names its return type (poplar::StreamCallbackHandle).
  std::vector<float> seen(compat_test::kClasses);  // filled: where "some operations on src" copy to
  int printed = 0;
  const auto output_factory = [&seen, &printed](const model_runtime::CallbackInfo &ci) -> poplar::StreamCallbackHandle {
    const std::string &name = ci.anchor.name();
    if (name == "probs") {  // filled: mlp's output name
      const auto some_anchor_handle_callback = [&seen](void *src) {
        std::memcpy(seen.data(), src, seen.size() * sizeof(float));  // filled: "do some operations on src"
      };
      return some_anchor_handle_callback;
    } else if (name == "some_other_anchor_handle") {
      const auto some_other_anchor_handle_callback = [](void *) {};
      return some_other_anchor_handle_callback;
    } else {
      const auto just_print_out_callback = [&name, &printed](void *) {
        std::cout << "Callback for " << name << " called";
        ++printed;
      };
      return just_print_out_callback;
    }
  };
  const auto &predicate = empty_cb_for_save_program_tensors_predicate;
  const bool skip_connected = true;  // default value for skip_connected parameter
  session.setUserOutputHandler(output_factory, predicate, skip_connected);

  // filled: SKIP_CB for every anchor of mlp: the factory was not asked, and
  // probs still goes to output_callback.
  session.runMainPrograms();
  require(compat_test::maxError(user_space_for_output_tensor.data(), expected) < 1e-5, "SKIP_CB kept the callback");
  require(seen == std::vector<float>(compat_test::kClasses, 0.0f), "the factory's callback was not bound");

  // filled: with the default predicate (BIND_USER_CB) and skip_connected
  // false the factory replaces output_callback.
  session.setUserOutputHandler(output_factory);
  session.runMainPrograms();
  require(compat_test::maxError(seen.data(), expected) < 1e-5, "the factory's callback got mlp's output");
  require(printed == 0, "no other output exists");
  std::printf("4.3: predicate, anchor callbacks and output factory\n");
  return 0;
}

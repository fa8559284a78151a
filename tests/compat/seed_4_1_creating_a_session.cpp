// The seed's User Guide, section 4.1 "Creating a session" and 4.1.1/4.1.2
// (configuration and predicates), as one program. Seed lines are marked
// "seed:"; what the seed elides is filled in and marked "filled:". Fixes to
// the seed's text (a lost function name) are marked "fixed:".
#include <chrono>
#include <cstring>

#include "compat_test_util.hpp"
#include "model_runtime/ModelRuntime.hpp"

using namespace model_runtime;
using compat_test::require;

int main() {
  compat_test::usePrivateSystem();
  // filled: the PopEF file the reader parses.
  const std::string path = compat_test::modelPath("mlp");
  {
    // seed:
    auto reader = std::make_shared<popef::Reader>();
    reader->parseFile(path);  // filled: the reader reads the model's file
    popef::ModelBuilder builder(reader);
    std::shared_ptr<popef::Model> model = builder.createModel();

    model_runtime::Session session(model);
    require(session.model() == model, "the session's model is the one given");
  }
  {
    // seed: ("paths, to, popef, files" filled with the one file of the model)
    const std::vector<std::string> popef_paths{path};

    model_runtime::Session session(popef_paths);
    require(session.model()->metadata.anchors().size() == 6, "mlp has 6 anchors");
  }

  // seed: 4.1.1
  using namespace std::chrono_literals;
  const DeviceWaitConfig wait_up_to_5s_config = {
      DeviceWaitStrategy::WAIT_WITH_TIMEOUT,  // device waiting strategy.
      5s,                                     // timeout
      1s};                                    // sleep time
  require(wait_up_to_5s_config.timeout == 5s && wait_up_to_5s_config.sleepTime == 1s, "wait config values");

  // seed: 4.1.2 ("Assuming there is a model (popef::Model) prepared/loaded in advance")
  std::shared_ptr<popef::Model> loaded = popef::createModel({path});  // filled
  const popef::Model &model = *loaded;                                 // filled
  const auto &programFlow = model.metadata.programFlow();
  const auto accept_policy = PopefDataUsagePolicy::USE_USER_DATA;
  const auto reject_policy = PopefDataUsagePolicy::USE_POPEF_DATA_IF_ANY;
  // fixed: the seed's text lost the factory's name on this line.
  const auto user_data_for_load_program_tensors_predicate =
      predicate_factory::popef_data_usage::predProgramFlowLoad(programFlow, accept_policy, reject_policy);

  // seed: the complete SessionConfig
  model_runtime::SessionConfig session_config;
  session_config.policy = model_runtime::LaunchPolicy::Immediate;
  session_config.pred_tensor_data = user_data_for_load_program_tensors_predicate;
  session_config.check_package_hash = true;
  session_config.wait_config = wait_up_to_5s_config;

  // filled: use that config. The weights are Load-program tensors, so they
  // now come from user callbacks: give mlp's own weights but a zero b2 and
  // check the outputs against the reference math with that b2.
  model_runtime::Session session(loaded, session_config);
  require(session.getUserInputAnchors().size() == 5, "image and the four weights need user data");
  const std::vector<float> zeros(compat_test::kClasses, 0.0f);
  std::map<std::string, std::vector<float>> weights;
  for (const char *name : {"w1", "b1", "w2"}) weights[name] = compat_test::floats(model, name);
  weights["b2"] = zeros;
  const auto image = compat_test::randomFloats(compat_test::kImage, 11, 0.0f, 1.0f);
  std::vector<float> probs(compat_test::kClasses);
  for (auto &entry : weights) {
    const std::vector<float> &values = entry.second;
    session.setCallbackForAnchor(entry.first, [&values](void *dest) {
      std::memcpy(dest, values.data(), values.size() * sizeof(float));
    });
  }
  session.setCallbackForAnchor("image", [&image](void *dest) {
    std::memcpy(dest, image.data(), image.size() * sizeof(float));
  });
  session.setCallbackForAnchor("probs", [&probs](void *src) {
    std::memcpy(probs.data(), src, probs.size() * sizeof(float));
  });
  session.runMainPrograms();  // runs Load first
  const double error = compat_test::maxError(probs.data(), compat_test::mlpReference(model, image, &zeros));
  require(error < 1e-5, "mlp with user weights matches the reference (error " + std::to_string(error) + ")");
  std::printf("4.1: sessions created; user weights through the predicate, max error %g\n", error);
  return 0;
}

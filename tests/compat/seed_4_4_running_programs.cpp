// The seed's User Guide, section 4.4 "Running programs", as one program:
// Load, Main and Save groups, runPrograms with indices read from the model,
// stop() and reload(). Seed lines are marked "seed:", what the seed elides
// "filled:", fixes to its text "fixed:".
#include <cstring>

#include "compat_test_util.hpp"
#include "model_runtime/ModelRuntime.hpp"

using compat_test::require;

int main() {
  compat_test::usePrivateSystem();
  // filled: "Assuming there is a session (Session) already created", with
  // add_one's callbacks bound.
  auto model = popef::createModel({compat_test::modelPath("add_one")});
  model_runtime::SessionConfig config{model_runtime::LaunchPolicy::Immediate};
  model_runtime::Session session(std::move(model), config);
  std::vector<float> x(compat_test::kAddOneN, 5.0f), y(compat_test::kAddOneN);
  int rounds = 0;
  session.setCallbackForAnchor("x", [&x](void *dest) { std::memcpy(dest, x.data(), x.size() * sizeof(float)); });
  session.setCallbackForAnchor("y", [&y, &rounds](void *src) {
    std::memcpy(y.data(), src, y.size() * sizeof(float));
    ++rounds;
  });

  // filled: the seed's groups, run in order.
  session.runLoadPrograms();
  session.runMainPrograms();
  session.runSavePrograms();
  require(rounds == 1 && y[0] == 6.0f, "one Main round computed x + 1");

  // seed: ("to be read from PopEF"). fixed: the seed's CTAD vector is of
  // int; runPrograms takes Session::ProgIdxType.
  const auto &flow = session.model()->metadata.programFlow();
  std::vector<model_runtime::Session::ProgIdxType> programs_numbers = flow.load();
  programs_numbers.insert(programs_numbers.end(), flow.main().begin(), flow.main().end());
  session.runPrograms(programs_numbers);  // filled: the call the seed describes
  require(rounds == 2, "runPrograms ran Main once more");

  // filled: stop(), then nothing runs until reload().
  session.stop();
  require(session.isStopped(), "isStopped after stop");
  bool refused = false;
  try {
    session.runMainPrograms();
  } catch (const std::runtime_error &) {
    refused = true;
  }
  require(refused && rounds == 2, "a stopped session runs nothing");
  session.reload();
  require(!session.isStopped(), "reload restarts the session");
  x.assign(x.size(), 9.0f);
  session.runMainPrograms();
  require(rounds == 3 && y[0] == 10.0f, "after reload add_one runs again");

  // filled: an index the model lacks is refused with its number.
  refused = false;
  try {
    session.runPrograms({999});
  } catch (const std::runtime_error &e) {
    refused = std::string(e.what()).find("999") != std::string::npos;
  }
  require(refused, "runPrograms names an unknown program");
  std::printf("4.4: Load/Main/Save, runPrograms, stop and reload\n");
  return 0;
}

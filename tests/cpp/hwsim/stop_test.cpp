// stop() reaches programs that never sync with the host: unbounded loops of
// compute (Repeat, RepeatWhileTrue/False) end Stopped, not never.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <future>
#include <limits>

#include "test_util.hpp"

namespace {

using hwsim::Type;
using hwsim_test::Harness;
namespace p = hwsim::program;

// Builds Sequence{Copy(in, x), loop(add)} where add is Execute(x += 1), runs
// it on a thread and stops it from this one once the stream callback has
// run: past that host sync the program never syncs again, so only the loop's
// own checks can end the run.
void expectStopEndsLoop(const std::function<p::Program(Harness &, const p::Program &add)> &loop) {
  Harness h;
  auto x = h.graph.addVariable(Type::F32, {4}, "x");
  h.graph.setTileMapping(x, 0);
  auto one = h.graph.addConstant(Type::F32, {4}, 1.0);
  h.graph.setTileMapping(one, 0);
  auto in = h.graph.addHostToDeviceFIFO("in", Type::F32, 4);
  auto add = h.vertex("Add", {{"in0", x}, {"in1", one}, {"out", x}});
  h.build({p::Sequence{p::Copy(in, x), loop(h, add)}});
  std::promise<void> entered;
  h.engine->connectStreamToCallback("in", [&](void *ptr) {
    std::memset(ptr, 0, 16);
    entered.set_value();
  });
  auto run = std::async(std::launch::async, [&] { return h.engine->run(0); });
  entered.get_future().wait();
  h.engine->stop();
  // Generous: a stopped run ends at its next compute set or iteration.
  ASSERT_EQ(run.wait_for(std::chrono::seconds(60)), std::future_status::ready) << "stop() did not reach the loop";
  EXPECT_EQ(run.get(), hwsim::RunStatus::Stopped);
  EXPECT_GT(h.engine->deviceCycles(), 0u);
}

TEST(StopInComputeLoops, EndsAHugeRepeat) {
  expectStopEndsLoop([](Harness &, const p::Program &add) {
    return p::Repeat(std::numeric_limits<std::uint64_t>::max(), add);
  });
}

TEST(StopInComputeLoops, EndsARepeatWhileTrueWithAnAlwaysTruePredicate) {
  expectStopEndsLoop([](Harness &h, const p::Program &add) {
    auto forever = h.graph.addConstant(Type::BOOL, {1}, 1.0);
    h.graph.setTileMapping(forever, 0);
    return p::RepeatWhileTrue(p::Sequence(), forever, add);
  });
}

TEST(StopInComputeLoops, EndsARepeatWhileFalseWithAnAlwaysFalsePredicate) {
  expectStopEndsLoop([](Harness &h, const p::Program &add) {
    auto never = h.graph.addConstant(Type::BOOL, {1}, 0.0);
    h.graph.setTileMapping(never, 0);
    return p::RepeatWhileFalse(p::Sequence(), never, add);
  });
}

// The condition program runs every iteration too: a loop whose body is
// empty still stops.
TEST(StopInComputeLoops, EndsALoopWhoseWorkIsInItsCondition) {
  expectStopEndsLoop([](Harness &h, const p::Program &add) {
    auto forever = h.graph.addConstant(Type::BOOL, {1}, 1.0);
    h.graph.setTileMapping(forever, 0);
    return p::RepeatWhileTrue(add, forever, p::Sequence());
  });
}

}  // namespace

// Control flow: counted loops, while loops with counters, If, Switch, nesting
// and functions, checked by the values they leave behind.
#include "test_util.hpp"

namespace {

using hwsim::Type;
using hwsim_test::Harness;
namespace p = hwsim::program;

TEST(ControlFlow, RepeatWhileTrueWithACounter) {
  Harness h;
  auto i = h.output("i", Type::S32, {1});
  auto acc = h.output("acc", Type::F32, {1});
  auto limit = h.input("limit", Type::S32, {1});
  auto pred = h.graph.addVariable(Type::BOOL, {1}, "pred");
  h.graph.setTileMapping(pred, 0);
  auto half = h.graph.addConstant(Type::F32, {1}, 0.5, "half");
  h.graph.setTileMapping(half, 0);
  auto cond = h.vertex("Less", {{"in0", i}, {"in1", limit}, {"out", pred}});
  auto body = p::Sequence{h.vertex("Increment", {{"counter", i}}), h.vertex("Add", {{"in0", acc}, {"in1", half}, {"out", acc}})};
  h.build({p::RepeatWhileTrue(cond, pred, body)});
  h.write("limit", std::vector<std::int32_t>{7});
  h.engine->run(0);
  EXPECT_EQ(h.read<std::int32_t>("i", 1)[0], 7);
  EXPECT_EQ(h.read<float>("acc", 1)[0], 3.5f);
  h.write("limit", std::vector<std::int32_t>{-1});  // already false: body never runs
  h.engine->run(0);
  EXPECT_EQ(h.read<std::int32_t>("i", 1)[0], 7);
}

TEST(ControlFlow, RepeatWhileFalseStopsWhenPredicateTurnsTrue) {
  Harness h;
  auto i = h.output("i", Type::U32, {1});
  auto three = h.graph.addConstant(Type::U32, {1}, 3.0);
  h.graph.setTileMapping(three, 0);
  auto done = h.graph.addVariable(Type::BOOL, {1});
  h.graph.setTileMapping(done, 0);
  h.build({p::RepeatWhileFalse(h.vertex("GreaterEqual", {{"in0", i}, {"in1", three}, {"out", done}}), done,
                               h.vertex("Increment", {{"counter", i}}))});
  h.engine->run(0);
  EXPECT_EQ(h.read<std::uint32_t>("i", 1)[0], 3u);
}

TEST(ControlFlow, IfAndSwitchPickTheRightBranch) {
  Harness h;
  auto flag = h.input("flag", Type::S32, {1});
  auto x = h.input("x", Type::F32, {4});
  auto y = h.output("y", Type::F32, {4});
  auto two = h.graph.addConstant(Type::F32, {1}, 2.0);
  auto one = h.graph.addConstant(Type::F32, {1}, 1.0);
  h.graph.setTileMapping(two, 0);
  h.graph.setTileMapping(one, 0);
  // The conditional example model: flag != 0 ? 2x : x - 1.
  auto ifProg = p::If(flag, h.vertex("Mul", {{"in0", x}, {"in1", two}, {"out", y}}),
                      h.vertex("Sub", {{"in0", x}, {"in1", one}, {"out", y}}));
  p::Switch sw(flag, h.vertex("Fill", {{"out", y}}, 0, {{"value", {-1}}}));
  sw.add(0, h.vertex("Fill", {{"out", y}}, 0, {{"value", {10}}}));
  sw.add(5, h.vertex("Fill", {{"out", y}}, 0, {{"value", {50}}}));
  h.build({ifProg, sw});
  const std::vector<float> in = {1, 2, 3, 4};
  h.write("x", in);
  h.write("flag", std::vector<std::int32_t>{1});
  h.engine->run(0);
  EXPECT_EQ(h.read<float>("y", 4), (std::vector<float>{2, 4, 6, 8}));
  h.write("flag", std::vector<std::int32_t>{0});
  h.engine->run(0);
  EXPECT_EQ(h.read<float>("y", 4), (std::vector<float>{0, 1, 2, 3}));
  h.engine->run(1);
  EXPECT_EQ(h.read<float>("y", 4), std::vector<float>(4, 10));
  h.write("flag", std::vector<std::int32_t>{5});
  h.engine->run(1);
  EXPECT_EQ(h.read<float>("y", 4), std::vector<float>(4, 50));
  h.write("flag", std::vector<std::int32_t>{3});
  h.engine->run(1);
  EXPECT_EQ(h.read<float>("y", 4), std::vector<float>(4, -1));
}

TEST(ControlFlow, NestedLoopsAndFunctionCalls) {
  Harness h;
  auto c = h.output("c", Type::S32, {1});
  auto fn = h.graph.addFunction(h.vertex("Increment", {{"counter", c}}));
  // 3 x (2 x call + 1 x call) = 9 increments
  h.build({p::Repeat(3, p::Sequence{p::Repeat(2, p::Call(fn)), p::Call(fn), p::Sync(p::SyncType::Internal)})});
  h.engine->run(0);
  EXPECT_EQ(h.read<std::int32_t>("c", 1)[0], 9);
  h.engine->run(0);
  EXPECT_EQ(h.read<std::int32_t>("c", 1)[0], 18);
}

TEST(ControlFlow, LoadResetsVariablesAndKeepsConstants) {
  Harness h;
  auto c = h.output("c", Type::S32, {1});
  h.build({h.vertex("Increment", {{"counter", c}})});
  h.engine->run(0);
  h.engine->run(0);
  EXPECT_EQ(h.read<std::int32_t>("c", 1)[0], 2);
  h.engine->load(h.device);
  EXPECT_EQ(h.read<std::int32_t>("c", 1)[0], 0);
}

}  // namespace

namespace {

// Executable::transfers(p).eachStreamAtMostOnce: whether a run of program p
// copies each of its streams at most once (what a thread feeding the
// streams needs to know before it runs the program itself).
TEST(ControlFlow, TransfersTellWhetherARunCopiesEachStreamAtMostOnce) {
  Harness h;
  auto x = h.output("x", Type::F32, {4});
  auto flag = h.input("flag", Type::BOOL, {1});
  auto in = h.graph.addHostToDeviceFIFO("in", Type::F32, 4);
  auto out = h.graph.addDeviceToHostFIFO("out", Type::F32, 4);
  const p::Program copyIn = p::Copy(in, x), copyOut = p::Copy(x, out);
  h.build({p::Sequence{copyIn, copyOut},                         // 0: once each
           p::Repeat(4, p::Sequence{copyIn, copyOut}),           // 1: in a loop
           p::Sequence{p::Copy(in, x), p::Copy(in, x)},          // 2: one stream twice
           p::If(flag, p::Copy(in, x), p::Sequence()),           // 3: in a branch
           p::Sequence{copyIn, copyOut, copyIn}});               // 4: one step reached twice
  const bool expected[] = {true, false, false, false, false};
  for (unsigned program = 0; program < 5; ++program) {
    EXPECT_EQ(h.exe.transfers(program).eachStreamAtMostOnce, expected[program]) << "program " << program;
  }
  EXPECT_EQ(h.exe.transfers(0).streams, (std::vector<unsigned>{0, 1}));
  // Made once and kept with the executable: a copy of the handle finds the same.
  const hwsim::Executable copy = h.exe;
  EXPECT_EQ(&copy.transfers(4), &h.exe.transfers(4));
  EXPECT_THROW(h.exe.transfers(5), hwsim::Error);
}

}  // namespace

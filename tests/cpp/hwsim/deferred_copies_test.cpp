// Deferred copies (operand_mirrors.hpp): a copy whose destination the host
// cannot read is made only when a step needs its bytes, or not at all when
// its own next run rewrites them first. Each scenario runs on two builds of
// the same graph: the copy's destination readable by the host (so every
// copy is made at once, the eager path) and not (deferred). Both must give
// the same values, the ones a device that copies at once holds, and the same
// modelled cycles.
#include "test_util.hpp"

namespace {

using hwsim::Type;
using hwsim_test::Harness;
namespace p = hwsim::program;

enum Program : unsigned {
  kStreamCopyUse,    // x from the stream, y = x, out = y + 1 (the mlp's image exchange)
  kCopy,             // y = x
  kStreamIn,         // x from the stream
  kReadCopy,         // y to the host stream (reads y itself)
  kUseCopy,          // out = y + 1
  kStreamThenRead,   // x from the stream, then y to the host stream
  kRepeated,         // kStreamCopyUse twice, in a Repeat
};

// x on tile 0 is copied to y on tile 1, which a vertex adds 1 to.
struct CopiedInput {
  explicit CopiedInput(bool hostReadsCopy) {
    auto x = h.input("x", Type::F32, {4}, 0);
    auto y = h.graph.addVariable(Type::F32, {4}, "y");
    h.graph.setTileMapping(y, 1);
    if (hostReadsCopy) h.graph.createHostRead("y", y);
    auto out = h.output("out", Type::F32, {4}, 1);
    auto one = h.graph.addConstant(Type::F32, {1}, 1.0, "one");
    h.graph.setTileMapping(one, 1);
    auto in = h.graph.addHostToDeviceFIFO("in", Type::F32, 4);
    auto yOut = h.graph.addDeviceToHostFIFO("y_out", Type::F32, 4);
    auto use = h.graph.addComputeSet("use_copy");
    h.graph.addVertex(use, "Add", {{"in0", y}, {"in1", one}, {"out", out}}, 1);
    // One copy step (one mirror) in every program; the streams are steps of
    // their own, so kStreamCopyUse's may drop the pending copy.
    const p::Copy copy(x, y);
    const p::Execute useCopy(use);
    h.build({p::Sequence{p::Copy(in, x), copy, useCopy}, copy, p::Copy(in, x), p::Copy(y, yOut), useCopy,
             p::Sequence{p::Copy(in, x), p::Copy(y, yOut)}, p::Repeat(2, p::Sequence{p::Copy(in, x), copy, useCopy})});
    h.engine->connectStream("in", streamed.data());
    h.engine->connectStream("y_out", fromCopy.data());
  }
  void run(Program program, std::vector<float> input = {}) {
    if (!input.empty()) streamed = input;
    h.engine->run(program);
  }
  std::vector<float> out() { return h.read<float>("out", 4); }

  Harness h;
  std::vector<float> streamed = std::vector<float>(4, 0.f), fromCopy = std::vector<float>(4, 0.f);
};

// What a scenario observed, each value checked against what a device that
// copies at once holds.
struct Seen {
  void expect(std::vector<float> got, const std::vector<float> &want) {
    EXPECT_EQ(got, want);
    values.push_back(std::move(got));
  }
  std::vector<std::vector<float>> values;
};

// Runs `scenario` on the eager and the deferred build: what each observed
// must be equal, as must the modelled cycles.
template <typename Scenario> void onBothPaths(Scenario scenario) {
  CopiedInput eager(true), deferred(false);
  Seen a, b;
  scenario(eager, a);
  scenario(deferred, b);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(eager.h.engine->deviceCycles(), deferred.h.engine->deviceCycles());
}

TEST(DeferredCopies, EachRunUsesItsOwnInput) {
  onBothPaths([](CopiedInput &m, Seen &seen) {
    for (float v : {1.f, 5.f, -2.f}) {
      m.run(kStreamCopyUse, {v, v + 1, v + 2, v + 3});
      seen.expect(m.out(), {v + 1, v + 2, v + 3, v + 4});
    }
  });
}

TEST(DeferredCopies, AReadOfTheCopyAfterTheSourceChangedSeesTheOldSource) {
  onBothPaths([](CopiedInput &m, Seen &seen) {
    m.h.write<float>("x", {1, 2, 3, 4});
    m.run(kCopy);
    m.run(kReadCopy);
    seen.expect(m.fromCopy, {1, 2, 3, 4});
    m.run(kStreamIn, {9, 9, 9, 9});  // a stream overwrites the source
    m.run(kReadCopy);
    seen.expect(m.fromCopy, {1, 2, 3, 4});
    m.run(kUseCopy);
    seen.expect(m.out(), {2, 3, 4, 5});
  });
}

TEST(DeferredCopies, AHostWriteOfTheSourceKeepsTheCopy) {
  onBothPaths([](CopiedInput &m, Seen &seen) {
    m.h.write<float>("x", {1, 2, 3, 4});
    m.run(kCopy);
    m.h.write<float>("x", {7, 7, 7, 7});
    m.run(kUseCopy);
    seen.expect(m.out(), {2, 3, 4, 5});
    m.run(kReadCopy);
    seen.expect(m.fromCopy, {1, 2, 3, 4});
  });
}

// The stream's write is followed by a read of the copy in the same program:
// the copy cannot be dropped there.
TEST(DeferredCopies, AReadLaterInTheProgramKeepsTheCopy) {
  onBothPaths([](CopiedInput &m, Seen &seen) {
    m.run(kStreamCopyUse, {1, 2, 3, 4});
    m.run(kStreamThenRead, {8, 8, 8, 8});
    seen.expect(m.fromCopy, {1, 2, 3, 4});
    m.run(kReadCopy);
    seen.expect(m.fromCopy, {1, 2, 3, 4});
  });
}

TEST(DeferredCopies, ControlFlowAndALoad) {
  onBothPaths([](CopiedInput &m, Seen &seen) {
    m.run(kRepeated, {3, 3, 3, 3});
    seen.expect(m.out(), {4, 4, 4, 4});
    m.run(kStreamCopyUse, {6, 6, 6, 6});
    m.h.engine->load(m.h.device);  // the copy holds zeros again
    m.run(kReadCopy);
    seen.expect(m.fromCopy, {0, 0, 0, 0});
    m.run(kUseCopy);
    seen.expect(m.out(), {1, 1, 1, 1});
  });
}

}  // namespace

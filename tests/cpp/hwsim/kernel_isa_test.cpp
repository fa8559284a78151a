// The codelet kernels of every x86-64 level this machine runs give the
// baseline level's results (to float rounding: FMA contracts differently),
// and the level is chosen as MRT_HWSIM_ISA asks, with a clear warning when it
// cannot be. Uses hwsim's private headers: the kernel tables are internal.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "codelets/kernels.hpp"
#include "codelets/registry.hpp"
#include "hwsim/types.hpp"
#include "test_util.hpp"

namespace {

using hwsim::Shape;
using hwsim::Type;
using hwsim::detail::Attrs;
using hwsim::detail::CodeletSpec;
using hwsim::detail::ExecuteFn;
using hwsim::detail::KernelIsa;
using hwsim::detail::KernelTable;
using hwsim::detail::Operand;
using hwsim::detail::PreparedExecuteFn;

const CodeletSpec &spec(const char *name) {
  return hwsim::detail::codeletLibrary()[*hwsim::detail::findCodelet(name)];
}

// An F32 operand's shape and values; the last operand of a case is its output.
struct Tensor {
  Shape shape;
  std::vector<float> values;
};

std::size_t numel(const Shape &s) {
  std::size_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

Tensor random(const Shape &shape, float lo, float hi, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Tensor t{shape, std::vector<float>(numel(shape))};
  for (auto &v : t.values) v = dist(gen);
  return t;
}

struct Case {
  std::string name;
  const char *codelet;
  std::vector<Tensor> operands;  // inputs, then the output (its values are the start for accumulation)
  Attrs attrs;                   // empty: the codelet's defaults
};

// The case's attributes, its codelet's defaults where it gives none.
Attrs attrsOf(const Case &c) {
  if (!c.attrs.empty()) return c.attrs;
  Attrs attrs;
  for (const auto &a : spec(c.codelet).attrs) attrs.push_back(a.defaults);
  return attrs;
}

// Runs the case's codelet with `fn` and returns the output.
std::vector<float> run(const Case &c, const std::function<void(const CodeletSpec &, const Operand *, const Attrs &)> &fn) {
  const CodeletSpec &s = spec(c.codelet);
  std::vector<Tensor> tensors = c.operands;
  std::vector<Operand> ops;
  for (auto &t : tensors) {
    ops.push_back({reinterpret_cast<std::uint8_t *>(t.values.data()), Type::F32, &t.shape, t.values.size()});
  }
  const Attrs attrs = attrsOf(c);
  EXPECT_EQ(s.validate(s, ops.data(), attrs), "") << c.name;
  fn(s, ops.data(), attrs);
  return tensors.back().values;
}

// Calls fn(isa, table) for each level this build has and this CPU runs.
template <typename Fn>
void forEachRunnableLevel(Fn fn) {
  for (KernelIsa isa : hwsim::detail::kAllKernelIsas) {
    if (const KernelTable *table = hwsim::detail::kernelTable(isa)) fn(isa, *table);
  }
}

ExecuteFn kernelOf(const KernelTable &k, const char *codelet) {
  const std::string n = codelet;
  if (n == "MatMul") return k.matMul;
  if (n == "Conv") return k.conv;
  if (n == "MaxPool" || n == "AveragePool") return k.pool;
  if (n == "ReduceSum" || n == "ReduceMax" || n == "ReduceMean") return k.reduce;
  if (n == "Softmax") return k.softmax;
  if (n == "Add" || n == "Mul" || n == "Div" || n == "Max") return k.binary;
  return k.unary;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  out.push_back({"matmul", "MatMul",
                 {random({37, 61}, -1, 1, 1), random({61, 29}, -1, 1, 2), random({37, 29}, -1, 1, 3)}, {}});
  out.push_back({"matmul accumulate", "MatMul",
                 {random({5, 300}, -1, 1, 4), random({300, 70}, -1, 1, 5), random({5, 70}, -1, 1, 6)}, {{1.0}}});
  // Big enough for oneDNN above baseline (kOnednnMinMacs): the mlp's layer1
  // block, and a product accumulated into its output.
  out.push_back({"matmul onednn", "MatMul",
                 {random({32, 784}, -1, 1, 27), random({784, 32}, -1, 1, 28), random({32, 32}, -1, 1, 29)}, {}});
  // One row: Eigen's GEMV at baseline, our own above it for up to 64
  // columns (a masked last packet where N is not whole packets): the mlp's
  // blocks (32 and 10 columns), 8 columns, an odd K and 50 columns
  // accumulated, 70 columns (Eigen's again).
  out.push_back({"matmul gemv", "MatMul",
                 {random({1, 784}, -1, 1, 33), random({784, 32}, -1, 1, 34), random({1, 32}, -1, 1, 35)}, {}});
  out.push_back({"matmul gemv, 10 columns", "MatMul",
                 {random({1, 128}, -1, 1, 42), random({128, 10}, -1, 1, 43), random({1, 10}, -1, 1, 44)}, {}});
  out.push_back({"matmul gemv accumulate, 8 columns", "MatMul",
                 {random({1, 61}, -1, 1, 45), random({61, 8}, -1, 1, 46), random({1, 8}, -1, 1, 47)}, {{1.0}}});
  out.push_back({"matmul gemv accumulate, 50 columns", "MatMul",
                 {random({1, 203}, -1, 1, 36), random({203, 50}, -1, 1, 37), random({1, 50}, -1, 1, 38)}, {{1.0}}});
  out.push_back({"matmul gemv, 70 columns", "MatMul",
                 {random({1, 3}, -1, 1, 39), random({3, 70}, -1, 1, 40), random({1, 70}, -1, 1, 41)}, {}});
  out.push_back({"matmul onednn accumulate", "MatMul",
                 {random({16, 300}, -1, 1, 30), random({300, 70}, -1, 1, 31), random({16, 70}, -1, 1, 32)}, {{1.0}}});
  // Padded unit-stride with few output channels (accumulated from the slab)
  // and with many (the slab's im2col and a GEMM), strided with dilation
  // (im2col), grouped 1-D and 1x1.
  out.push_back({"conv padded", "Conv",
                 {random({2, 3, 11, 13}, -1, 1, 7), random({4, 3, 3, 3}, -1, 1, 8), random({2, 4, 11, 13}, -1, 1, 9)},
                 {{}, {1, 1, 1, 1}, {}, {1}, {0}}});
  out.push_back({"conv padded, 7 channels", "Conv",
                 {random({1, 3, 9, 10}, -1, 1, 31), random({7, 3, 5, 5}, -1, 1, 32), random({1, 7, 9, 10}, -1, 1, 33)},
                 {{}, {2, 2, 2, 2}, {}, {1}, {0}}});
  out.push_back({"conv strided dilated", "Conv",
                 {random({1, 4, 15, 16}, -1, 1, 10), random({6, 4, 3, 2}, -1, 1, 11), random({1, 6, 6, 8}, -1, 1, 12)},
                 {{2, 2}, {1, 0, 0, 1}, {2, 1}, {1}, {1}}});
  out.push_back({"conv grouped 1-D", "Conv",
                 {random({2, 6, 30}, -1, 1, 13), random({4, 3, 5}, -1, 1, 14), random({2, 4, 28}, -1, 1, 15)},
                 {{}, {1, 1}, {}, {2}, {0}}});
  out.push_back({"conv 1x1", "Conv",
                 {random({1, 16, 7, 7}, -1, 1, 16), random({8, 16, 1, 1}, -1, 1, 17), random({1, 8, 7, 7}, -1, 1, 18)},
                 {}});
  // mnist-8's second Conv as the plan splits it (v4: masked loads straight
  // from the input): 2 of 16 output channels and one output row of 14 per
  // vertex, the input rows that row reads (fewer, with a row pad, for the
  // first and last two rows).
  for (int row : {0, 1, 2, 7, 12, 13}) {
    const int r0 = std::max(0, row - 2), r1 = std::min(14, row + 3);
    out.push_back({"conv mnist second, row " + std::to_string(row), "Conv",
                   {random({1, 8, static_cast<std::size_t>(r1 - r0), 14}, -1, 1, 40 + row),
                    random({2, 8, 5, 5}, -1, 1, 60), random({1, 2, 1, 14}, -1, 1, 61)},
                   {{}, {double(r0 - (row - 2)), 2, double(row + 3 - r1), 2}, {}, {1}, {0}}});
  }
  // Rows wider than one vector (three chunks), an odd channel count, row
  // stride, dilation in both dimensions, accumulating into the output.
  out.push_back({"conv wide rows, 3 channels, row stride, dilated, accumulate", "Conv",
                 {random({1, 5, 12, 37}, -1, 1, 62), random({3, 5, 3, 4}, -1, 1, 63), random({1, 3, 5, 34}, -1, 1, 64)},
                 {{2, 1}, {1, 2, 0, 1}, {2, 2}, {1}, {1}}});
  // The row windows (kernels 3, 5 and 7 wide; v3 and v4): one channel,
  // three and four channels (one bank at v3, two at v4), an odd number of
  // kernel rows (v4 takes them in pairs), a 7-wide kernel over three chunks
  // with left and right padding wider than a tap reaches, accumulated.
  out.push_back({"conv 3x3, one channel", "Conv",
                 {random({1, 1, 5, 20}, -1, 1, 66), random({1, 1, 3, 3}, -1, 1, 67), random({1, 1, 5, 20}, -1, 1, 68)},
                 {{}, {1, 1, 1, 1}, {}, {1}, {0}}});
  out.push_back({"conv 1x7, 3 channels, wide pads, accumulate", "Conv",
                 {random({1, 2, 4, 33}, -1, 1, 69), random({3, 2, 1, 7}, -1, 1, 70), random({1, 3, 4, 41}, -1, 1, 71)},
                 {{}, {0, 5, 0, 9}, {}, {1}, {1}}});
  out.push_back({"conv 5x5, 4 channels, row stride", "Conv",
                 {random({1, 3, 9, 18}, -1, 1, 72), random({4, 3, 5, 5}, -1, 1, 73), random({1, 4, 4, 18}, -1, 1, 74)},
                 {{2, 1}, {2, 2, 1, 2}, {}, {1}, {0}}});
  out.push_back({"maxpool", "MaxPool", {random({2, 3, 8, 8}, -1, 1, 19), random({2, 3, 4, 4}, 0, 0, 0)},
                 {{2, 2}, {2, 2}, {}, {}}});
  // 2x2, stride 2, output rows of 15 (v3/v4: 8 columns at a time, the last
  // block overlapping the one before).
  out.push_back({"maxpool 2x2 stride 2, rows of 15", "MaxPool",
                 {random({1, 3, 7, 31}, -1, 1, 75), random({1, 3, 3, 15}, 0, 0, 0)}, {{2, 2}, {2, 2}, {}, {}}});
  out.push_back({"averagepool padded, count_include_pad", "AveragePool",
                 {random({1, 2, 7, 9}, -1, 1, 65), random({1, 2, 4, 5}, 0, 0, 0)},
                 {{3, 3}, {2, 2}, {1, 1, 1, 1}, {}, {1}}});
  for (const char *op : {"Exp", "Tanh", "Sigmoid", "Relu", "Sin", "Sqrt", "Log", "Erf", "Round"}) {
    const float lo = std::string(op) == "Sqrt" || std::string(op) == "Log" ? 0.01f : -3.0f;
    out.push_back({op, op, {random({1000}, lo, 3, 20), random({1000}, 0, 0, 0)}, {}});
  }
  for (const char *op : {"Add", "Mul", "Div", "Max"}) {
    out.push_back({std::string(op) + " row broadcast", op,
                   {random({13, 31}, -2, 2, 21), random({31}, 0.5f, 2, 22), random({13, 31}, 0, 0, 0)}, {}});
  }
  out.push_back({"reduce sum rows", "ReduceSum", {random({17, 33}, -1, 1, 23), random({17}, 0, 0, 0)}, {{1}}});
  out.push_back({"reduce max columns", "ReduceMax", {random({17, 33}, -1, 1, 24), random({33}, 0, 0, 0)}, {{0}}});
  out.push_back({"reduce mean all", "ReduceMean", {random({4, 5, 6}, -1, 1, 25), random({1}, 0, 0, 0)}, {{}}});
  out.push_back({"softmax", "Softmax", {random({7, 19}, -4, 4, 26), random({7, 19}, 0, 0, 0)}, {}});
  // Rows of one packet or less at some levels (10 at v4, 3 at all).
  out.push_back({"softmax rows of 10", "Softmax", {random({5, 10}, -4, 4, 76), random({5, 10}, 0, 0, 0)}, {}});
  out.push_back({"softmax rows of 3", "Softmax", {random({4, 3}, -4, 4, 77), random({4, 3}, 0, 0, 0)}, {}});
  return out;
}

TEST(KernelIsa, EveryLevelThisMachineRunsAgreesWithBaseline) {
  const KernelTable *baseline = hwsim::detail::kernelTable(KernelIsa::Baseline);
  ASSERT_NE(baseline, nullptr);
  int compared = 0;
  for (KernelIsa isa : hwsim::detail::kAllKernelIsas) {
    const KernelTable *table = hwsim::detail::kernelTable(isa);
    if (isa == KernelIsa::Baseline || table == nullptr) continue;
    ++compared;
    for (const Case &c : cases()) {
      const auto want = run(c, kernelOf(*baseline, c.codelet));
      const auto got = run(c, kernelOf(*table, c.codelet));
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t i = 0; i < want.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], 2e-5 * std::max(1.0f, std::fabs(want[i])))
            << c.name << " at level " << hwsim::detail::kernelIsaName(isa) << ", element " << i;
      }
    }
  }
  // Only the levels this CPU runs can be compared; say which were.
  RecordProperty("levels_compared", compared);
}

// The Conv and pool kernels given the geometry prepared once per vertex (as
// an engine runs them) write the bytes they write parsing it at each call.
// Runs `codelet` on the n floats of `in` at `table`'s level, out of place.
std::vector<float> runFlat(const KernelTable &table, const char *codelet, const float *in, std::size_t n,
                           const Shape &shape) {
  const CodeletSpec &s = spec(codelet);
  std::vector<float> out(n);
  Operand ops[2] = {{reinterpret_cast<std::uint8_t *>(const_cast<float *>(in)), Type::F32, &shape, n},
                    {reinterpret_cast<std::uint8_t *>(out.data()), Type::F32, &shape, n}};
  Attrs attrs;
  for (const auto &a : s.attrs) attrs.push_back(a.defaults);
  kernelOf(table, codelet)(s, ops, attrs);
  return out;
}

// An element's value does not depend on where it lies (the first element,
// the last, the tail after whole packets, an unaligned start), so a vertex
// split or joined with its neighbours (elementwise runs) writes the same
// bytes, for every unary op.
TEST(KernelIsa, ElementsGiveTheirValueWhereverTheyLie) {
  const Tensor whole = random({301}, -3, 3, 78);
  int compared = 0;
  forEachRunnableLevel([&](KernelIsa isa, const KernelTable &table) {
    const std::string level(hwsim::detail::kernelIsaName(isa));
    for (const char *op : {"Exp", "Log", "Sqrt", "Tanh", "Sigmoid", "Erf", "Sin", "Atan", "Relu"}) {
      std::vector<float> in = whole.values;
      if (std::string(op) == "Log" || std::string(op) == "Sqrt") {
        for (float &v : in) v = std::fabs(v) + 0.01f;
      }
      const auto want = runFlat(table, op, in.data(), in.size(), {in.size()});
      for (const auto &[start, count] : std::vector<std::pair<std::size_t, std::size_t>>{
               {0, 1}, {1, 1}, {1, 7}, {3, 16}, {5, 33}, {17, 284}, {300, 1}}) {
        const auto got = runFlat(table, op, in.data() + start, count, {count});
        EXPECT_EQ(std::memcmp(got.data(), want.data() + start, count * sizeof(float)), 0)
            << op << " at level " << level << ", elements " << start << " to " << start + count;
        ++compared;
      }
      // In place (out = in), from an element that is not on a packet boundary.
      std::vector<float> inPlace = in;
      const Shape rest{in.size() - 3};
      Operand ops[2] = {{reinterpret_cast<std::uint8_t *>(inPlace.data() + 3), Type::F32, &rest, rest[0]},
                        {reinterpret_cast<std::uint8_t *>(inPlace.data() + 3), Type::F32, &rest, rest[0]}};
      kernelOf(table, op)(spec(op), ops, {});
      EXPECT_EQ(std::memcmp(inPlace.data() + 3, want.data() + 3, rest[0] * sizeof(float)), 0) << op << " in place at level " << level;
    }
  });
  EXPECT_GE(compared, 63);  // the baseline level at least
}

TEST(KernelIsa, PreparedGeometryGivesTheBytesOfParsingAtEachCall) {
  int compared = 0;
  forEachRunnableLevel([&](KernelIsa isa, const KernelTable &table) {
    for (const Case &c : cases()) {
      const std::string codelet = c.codelet;
      if (codelet != "Conv" && codelet != "MaxPool" && codelet != "AveragePool") continue;
      const PreparedExecuteFn withGeometry = codelet == "Conv" ? table.convPrepared : table.poolPrepared;
      const auto want = run(c, kernelOf(table, c.codelet));
      const auto got = run(c, [&](const CodeletSpec &s, const Operand *ops, const Attrs &attrs) {
        ASSERT_NE(s.prepare, nullptr) << c.name;
        const auto geometry = s.prepare(s, ops, attrs);
        ASSERT_NE(geometry, nullptr) << c.name;
        withGeometry(s, ops, attrs, geometry.get());
      });
      ASSERT_EQ(got.size(), want.size());
      EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0)
          << c.name << " at level " << hwsim::detail::kernelIsaName(isa);
      ++compared;
    }
  });
  EXPECT_GE(compared, 14);  // the 14 Conv and pool cases, at baseline at least
}

// Conv case c's operands as `type` (in, weights and out; F16 out for F16),
// run with the geometry prepared at `table`'s level, in and out with their
// planes (one per image and channel) gapBytes apart (0: end to end), the
// gaps filled with 0xff bytes (NaN in either type). Returns out's planes end
// to end; fails if a gap was written.
std::vector<std::uint8_t> convWithPlanesApart(const Case &c, const KernelTable &table, Type type, std::size_t gapBytes) {
  const CodeletSpec &s = spec("Conv");
  const std::size_t elementBytes = type == Type::F32 ? 4 : 2;
  std::vector<std::vector<std::uint8_t>> buffers(3);
  std::vector<Operand> ops;
  std::vector<std::size_t> planes(3), planeBytes(3), pitches(3);
  for (std::size_t f = 0; f < 3; ++f) {
    const Tensor &t = c.operands[f];
    std::vector<std::uint8_t> dense(t.values.size() * elementBytes);
    if (type == Type::F32) std::memcpy(dense.data(), t.values.data(), dense.size());
    else std::memcpy(dense.data(), hwsim_test::toHalf(t.values).data(), dense.size());
    planes[f] = f == 1 ? 1 : t.shape[0] * t.shape[1];  // the weights stay end to end
    planeBytes[f] = dense.size() / planes[f];
    pitches[f] = planeBytes[f] + (f == 1 ? 0 : gapBytes);
    buffers[f].assign(planes[f] * pitches[f], 0xff);
    for (std::size_t p = 0; p < planes[f]; ++p) {
      std::memcpy(buffers[f].data() + p * pitches[f], dense.data() + p * planeBytes[f], planeBytes[f]);
    }
    const std::uint64_t pitch = f == 1 || gapBytes == 0 ? 0 : pitches[f];
    ops.push_back({buffers[f].data(), type, &t.shape, t.values.size(), pitch});
  }
  const Attrs attrs = attrsOf(c);
  const auto geometry = s.prepare(s, ops.data(), attrs);
  EXPECT_NE(geometry, nullptr) << c.name;
  if (geometry == nullptr) return {};
  table.convPrepared(s, ops.data(), attrs, geometry.get());
  std::vector<std::uint8_t> out;
  for (std::size_t p = 0; p < planes[2]; ++p) {
    const std::uint8_t *plane = buffers[2].data() + p * pitches[2];
    out.insert(out.end(), plane, plane + planeBytes[2]);
    EXPECT_TRUE(std::all_of(plane + planeBytes[2], plane + pitches[2], [](std::uint8_t b) { return b == 0xff; }))
        << c.name << ": the gap after out plane " << p << " was written";
  }
  return out;
}

// Planar operands (planar_operands.hpp): a Conv given its in and out planes
// apart in memory (Operand::planePitch, as an engine hands a vertex the
// planes of an exchange's sources or of a scattered out) writes the bytes it
// writes on the same planes end to end, at every level, F32 and F16
// (accumulating cases read out at the pitch too), and reads no gap.
TEST(KernelIsa, ConvPlanesApartGiveTheBytesOfPlanesEndToEnd) {
  int compared = 0;
  forEachRunnableLevel([&](KernelIsa isa, const KernelTable &table) {
    for (const Case &c : cases()) {
      if (std::string(c.codelet) != "Conv") continue;
      for (Type type : {Type::F32, Type::F16}) {
        const auto want = convWithPlanesApart(c, table, type, 0);
        const auto got = convWithPlanesApart(c, table, type, 12);
        EXPECT_EQ(got, want) << c.name << " at level " << hwsim::detail::kernelIsaName(isa)
                             << (type == Type::F32 ? ", F32" : ", F16");
        ++compared;
      }
    }
  });
  EXPECT_GE(compared, 24);  // the 12 Conv cases, F32 and F16, at baseline at least
}

// MaxPool's max keeps std::max's answers at every level: a NaN tap is
// passed over (a window of NaNs gives -inf), and between zeros of both
// signs the earliest wins. Compared as bytes, 2x2 stride 2 on rows wide
// enough for the vector blocks, NaNs, zeros and infinities strewn about.
TEST(KernelIsa, MaxPoolGivesTheBaselineBytesWithNaNsAndSignedZeros) {
  constexpr std::size_t kWidth = 38;
  Tensor in = random({1, 2, 4, kWidth}, -1, 1, 76), out = random({1, 2, 2, 19}, 0, 0, 0);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < in.values.size(); i += 5) in.values[i] = nan;
  for (std::size_t i = 2; i < in.values.size(); i += 7) in.values[i] = (i / 7) % 2 == 0 ? 0.0f : -0.0f;
  for (std::size_t i = 3; i < in.values.size(); i += 11) in.values[i] = -inf;
  // Output (0, 0): taps -0, +0, +0, -0; output (0, 1): all NaN.
  in.values[0] = -0.0f, in.values[1] = 0.0f, in.values[kWidth] = 0.0f, in.values[kWidth + 1] = -0.0f;
  in.values[2] = in.values[3] = in.values[kWidth + 2] = in.values[kWidth + 3] = nan;
  const Case c{"maxpool with NaNs and zeros", "MaxPool", {in, out}, {{2, 2}, {2, 2}, {}, {}}};
  const KernelTable *baseline = hwsim::detail::kernelTable(KernelIsa::Baseline);
  ASSERT_NE(baseline, nullptr);
  const std::vector<float> want = run(c, baseline->pool);
  EXPECT_TRUE(want[0] == 0.0f && std::signbit(want[0])) << want[0];
  EXPECT_EQ(want[1], -inf);
  forEachRunnableLevel([&](KernelIsa isa, const KernelTable &table) {
    const std::vector<float> got = run(c, table.pool);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0)
        << "at level " << hwsim::detail::kernelIsaName(isa);
  });
}

// A vertex whose geometry is invalid prepares nothing (an engine then runs
// the parsing execute, which refuses it as before).
TEST(KernelIsa, InvalidGeometryPreparesNothing) {
  Tensor in = random({1, 2, 8, 8}, -1, 1, 1), out = random({1, 2, 5, 5}, 0, 0, 0);
  const std::vector<Operand> ops = {{nullptr, Type::F32, &in.shape, in.values.size()},
                                    {nullptr, Type::F32, &out.shape, out.values.size()}};
  const CodeletSpec &s = spec("MaxPool");
  const Attrs attrs = {{2, 2}, {2, 2}, {}, {}};  // gives a 4x4 out, not 5x5
  EXPECT_EQ(s.validate(s, ops.data(), attrs), "out spatial dimension 0 is 5, expected 4 for in [1,2,8,8]");
  EXPECT_EQ(s.prepare(s, ops.data(), attrs), nullptr);
}

TEST(KernelIsa, BestLevelMatchesTheCpu) {
  const KernelIsa best = hwsim::detail::bestKernelIsa();
  EXPECT_NE(hwsim::detail::kernelTable(best), nullptr);
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) {
    EXPECT_EQ(best, KernelIsa::V4);
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    EXPECT_GE(static_cast<int>(best), static_cast<int>(KernelIsa::V3));
  }
#endif
}

TEST(KernelIsa, RequestChoosesTheLevelOrWarnsNamingTheBadValue) {
  const KernelIsa best = hwsim::detail::bestKernelIsa();
  std::string warning;
  EXPECT_EQ(hwsim::detail::chooseKernelIsa(nullptr, warning), best);
  EXPECT_EQ(hwsim::detail::chooseKernelIsa("", warning), best);
  EXPECT_EQ(hwsim::detail::chooseKernelIsa("baseline", warning), KernelIsa::Baseline);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(hwsim::detail::chooseKernelIsa("avx9", warning), best);
  EXPECT_EQ(warning, "MRT_HWSIM_ISA 'avx9' is not one of baseline, v3, v4; using '" +
                         std::string(hwsim::detail::kernelIsaName(best)) + "'");
  for (KernelIsa isa : hwsim::detail::kAllKernelIsas) {
    warning.clear();
    const char *name = hwsim::detail::kernelIsaName(isa).data();
    if (hwsim::detail::kernelTable(isa) != nullptr) {
      EXPECT_EQ(hwsim::detail::chooseKernelIsa(name, warning), isa);
      EXPECT_EQ(warning, "");
    } else {
      EXPECT_EQ(hwsim::detail::chooseKernelIsa(name, warning), best);
      EXPECT_EQ(warning, "MRT_HWSIM_ISA '" + std::string(name) + "': this build or CPU cannot run it; using '" +
                             std::string(hwsim::detail::kernelIsaName(best)) + "'");
    }
  }
}

// ctest also runs this binary with MRT_HWSIM_ISA=baseline (tests/cpp/hwsim/CMakeLists.txt).
TEST(KernelIsa, ActiveLevelFollowsTheEnvironmentAndRunsTheCodelets) {
  std::string warning;
  const KernelIsa want = hwsim::detail::chooseKernelIsa(std::getenv("MRT_HWSIM_ISA"), warning);
  EXPECT_EQ(hwsim::detail::activeKernelIsa(), want);
  const KernelTable &active = hwsim::detail::activeKernels();
  EXPECT_EQ(&active, hwsim::detail::kernelTable(want));
  EXPECT_EQ(spec("MatMul").execute, active.matMul);
  EXPECT_EQ(spec("Conv").execute, active.conv);
  EXPECT_EQ(spec("Conv").executePrepared, active.convPrepared);
  EXPECT_EQ(spec("MaxPool").executePrepared, active.poolPrepared);
  EXPECT_EQ(spec("Exp").execute, active.unary);
  EXPECT_EQ(spec("ReduceSum").execute, active.reduce);
}

}  // namespace

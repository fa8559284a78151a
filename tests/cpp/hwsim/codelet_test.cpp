// Every codelet against reference math on random data. Tolerances: F32
// transcendental ops 1e-5 relative (Eigen's vectorized approximations), F32
// arithmetic exact (same IEEE operation), F16 results within one half-precision
// rounding of the F32 reference (relative 1e-3), integers exact.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <numeric>

#include "test_util.hpp"

namespace {

using hwsim::Type;
using hwsim_test::Harness;
using hwsim_test::randomFloats;
using hwsim_test::randomInts;

void expectNear(const std::vector<float> &got, const std::vector<double> &want, double rel, const std::string &what) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double tol = rel * std::max(1.0, std::abs(want[i]));
    ASSERT_NEAR(got[i], want[i], tol) << what << " element " << i;
  }
}

struct UnaryCase {
  const char *codelet;
  std::function<double(double)> ref;
  float lo, hi;
};

class UnaryF32 : public ::testing::TestWithParam<UnaryCase> {};

TEST_P(UnaryF32, MatchesReference) {
  const auto &c = GetParam();
  Harness h;
  const std::size_t n = 257;  // not a multiple of the vector width
  auto in = h.input("in", Type::F32, {n});
  auto out = h.output("out", Type::F32, {n});
  h.build({h.vertex(c.codelet, {{"in", in}, {"out", out}})});
  const auto x = randomFloats(n, c.lo, c.hi, 7);
  h.write("in", x);
  ASSERT_EQ(h.engine->run(0), hwsim::RunStatus::Completed);
  std::vector<double> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = c.ref(x[i]);
  expectNear(h.read<float>("out", n), want, 1e-5, c.codelet);
}

INSTANTIATE_TEST_SUITE_P(
    Codelets, UnaryF32,
    ::testing::Values(UnaryCase{"Neg", [](double x) { return -x; }, -5, 5},
                      UnaryCase{"Abs", [](double x) { return std::abs(x); }, -5, 5},
                      UnaryCase{"Relu", [](double x) { return std::max(x, 0.0); }, -5, 5},
                      UnaryCase{"Exp", [](double x) { return std::exp(x); }, -10, 10},
                      UnaryCase{"Log", [](double x) { return std::log(x); }, 0.01f, 100},
                      UnaryCase{"Sqrt", [](double x) { return std::sqrt(x); }, 0, 100},
                      UnaryCase{"Sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }, -10, 10},
                      UnaryCase{"Tanh", [](double x) { return std::tanh(x); }, -5, 5},
                      UnaryCase{"Erf", [](double x) { return std::erf(x); }, -3, 3},
                      UnaryCase{"Floor", [](double x) { return std::floor(x); }, -5, 5},
                      UnaryCase{"Ceil", [](double x) { return std::ceil(x); }, -5, 5},
                      UnaryCase{"Round", [](double x) { return std::nearbyint(x); }, -5, 5},
                      UnaryCase{"Sign", [](double x) { return double((x > 0) - (x < 0)); }, -5, 5},
                      UnaryCase{"Sin", [](double x) { return std::sin(x); }, -5, 5},
                      UnaryCase{"Cos", [](double x) { return std::cos(x); }, -5, 5},
                      UnaryCase{"Tan", [](double x) { return std::tan(x); }, -1.4f, 1.4f},
                      UnaryCase{"Asin", [](double x) { return std::asin(x); }, -1, 1},
                      UnaryCase{"Acos", [](double x) { return std::acos(x); }, -1, 1},
                      UnaryCase{"Atan", [](double x) { return std::atan(x); }, -5, 5},
                      UnaryCase{"Sinh", [](double x) { return std::sinh(x); }, -5, 5},
                      UnaryCase{"Cosh", [](double x) { return std::cosh(x); }, -5, 5},
                      UnaryCase{"Asinh", [](double x) { return std::asinh(x); }, -5, 5},
                      UnaryCase{"Acosh", [](double x) { return std::acosh(x); }, 1, 10},
                      UnaryCase{"Atanh", [](double x) { return std::atanh(x); }, -0.99f, 0.99f}),
    [](const auto &p) { return std::string(p.param.codelet); });

TEST(UnaryF16, ExpAndReluRoundOnceFromF32) {
  Harness h;
  const std::size_t n = 100;
  auto in = h.input("in", Type::F16, {n});
  auto e = h.output("exp", Type::F16, {n});
  auto r = h.output("relu", Type::F16, {n});
  h.build({hwsim::program::Sequence{h.vertex("Exp", {{"in", in}, {"out", e}}), h.vertex("Relu", {{"in", in}, {"out", r}})}});
  const auto x = hwsim_test::fromHalf(hwsim_test::toHalf(randomFloats(n, -4, 4, 3)));
  h.write("in", hwsim_test::toHalf(x));
  h.engine->run(0);
  const auto ge = hwsim_test::fromHalf(h.read<std::uint16_t>("exp", n));
  const auto gr = hwsim_test::fromHalf(h.read<std::uint16_t>("relu", n));
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_NEAR(ge[i], std::exp(x[i]), 1e-3 * std::max(1.0f, std::exp(x[i])));
    EXPECT_EQ(gr[i], std::max(x[i], 0.0f));
  }
}

TEST(Unary, IntegerNegAbsWrapAndNotIsLogical) {
  Harness h;
  auto in = h.input("in", Type::S32, {4});
  auto neg = h.output("neg", Type::S32, {4});
  auto abs = h.output("abs", Type::S32, {4});
  auto b = h.input("b", Type::BOOL, {3});
  auto nb = h.output("nb", Type::BOOL, {3});
  h.build({hwsim::program::Sequence{h.vertex("Neg", {{"in", in}, {"out", neg}}), h.vertex("Abs", {{"in", in}, {"out", abs}}),
                                    h.vertex("Not", {{"in", b}, {"out", nb}})}});
  const std::vector<std::int32_t> x = {5, -7, 0, INT32_MIN};
  h.write("in", x);
  h.write("b", std::vector<std::uint8_t>{1, 0, 1});
  h.engine->run(0);
  EXPECT_EQ(h.read<std::int32_t>("neg", 4), (std::vector<std::int32_t>{-5, 7, 0, INT32_MIN}));
  EXPECT_EQ(h.read<std::int32_t>("abs", 4), (std::vector<std::int32_t>{5, 7, 0, INT32_MIN}));
  EXPECT_EQ(h.read<std::uint8_t>("nb", 3), (std::vector<std::uint8_t>{0, 1, 0}));
}

TEST(Unary, RoundHalvesToEvenAndSignOfIntegers) {
  Harness h;
  auto x = h.input("x", Type::F32, {6});
  auto rounded = h.output("rounded", Type::F32, {6});
  auto ints = h.input("ints", Type::S8, {3});
  auto sign = h.output("sign", Type::S8, {3});
  h.build({hwsim::program::Sequence{h.vertex("Round", {{"in", x}, {"out", rounded}}),
                                    h.vertex("Sign", {{"in", ints}, {"out", sign}})}});
  h.write("x", std::vector<float>{0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.6f});
  h.write("ints", std::vector<std::int8_t>{-128, 0, 7});
  h.engine->run(0);
  EXPECT_EQ(h.read<float>("rounded", 6), (std::vector<float>{0, 2, 2, -0.0f, -2, 3}));
  EXPECT_EQ(h.read<std::int8_t>("sign", 3), (std::vector<std::int8_t>{-1, 0, 1}));
}

TEST(Unary, RoundingAndTrigonometryRefuseIntegers) {
  for (const char *codelet : {"Floor", "Erf", "Sin"}) {
    Harness h;
    auto in = h.input("in", Type::S32, {2});
    auto out = h.output("out", Type::S32, {2});
    EXPECT_THROW(hwsim::compileGraph(h.graph, {h.vertex(codelet, {{"in", in}, {"out", out}})}), hwsim::Error) << codelet;
  }
}

TEST(Cast, BetweenTypesTruncatesSaturatesAndRounds) {
  Harness h;
  auto in = h.input("in", Type::F32, {6});
  auto s32 = h.output("s32", Type::S32, {6});
  auto u8 = h.output("u8", Type::U8, {6});
  auto f16 = h.output("f16", Type::F16, {6});
  auto b = h.output("b", Type::BOOL, {6});
  auto back = h.output("back", Type::F32, {6});
  h.build({hwsim::program::Sequence{h.vertex("Cast", {{"in", in}, {"out", s32}}), h.vertex("Cast", {{"in", in}, {"out", u8}}),
                                    h.vertex("Cast", {{"in", in}, {"out", f16}}), h.vertex("Cast", {{"in", in}, {"out", b}}),
                                    h.vertex("Cast", {{"in", s32}, {"out", back}})}});
  const std::vector<float> x = {1.7f, -2.9f, 300.5f, 0.0f, 1e10f, NAN};
  h.write("in", x);
  h.engine->run(0);
  EXPECT_EQ(h.read<std::int32_t>("s32", 6), (std::vector<std::int32_t>{1, -2, 300, 0, INT32_MAX, 0}));
  EXPECT_EQ(h.read<std::uint8_t>("u8", 6), (std::vector<std::uint8_t>{1, 0, 255, 0, 255, 0}));
  EXPECT_EQ(h.read<std::uint8_t>("b", 6), (std::vector<std::uint8_t>{1, 1, 1, 0, 1, 1}));
  const auto half = hwsim_test::fromHalf(h.read<std::uint16_t>("f16", 6));
  EXPECT_NEAR(half[0], 1.7f, 1e-3);
  EXPECT_NEAR(half[2], 300.5f, 0.25f);
  EXPECT_TRUE(std::isinf(half[4]));
  EXPECT_EQ(h.read<float>("back", 6), (std::vector<float>{1, -2, 300, 0, 2147483648.0f, 0}));
}

struct BinaryCase {
  const char *codelet;
  std::function<double(double, double)> ref;
};

class BinaryF32 : public ::testing::TestWithParam<std::tuple<BinaryCase, int>> {};

TEST_P(BinaryF32, BroadcastModesMatchReference) {
  const auto &[c, mode] = GetParam();  // mode 0: same shape, 1: scalar, 2: row
  Harness h;
  const std::size_t rows = 7, cols = 9;
  const std::size_t n1 = mode == 0 ? rows * cols : mode == 1 ? 1 : cols;
  auto a = h.input("a", Type::F32, {rows, cols});
  auto b = h.input("b", Type::F32, {n1});
  auto out = h.output("out", Type::F32, {rows, cols});
  h.build({h.vertex(c.codelet, {{"in0", a}, {"in1", b}, {"out", out}})});
  const auto x = randomFloats(rows * cols, 0.5f, 3, 11);
  const auto y = randomFloats(n1, 0.5f, 3, 12);
  h.write("a", x);
  h.write("b", y);
  h.engine->run(0);
  std::vector<double> want(rows * cols);
  for (std::size_t i = 0; i < want.size(); ++i) {
    const float yi = mode == 0 ? y[i] : mode == 1 ? y[0] : y[i % cols];
    want[i] = static_cast<float>(c.ref(x[i], yi));
  }
  expectNear(h.read<float>("out", rows * cols), want, 1e-6, c.codelet);
}

INSTANTIATE_TEST_SUITE_P(
    Codelets, BinaryF32,
    ::testing::Combine(::testing::Values(BinaryCase{"Add", [](double a, double b) { return float(a) + float(b); }},
                                         BinaryCase{"Sub", [](double a, double b) { return float(a) - float(b); }},
                                         BinaryCase{"Mul", [](double a, double b) { return float(a) * float(b); }},
                                         BinaryCase{"Div", [](double a, double b) { return float(a) / float(b); }},
                                         BinaryCase{"Max", [](double a, double b) { return std::max(a, b); }},
                                         BinaryCase{"Min", [](double a, double b) { return std::min(a, b); }},
                                         BinaryCase{"Pow", [](double a, double b) { return std::pow(float(a), float(b)); }}),
                       ::testing::Values(0, 1, 2)),
    [](const auto &p) {
      return std::string(std::get<0>(p.param).codelet) + "_" + std::to_string(std::get<1>(p.param));
    });

TEST(Binary, ComparisonsGiveBoolForEveryOperator) {
  Harness h;
  const std::size_t n = 50;
  auto a = h.input("a", Type::S32, {n});
  auto b = h.input("b", Type::S32, {n});
  const char *ops[] = {"Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"};
  const std::function<bool(int, int)> refs[] = {std::equal_to<int>(), std::not_equal_to<int>(), std::less<int>(),
                                                std::less_equal<int>(), std::greater<int>(), std::greater_equal<int>()};
  hwsim::program::Sequence seq;
  for (auto *op : ops) seq.add(h.vertex(op, {{"in0", a}, {"in1", b}, {"out", h.output(op, Type::BOOL, {n})}}));
  h.build({seq});
  const auto x = randomInts(n, -3, 3, 1), y = randomInts(n, -3, 3, 2);
  h.write("a", x);
  h.write("b", y);
  h.engine->run(0);
  for (int k = 0; k < 6; ++k) {
    const auto got = h.read<std::uint8_t>(ops[k], n);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], refs[k](x[i], y[i]) ? 1 : 0) << ops[k] << " " << i;
  }
}

TEST(Binary, IntegerArithmeticWrapsAndDivByZeroIsZero) {
  Harness h;
  auto a = h.input("a", Type::S32, {4});
  auto b = h.input("b", Type::S32, {4});
  auto add = h.output("add", Type::S32, {4});
  auto mul = h.output("mul", Type::S32, {4});
  auto div = h.output("div", Type::S32, {4});
  h.build({hwsim::program::Sequence{h.vertex("Add", {{"in0", a}, {"in1", b}, {"out", add}}),
                                    h.vertex("Mul", {{"in0", a}, {"in1", b}, {"out", mul}}),
                                    h.vertex("Div", {{"in0", a}, {"in1", b}, {"out", div}})}});
  h.write("a", std::vector<std::int32_t>{INT32_MAX, 7, -9, INT32_MIN});
  h.write("b", std::vector<std::int32_t>{1, 0, 2, -1});
  h.engine->run(0);
  EXPECT_EQ(h.read<std::int32_t>("add", 4), (std::vector<std::int32_t>{INT32_MIN, 7, -7, INT32_MAX}));
  EXPECT_EQ(h.read<std::int32_t>("mul", 4), (std::vector<std::int32_t>{INT32_MAX, 0, -18, INT32_MIN}));
  EXPECT_EQ(h.read<std::int32_t>("div", 4), (std::vector<std::int32_t>{INT32_MAX, 0, -4, INT32_MIN}));
}

// Python's % (sign of the divisor) and C's fmod (sign of the dividend).
double flooredMod(double a, double b) { return a - b * std::floor(a / b); }

TEST(Binary, IntegerModFloorsFmodTruncatesAndModZeroIsZero) {
  Harness h;
  auto a = h.input("a", Type::S32, {6});
  auto b = h.input("b", Type::S32, {6});
  auto mod = h.output("mod", Type::S32, {6});
  auto fmod = h.output("fmod", Type::S32, {6});
  h.build({hwsim::program::Sequence{h.vertex("Mod", {{"in0", a}, {"in1", b}, {"out", mod}}),
                                    h.vertex("Fmod", {{"in0", a}, {"in1", b}, {"out", fmod}})}});
  const std::vector<std::int32_t> x = {7, -7, 7, -7, 5, INT32_MIN}, y = {3, 3, -3, -3, 0, -1};
  h.write("a", x);
  h.write("b", y);
  h.engine->run(0);
  EXPECT_EQ(h.read<std::int32_t>("mod", 6), (std::vector<std::int32_t>{1, 2, -2, -1, 0, 0}));
  EXPECT_EQ(h.read<std::int32_t>("fmod", 6), (std::vector<std::int32_t>{1, -1, 1, -1, 0, 0}));
}

TEST(Binary, FloatModMatchesReferenceForEverySign) {
  Harness h;
  const std::size_t n = 64;
  auto a = h.input("a", Type::F32, {n});
  auto b = h.input("b", Type::F32, {n});
  auto mod = h.output("mod", Type::F32, {n});
  auto fmod = h.output("fmod", Type::F32, {n});
  h.build({hwsim::program::Sequence{h.vertex("Mod", {{"in0", a}, {"in1", b}, {"out", mod}}),
                                    h.vertex("Fmod", {{"in0", a}, {"in1", b}, {"out", fmod}})}});
  auto x = randomFloats(n, -10, 10, 61), y = randomFloats(n, -3, 3, 62);
  for (auto &v : y) v = std::abs(v) < 0.1f ? 0.5f : v;
  h.write("a", x);
  h.write("b", y);
  h.engine->run(0);
  std::vector<double> wantMod(n), wantFmod(n);
  for (std::size_t i = 0; i < n; ++i) {
    wantMod[i] = flooredMod(x[i], y[i]);
    wantFmod[i] = std::fmod(x[i], y[i]);
  }
  expectNear(h.read<float>("mod", n), wantMod, 1e-5, "mod");
  expectNear(h.read<float>("fmod", n), wantFmod, 1e-6, "fmod");
}

TEST(Binary, LogicalAndOrOnBool) {
  Harness h;
  auto a = h.input("a", Type::BOOL, {4});
  auto b = h.input("b", Type::BOOL, {4});
  auto andOut = h.output("and", Type::BOOL, {4});
  auto orOut = h.output("or", Type::BOOL, {4});
  h.build({hwsim::program::Sequence{h.vertex("And", {{"in0", a}, {"in1", b}, {"out", andOut}}),
                                    h.vertex("Or", {{"in0", a}, {"in1", b}, {"out", orOut}})}});
  h.write("a", std::vector<std::uint8_t>{0, 0, 1, 1});
  h.write("b", std::vector<std::uint8_t>{0, 1, 0, 1});
  h.engine->run(0);
  EXPECT_EQ(h.read<std::uint8_t>("and", 4), (std::vector<std::uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(h.read<std::uint8_t>("or", 4), (std::vector<std::uint8_t>{0, 1, 1, 1}));
}

TEST(Binary, F16AddRowBroadcast) {
  Harness h;
  auto a = h.input("a", Type::F16, {3, 4});
  auto b = h.input("b", Type::F16, {4});
  auto out = h.output("out", Type::F16, {3, 4});
  h.build({h.vertex("Add", {{"in0", a}, {"in1", b}, {"out", out}})});
  const auto x = hwsim_test::fromHalf(hwsim_test::toHalf(randomFloats(12, -2, 2, 5)));
  const auto y = hwsim_test::fromHalf(hwsim_test::toHalf(randomFloats(4, -2, 2, 6)));
  h.write("a", hwsim_test::toHalf(x));
  h.write("b", hwsim_test::toHalf(y));
  h.engine->run(0);
  const auto got = hwsim_test::fromHalf(h.read<std::uint16_t>("out", 12));
  for (std::size_t i = 0; i < 12; ++i) EXPECT_NEAR(got[i], x[i] + y[i % 4], 2e-3);
}

TEST(Fill, EveryTypeGetsTheConvertedValue) {
  Harness h;
  auto f = h.output("f", Type::F32, {5});
  auto s = h.output("s", Type::S32, {5});
  auto hf = h.output("h", Type::F16, {5});
  h.build({hwsim::program::Sequence{h.vertex("Fill", {{"out", f}}, 0, {{"value", {2.5}}}),
                                    h.vertex("Fill", {{"out", s}}, 0, {{"value", {-3.9}}}),
                                    h.vertex("Fill", {{"out", hf}}, 0, {{"value", {0.5}}})}});
  h.engine->run(0);
  EXPECT_EQ(h.read<float>("f", 5), std::vector<float>(5, 2.5f));
  EXPECT_EQ(h.read<std::int32_t>("s", 5), std::vector<std::int32_t>(5, -3));
  EXPECT_EQ(hwsim_test::fromHalf(h.read<std::uint16_t>("h", 5)), std::vector<float>(5, 0.5f));
}

std::vector<double> refMatMul(const std::vector<float> &a, const std::vector<float> &b, std::size_t M, std::size_t K, std::size_t N) {
  std::vector<double> c(M * N, 0.0);
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t k = 0; k < K; ++k)
      for (std::size_t j = 0; j < N; ++j) c[i * N + j] += double(a[i * K + k]) * double(b[k * N + j]);
  return c;
}

TEST(MatMul, F32AndAccumulate) {
  Harness h;
  const std::size_t M = 13, K = 31, N = 17;
  auto a = h.input("a", Type::F32, {M, K});
  auto b = h.input("b", Type::F32, {K, N});
  auto c = h.output("c", Type::F32, {M, N});
  auto acc = h.output("acc", Type::F32, {M, N});
  h.graph.createHostWrite("acc_in", acc);
  h.build({hwsim::program::Sequence{h.vertex("MatMul", {{"a", a}, {"b", b}, {"out", c}}),
                                    h.vertex("MatMul", {{"a", a}, {"b", b}, {"out", acc}}, 0, {{"accumulate", {1}}})}});
  const auto x = randomFloats(M * K, -1, 1, 21), y = randomFloats(K * N, -1, 1, 22);
  h.write("a", x);
  h.write("b", y);
  h.write("acc_in", std::vector<float>(M * N, 1.0f));
  h.engine->run(0);
  const auto want = refMatMul(x, y, M, K, N);
  expectNear(h.read<float>("c", M * N), want, 1e-5, "matmul");
  std::vector<double> wantAcc(want);
  for (auto &v : wantAcc) v += 1.0;
  expectNear(h.read<float>("acc", M * N), wantAcc, 1e-5, "matmul accumulate");
}

// Small (Eigen at every level) and big enough for oneDNN above baseline
// (kOnednnMinMacs, MatMul's F16 output accumulating in an F32 buffer).
class MatMulF16 : public ::testing::TestWithParam<std::array<std::size_t, 3>> {};

TEST_P(MatMulF16, InputsWithF32Accumulation) {
  Harness h;
  const auto [M, K, N] = GetParam();
  auto a = h.input("a", Type::F16, {M, K});
  auto b = h.input("b", Type::F16, {K, N});
  auto c32 = h.output("c32", Type::F32, {M, N});
  auto c16 = h.output("c16", Type::F16, {M, N});
  h.build({hwsim::program::Sequence{h.vertex("MatMul", {{"a", a}, {"b", b}, {"out", c32}}),
                                    h.vertex("MatMul", {{"a", a}, {"b", b}, {"out", c16}})}});
  const auto x = hwsim_test::fromHalf(hwsim_test::toHalf(randomFloats(M * K, -1, 1, 31)));
  const auto y = hwsim_test::fromHalf(hwsim_test::toHalf(randomFloats(K * N, -1, 1, 32)));
  h.write("a", hwsim_test::toHalf(x));
  h.write("b", hwsim_test::toHalf(y));
  h.engine->run(0);
  const auto want = refMatMul(x, y, M, K, N);
  // F32 accumulation of exactly representable F16 products: F32-level error only.
  expectNear(h.read<float>("c32", M * N), want, 1e-5, "f16->f32");
  expectNear(hwsim_test::fromHalf(h.read<std::uint16_t>("c16", M * N)), want, 2e-3, "f16->f16");
}

INSTANTIATE_TEST_SUITE_P(MatMul, MatMulF16,
                         ::testing::Values(std::array<std::size_t, 3>{8, 256, 4}, std::array<std::size_t, 3>{32, 256, 8}));

TEST(Reduce, SumMaxMinMeanOverAxes) {
  Harness h;
  const std::size_t A = 3, B = 4, C = 5;
  auto in = h.input("in", Type::F32, {A, B, C});
  auto sum02 = h.output("sum02", Type::F32, {B});
  auto max1 = h.output("max1", Type::F32, {A, C});
  auto minAll = h.output("minAll", Type::F32, {1});
  auto mean2 = h.output("mean2", Type::F32, {A, B});
  h.build({hwsim::program::Sequence{
      h.vertex("ReduceSum", {{"in", in}, {"out", sum02}}, 0, {{"axes", {2, 0}}}),
      h.vertex("ReduceMax", {{"in", in}, {"out", max1}}, 0, {{"axes", {1}}}),
      h.vertex("ReduceMin", {{"in", in}, {"out", minAll}}),
      h.vertex("ReduceMean", {{"in", in}, {"out", mean2}}, 0, {{"axes", {2}}})}});
  const auto x = randomFloats(A * B * C, -10, 10, 41);
  h.write("in", x);
  h.engine->run(0);
  auto at = [&](std::size_t a, std::size_t b, std::size_t c) { return double(x[(a * B + b) * C + c]); };
  std::vector<double> wSum(B, 0), wMax(A * C, -1e30), wMean(A * B, 0);
  double wMin = 1e30;
  for (std::size_t a = 0; a < A; ++a)
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t c = 0; c < C; ++c) {
        wSum[b] += at(a, b, c);
        wMax[a * C + c] = std::max(wMax[a * C + c], at(a, b, c));
        wMin = std::min(wMin, at(a, b, c));
        wMean[a * B + b] += at(a, b, c) / C;
      }
  expectNear(h.read<float>("sum02", B), wSum, 1e-5, "sum");
  expectNear(h.read<float>("max1", A * C), wMax, 0, "max");
  expectNear(h.read<float>("minAll", 1), {wMin}, 0, "min");
  expectNear(h.read<float>("mean2", A * B), wMean, 1e-5, "mean");
}

TEST(Reduce, IntegerRowsAndColumns) {
  Harness h;
  auto in = h.input("in", Type::S32, {3, 4});
  auto rows = h.output("rows", Type::S32, {3});
  auto cols = h.output("cols", Type::S32, {4});
  h.build({hwsim::program::Sequence{h.vertex("ReduceSum", {{"in", in}, {"out", rows}}, 0, {{"axes", {1}}}),
                                    h.vertex("ReduceMax", {{"in", in}, {"out", cols}}, 0, {{"axes", {0}}})}});
  h.write("in", std::vector<std::int32_t>{1, 2, 3, 4, -5, 6, -7, 8, 9, -10, 11, -12});
  h.engine->run(0);
  EXPECT_EQ(h.read<std::int32_t>("rows", 3), (std::vector<std::int32_t>{10, 2, -2}));
  EXPECT_EQ(h.read<std::int32_t>("cols", 4), (std::vector<std::int32_t>{9, 6, 11, 8}));
}

TEST(Reduce, ProdOverAxesAndIntegerProductsWrap) {
  Harness h;
  const std::size_t A = 3, B = 4;
  auto in = h.input("in", Type::F32, {A, B});
  auto rows = h.output("rows", Type::F32, {A});
  auto all = h.output("all", Type::F32, {1});
  auto ints = h.input("ints", Type::S32, {2, 2});
  auto intProd = h.output("intProd", Type::S32, {2});
  h.build({hwsim::program::Sequence{h.vertex("ReduceProd", {{"in", in}, {"out", rows}}, 0, {{"axes", {1}}}),
                                    h.vertex("ReduceProd", {{"in", in}, {"out", all}}),
                                    h.vertex("ReduceProd", {{"in", ints}, {"out", intProd}}, 0, {{"axes", {0}}})}});
  const auto x = randomFloats(A * B, 0.5f, 2, 71);
  h.write("in", x);
  h.write("ints", std::vector<std::int32_t>{65536, -3, 65537, 5});
  h.engine->run(0);
  std::vector<double> wantRows(A, 1.0);
  double wantAll = 1.0;
  for (std::size_t i = 0; i < A * B; ++i) {
    wantRows[i / B] *= x[i];
    wantAll *= x[i];
  }
  expectNear(h.read<float>("rows", A), wantRows, 1e-5, "prod rows");
  expectNear(h.read<float>("all", 1), {wantAll}, 1e-5, "prod all");
  EXPECT_EQ(h.read<std::int32_t>("intProd", 2),
            (std::vector<std::int32_t>{static_cast<std::int32_t>(65536LL * 65537LL), -15}));
}

TEST(Gather, SlicesAlongAxisWithNegativeAndOutOfRangeIndices) {
  Harness h;
  auto in = h.input("in", Type::F32, {2, 3, 2});
  auto indices = h.input("indices", Type::S32, {2, 2});
  auto out = h.output("out", Type::F32, {2, 2, 2, 2});
  h.build({h.vertex("Gather", {{"in", in}, {"indices", indices}, {"out", out}}, 0, {{"axis", {1}}})});
  std::vector<float> x(12);
  std::iota(x.begin(), x.end(), 0.0f);
  h.write("in", x);
  h.write("indices", std::vector<std::int32_t>{2, -3, 3, -1});  // 3 is out of range: zeros
  h.engine->run(0);
  EXPECT_EQ(h.read<float>("out", 16),
            (std::vector<float>{4, 5, 0, 1, 0, 0, 4, 5, 10, 11, 6, 7, 0, 0, 10, 11}));
}

TEST(Gather, ElementsPickAlongAxisPerPosition) {
  Harness h;
  auto in = h.input("in", Type::S32, {2, 3});
  auto indices = h.input("indices", Type::S32, {2, 2});
  auto out0 = h.output("out0", Type::S32, {2, 2});
  auto out1 = h.output("out1", Type::S32, {2, 2});
  h.build({hwsim::program::Sequence{
      h.vertex("GatherElements", {{"in", in}, {"indices", indices}, {"out", out0}}, 0, {{"axis", {0}}}),
      h.vertex("GatherElements", {{"in", in}, {"indices", indices}, {"out", out1}}, 0, {{"axis", {1}}})}});
  h.write("in", std::vector<std::int32_t>{1, 2, 3, 4, 5, 6});
  h.write("indices", std::vector<std::int32_t>{1, 0, -1, 1});
  h.engine->run(0);
  // axis 0: out[i][j] = in[idx[i][j]][j]; axis 1: out[i][j] = in[i][idx[i][j]].
  EXPECT_EQ(h.read<std::int32_t>("out0", 4), (std::vector<std::int32_t>{4, 2, 4, 5}));
  EXPECT_EQ(h.read<std::int32_t>("out1", 4), (std::vector<std::int32_t>{2, 1, 6, 5}));
}

TEST(Scatter, ElementsWriteAddOrMultiplyAlongAxisAndDropOutOfRange) {
  Harness h;
  auto in = h.input("in", Type::S32, {2, 3});
  auto indices = h.input("indices", Type::S32, {2, 2});
  auto updates = h.input("updates", Type::S32, {2, 2});
  auto none = h.output("none", Type::S32, {2, 3});
  auto add = h.output("add", Type::S32, {2, 3});
  auto mul = h.output("mul", Type::S32, {2, 3});
  auto connections = [&](const hwsim::Tensor &out) {
    return std::vector<hwsim::Connection>{{"in", in}, {"indices", indices}, {"updates", updates}, {"out", out}};
  };
  h.build({hwsim::program::Sequence{
      h.vertex("ScatterElements", connections(none), 0, {{"axis", {1}}, {"reduction", {0}}}),
      h.vertex("ScatterElements", connections(add), 0, {{"axis", {1}}, {"reduction", {1}}}),
      h.vertex("ScatterElements", connections(mul), 0, {{"axis", {1}}, {"reduction", {2}}})}});
  h.write("in", std::vector<std::int32_t>{1, 2, 3, 4, 5, 6});
  h.write("indices", std::vector<std::int32_t>{2, 2, -3, 7});  // row 0 writes column 2 twice; 7 is out of range
  h.write("updates", std::vector<std::int32_t>{10, 20, 30, 40});
  h.engine->run(0);
  EXPECT_EQ(h.read<std::int32_t>("none", 6), (std::vector<std::int32_t>{1, 2, 20, 30, 5, 6}));
  EXPECT_EQ(h.read<std::int32_t>("add", 6), (std::vector<std::int32_t>{1, 2, 33, 34, 5, 6}));
  EXPECT_EQ(h.read<std::int32_t>("mul", 6), (std::vector<std::int32_t>{1, 2, 600, 120, 5, 6}));
}

TEST(Softmax, RowsSumToOneAndMatchReference) {
  Harness h;
  const std::size_t rows = 4, cols = 10;
  auto in = h.input("in", Type::F32, {rows, cols});
  auto out = h.output("out", Type::F32, {rows, cols});
  auto arg = h.output("arg", Type::S32, {rows});
  h.build({hwsim::program::Sequence{h.vertex("Softmax", {{"in", in}, {"out", out}}),
                                    h.vertex("ArgMax", {{"in", in}, {"out", arg}})}});
  auto x = randomFloats(rows * cols, -20, 20, 51);
  x[5] = 1000.0f;  // large logits must not overflow
  h.write("in", x);
  h.engine->run(0);
  std::vector<double> want(rows * cols);
  std::vector<std::int32_t> wantArg(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    const double m = *std::max_element(x.begin() + r * cols, x.begin() + (r + 1) * cols);
    wantArg[r] = static_cast<std::int32_t>(std::max_element(x.begin() + r * cols, x.begin() + (r + 1) * cols) - (x.begin() + r * cols));
    double s = 0;
    for (std::size_t c = 0; c < cols; ++c) s += std::exp(x[r * cols + c] - m);
    for (std::size_t c = 0; c < cols; ++c) want[r * cols + c] = std::exp(x[r * cols + c] - m) / s;
  }
  expectNear(h.read<float>("out", rows * cols), want, 1e-5, "softmax");
  EXPECT_EQ(h.read<std::int32_t>("arg", rows), wantArg);
}

TEST(Increment, AddsStep) {
  Harness h;
  auto c = h.output("c", Type::S32, {2});
  h.build({hwsim::program::Repeat(5, h.vertex("Increment", {{"counter", c}}, 0, {{"step", {3}}}))});
  h.engine->run(0);
  EXPECT_EQ(h.read<std::int32_t>("c", 2), (std::vector<std::int32_t>{15, 15}));
}

TEST(Codelets, LibraryListsEveryName) {
  const auto names = hwsim::codeletNames();
  for (const char *n : {"Neg", "Abs", "Exp", "Log", "Sqrt", "Relu", "Sigmoid", "Tanh", "Cast", "Add", "Sub", "Mul", "Div",
                        "Max", "Min", "Pow", "Equal", "Less", "And", "Or", "Not", "Fill", "MatMul", "ReduceSum", "ReduceMax",
                        "ReduceMin", "ReduceMean", "Softmax", "ArgMax", "Increment", "Erf", "Floor", "Ceil", "Round",
                        "Sign", "Sin", "Cos", "Mod", "Fmod", "ReduceProd", "Gather", "GatherElements",
                        "ScatterElements"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  }
}

}  // namespace

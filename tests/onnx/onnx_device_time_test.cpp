// Weights of compiled ONNX models stay on their tiles (docs/onnx.md,
// "Options"): the copies of a MatMul's or Gemm's constant weights to the
// tiles that multiply them are made by the Load program, so each Main run
// exchanges only the activations, with the outputs they always had.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "mrt_graph.hpp"
#include "onnx_matmul_model.hpp"

namespace {

using onnx_test::matMulModel;
using onnx_test::values;

constexpr onnx_test::MatMulShape kShape{256, 128, 128};

mrt::Model compile(const std::string &bytes) {
  return mrt::compileOnnxMemory(mrt::Span<const std::byte>(reinterpret_cast<const std::byte *>(bytes.data()), bytes.size()),
                                mrt::OnnxOptions{});
}

// The modelled cycles of the step named `name`; fails the test if none.
std::uint64_t stepCycles(const mrt::Executable &exe, const std::string &name) {
  for (const auto &s : exe.steps()) {
    if (s.name == name) return s.modelled_cycles;
  }
  ADD_FAILURE() << "no step " << name;
  return 0;
}

double worstError(const mrt::TensorMemory &out, const std::vector<double> &want) {
  const auto got = out.as<float>("y");
  EXPECT_EQ(got.size(), want.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < want.size() && i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]));
  return worst;
}

class OnnxWeights : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxWeights, InitializerWeightsAreExchangedByLoadNotByEachMainRun) {
  const std::string op = GetParam();
  const mrt::Model weights = compile(matMulModel(op, kShape, false));
  const mrt::Executable exe = mrt::Executable::fromModel(weights);
  // The multiply uses several row blocks, so the weights are copied to the
  // tiles of the blocks that do not hold them: once, by Load (program 0),
  // which is exactly streaming them in and that exchange.
  const std::string weightLoad = op == "Gemm" ? "load/w_T" : "load/w";
  EXPECT_EQ(exe.pipeline(0).latency_cycles, stepCycles(exe, weightLoad) + stepCycles(exe, "y/exchange_b"));
  // The same multiply with w a graph input exchanges w in Main, on top of
  // streaming it in: Main of the initializer model costs less than the
  // rest of it.
  const mrt::Model input = compile(matMulModel(op, kShape, true));
  const mrt::Executable inputExe = mrt::Executable::fromModel(input);
  const std::uint64_t inputMain = inputExe.pipeline(1).latency_cycles;
  const std::uint64_t weightsMain = exe.pipeline(1).latency_cycles;
  EXPECT_LT(weightsMain + stepCycles(inputExe, "y/exchange_b"), inputMain - stepCycles(inputExe, "input/w") + 1)
      << "Main " << weightsMain << " against " << inputMain;

  // Same outputs, run after run.
  const std::vector<double> want = onnx_test::matMulReference(op, kShape);
  const std::vector<float> x = values(kShape.m * kShape.k, onnx_test::xAt);
  const std::vector<float> w = values(kShape.k * kShape.n, onnx_test::wAt);
  mrt::ModelRunner runner(weights);
  for (int run = 0; run < 2; ++run) {
    EXPECT_LT(worstError(runner.execute({mrt::ConstTensorView("x", x)}), want), 1e-4) << op << " run " << run;
  }
  mrt::ModelRunner inputRunner(input);
  EXPECT_LT(worstError(inputRunner.execute({mrt::ConstTensorView("x", x), mrt::ConstTensorView("w", w)}), want), 1e-4);
}

INSTANTIATE_TEST_SUITE_P(MatMulAndGemm, OnnxWeights, ::testing::Values("MatMul", "Gemm"));

}  // namespace

// Sessions running the example models on small IPU Model devices, results
// checked against reference math computed here from the model's TensorData.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <cmath>

#include <cstdio>

#include "popef/writer.hpp"
#include "session_test_util.hpp"

namespace mrt {
namespace {

using namespace session_test;

// softmax(relu(image.w1 + b1).w2 + b2) for one row.
std::vector<float> mlpReference(const popef::Model &model, const std::vector<float> &image) {
  const auto w1 = floatsOf(model.tensorData("w1"));
  const auto b1 = floatsOf(model.tensorData("b1"));
  const auto w2 = floatsOf(model.tensorData("w2"));
  const auto b2 = floatsOf(model.tensorData("b2"));
  constexpr std::size_t kIn = 784, kHidden = 128, kOut = 10;
  std::vector<double> hidden(kHidden);
  for (std::size_t j = 0; j < kHidden; ++j) {
    double sum = b1[j];
    for (std::size_t i = 0; i < kIn; ++i) sum += double{image[i]} * w1[i * kHidden + j];
    hidden[j] = std::max(0.0, sum);
  }
  std::vector<double> logits(kOut);
  for (std::size_t k = 0; k < kOut; ++k) {
    double sum = b2[k];
    for (std::size_t j = 0; j < kHidden; ++j) sum += hidden[j] * w2[j * kOut + k];
    logits[k] = sum;
  }
  const double top = *std::max_element(logits.begin(), logits.end());
  double total = 0;
  for (double &v : logits) total += (v = std::exp(v - top));
  std::vector<float> probs(kOut);
  for (std::size_t k = 0; k < kOut; ++k) probs[k] = static_cast<float>(logits[k] / total);
  return probs;
}

TEST(SessionTest, MlpWeightsFromPopefImageAndProbsThroughCallbacks) {
  const auto model = exampleModel("mlp");
  Session session(model);
  session.bindToDevice(smallDevice(model));
  // Weights are bound from TensorData; only image and probs need the user.
  ASSERT_EQ(session.getUserInputAnchors().size(), 1u);
  EXPECT_EQ(session.getUserInputAnchors()[0]->name(), "image");
  EXPECT_EQ(session.getInputAnchors().size(), 5u);
  ASSERT_EQ(session.getUserOutputAnchors().size(), 1u);
  EXPECT_EQ(session.getUserOutputAnchors()[0]->name(), "probs");

  std::vector<float> image = example_models::exampleWeights(784, 0.0f, 1.0f, 7);
  std::vector<float> probs(10, -1.0f);
  int factoryCalls = 0;
  session.setUserInputHandler([&](const CallbackInfo &info) -> CallbackHandle {
    ++factoryCalls;
    return info.anchor.name() == "image" ? readFrom(image) : CallbackHandle{};
  });
  session.setUserOutputHandler([&](const CallbackInfo &) { return writeTo(probs); });
  EXPECT_EQ(factoryCalls, 5);  // every input; weights keep their PopEF data (nullptr)
  EXPECT_TRUE(session.anchorsNotConnectedToCallbacks({0, 1}).empty());

  for (std::uint64_t round = 0; round < 2; ++round) {
    image = example_models::exampleWeights(784, 0.0f, 1.0f, 7 + round);
    session.runMainPrograms();  // the first one runs Load implicitly
    const auto expected = mlpReference(*model, image);
    for (std::size_t k = 0; k < 10; ++k) EXPECT_NEAR(probs[k], expected[k], 1e-5) << "round " << round << " k " << k;
  }
}

TEST(SessionTest, StatefulLoadMainThreeTimesSave) {
  const auto model = exampleModel("stateful", 2);
  Session session(model);
  session.bindToDevice(smallDevice(model));
  std::vector<float> x(8), accOut(4), accSave(4, -1.0f);
  session.setCallbackForAnchor("x", readFrom(x));
  session.setCallbackForAnchor("acc_out", writeTo(accOut));
  session.setCallbackForAnchor("acc_save", writeTo(accSave));
  session.runLoadPrograms();
  std::vector<float> expected(4, 0.0f);
  for (int round = 1; round <= 3; ++round) {
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(round * 10 + static_cast<int>(i));
    for (std::size_t j = 0; j < 4; ++j) expected[j] += x[j] + x[4 + j];
    session.runMainPrograms();
    EXPECT_EQ(accOut, expected) << "round " << round;
  }
  session.runSavePrograms();
  EXPECT_EQ(accSave, expected);
}

TEST(SessionTest, ConditionalBothWays) {
  const auto model = exampleModel("conditional");
  Session session(model);
  session.bindToDevice(smallDevice(model));
  std::vector<float> x = example_models::exampleWeights(8, -3.0f, 3.0f, 5), y(8);
  std::vector<std::int32_t> flag{1};
  session.setCallbackForAnchor("x", readFrom(x));
  session.setCallbackForAnchor("flag", [&](void *p) { std::memcpy(p, flag.data(), sizeof(std::int32_t)); });
  session.setCallbackForAnchor("y", writeTo(y));
  session.runMainPrograms();
  for (std::size_t i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(y[i], 2 * x[i]);
  flag[0] = 0;
  session.runMainPrograms();
  for (std::size_t i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(y[i], x[i] - 1);
}

TEST(SessionTest, RemoteBufferFilledFromTensorData) {
  const auto model = exampleModel("remote_buffer");
  Session session(model);
  session.bindToDevice(smallDevice(model));
  EXPECT_EQ(session.getUserInputAnchors().size(), 1u);  // x only: w is the session's
  std::vector<float> x = example_models::exampleWeights(8, -3.0f, 3.0f, 9), y(8);
  session.setCallbackForAnchor("x", readFrom(x));
  session.setCallbackForAnchor("y", writeTo(y));
  session.runMainPrograms();
  const auto w = floatsOf(model->tensorData("w"));
  for (std::size_t i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(y[i], x[i] + w[i]);
  EXPECT_EQ(captureError([&] { session.setCallbackForAnchor("w", {}); }).code(), ErrorCode::InvalidArgument);
}

TEST(SessionTest, RemoteBufferFilledFromTheUsersBytesNowAndAtEveryLoad) {
  const auto model = exampleModel("remote_buffer");
  Session session(model);
  std::vector<float> x = example_models::exampleWeights(8, -3.0f, 3.0f, 4), y(8);
  session.setCallbackForAnchor("x", readFrom(x));
  session.setCallbackForAnchor("y", writeTo(y));
  const auto bytesOf = [](const std::vector<float> &w) {
    return popef::SharedBytes::copyOf(std::as_bytes(std::span<const float>(w)));
  };
  // Before binding: used by the first load.
  const std::vector<float> before = example_models::exampleWeights(8, 10.0f, 20.0f, 5);
  session.setRemoteBufferData("w", bytesOf(before));
  session.bindToDevice(smallDevice(model));
  session.runMainPrograms();
  for (std::size_t i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(y[i], x[i] + before[i]);
  // While loaded: copied at once.
  const std::vector<float> after = example_models::exampleWeights(8, -20.0f, -10.0f, 6);
  session.setRemoteBufferData("w", bytesOf(after));
  session.runMainPrograms();
  for (std::size_t i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(y[i], x[i] + after[i]);
  // A reload (as after a device reset) fills it from the user's bytes again.
  session.reload();
  session.runMainPrograms();
  for (std::size_t i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(y[i], x[i] + after[i]);

  using ::testing::HasSubstr;
  Error error = captureError([&] { session.setRemoteBufferData("w", bytesOf(std::vector<float>(3))); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(error.what(), HasSubstr("remote buffer 'w' of anchor 'w' takes 32 bytes (F32[8]), got 12"));
  error = captureError([&] { session.setRemoteBufferData("x", bytesOf(x)); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(error.what(), HasSubstr("anchor 'x' does not live in a remote buffer"));
  EXPECT_EQ(captureError([&] { session.setRemoteBufferData("v", bytesOf(x)); }).code(), ErrorCode::NotFound);
  session.runMainPrograms();  // the refused calls changed nothing
  for (std::size_t i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(y[i], x[i] + after[i]);
}

// Two stateful sessions on one device, each feeding its saved accumulator
// back into its Load: switching runs Save then Load, so each keeps its own sum.
TEST(SessionTest, TwoSessionsShareOneDeviceWithImplicitSaveAndLoad) {
  const auto model = exampleModel("stateful");
  const auto device = smallDevice(model);
  SessionConfig config;
  config.pred_tensor_data = predicate_factory::popef_data_usage::predProgramFlowLoad(model->metadata.programFlow());
  struct State {
    std::vector<float> x = std::vector<float>(4), acc = std::vector<float>(4, 0.0f), accOut = std::vector<float>(4);
    int saves = 0, loads = 0;
  };
  State a, b;
  Session sa(model, config), sb(model, config);
  for (auto [session, state] : {std::pair{&sa, &a}, std::pair{&sb, &b}}) {
    EXPECT_EQ(session->getUserInputAnchors().size(), 2u);  // acc is the user's now
    session->setCallbackForAnchor("acc", [s = state](void *p) {
      ++s->loads;
      std::memcpy(p, s->acc.data(), 16);
    });
    session->setCallbackForAnchor("acc_save", [s = state](void *p) {
      ++s->saves;
      std::memcpy(s->acc.data(), p, 16);
    });
    session->setCallbackForAnchor("x", readFrom(state->x));
    session->setCallbackForAnchor("acc_out", writeTo(state->accOut));
  }
  sa.bindToDevice(device);
  sb.bindToDevice(device);  // sa has not run Load yet: nothing to save
  EXPECT_EQ(a.saves, 0);
  std::vector<float> sumA(4, 0.0f), sumB(4, 0.0f);
  for (int round = 0; round < 3; ++round) {
    std::fill(a.x.begin(), a.x.end(), 1.0f + static_cast<float>(round));
    std::fill(b.x.begin(), b.x.end(), 100.0f);
    sa.runMainPrograms();
    for (float &v : sumA) v += 1.0f + static_cast<float>(round);
    EXPECT_EQ(a.accOut, sumA) << "round " << round;
    sb.runMainPrograms();
    for (float &v : sumB) v += 100.0f;
    EXPECT_EQ(b.accOut, sumB) << "round " << round;
  }
  EXPECT_EQ(a.loads, 3);
  EXPECT_EQ(a.saves, 3);  // displaced by sb after each of its rounds
  EXPECT_EQ(b.loads, 3);
  EXPECT_EQ(b.saves, 2);  // sb is still active
  sb.unloadFromDevice();
  EXPECT_EQ(b.saves, 3);
  EXPECT_EQ(b.acc, sumB);
}

TEST(SessionTest, UnloadAndReloadRunLoadAgain) {
  const auto model = exampleModel("add_one");
  Session session(model);
  session.bindToDevice(smallDevice(model));
  std::vector<float> x(16, 2.0f), y(16);
  session.setCallbackForAnchor("x", readFrom(x));
  session.setCallbackForAnchor("y", writeTo(y));
  session.runMainPrograms();
  EXPECT_EQ(y, std::vector<float>(16, 3.0f));
  session.unloadFromDevice();
  EXPECT_EQ(captureError([&] { session.runMainPrograms(); }).code(), ErrorCode::FailedPrecondition);
  session.reload();
  x.assign(16, 5.0f);
  session.runMainPrograms();
  EXPECT_EQ(y, std::vector<float>(16, 6.0f));
}

TEST(SessionTest, FromPopefPaths) {
  const auto model = exampleModel("add_one");
  const std::string path = ::testing::TempDir() + "session_test_add_one.popef";
  {
    popef::Writer writer(path);
    writer.writeModel(*model);
    writer.close();
  }
  Session session(std::vector<std::string>{path});
  EXPECT_EQ(session.model()->metadata.executable(), "add_one");
  session.bindToDevice(smallDevice(session.model()));
  std::vector<float> x(16, 7.0f), y(16);
  session.setCallbackForAnchor("x", readFrom(x));
  session.setCallbackForAnchor("y", writeTo(y));
  session.runMainPrograms();
  EXPECT_EQ(y, std::vector<float>(16, 8.0f));
  std::remove(path.c_str());
}

TEST(SessionTest, ImmediateGetsADeviceOrFails) {
  // A system without IPUs: Immediate fails in the constructor, Unavailable.
  ::setenv("MRT_HWSIM_IPUS", "0", 1);
  SessionConfig config;
  config.policy = LaunchPolicy::Immediate;
  EXPECT_EQ(captureError([&] { Session session(exampleModel("add_one"), config); }).code(), ErrorCode::Unavailable);
  EXPECT_EQ(captureError([&] { Session session(std::vector<std::string>{"/nonexistent.popef"}); }).code(),
            ErrorCode::NotFound);
}

TEST(SessionTest, DeviceErrorCarriesRecoveryActionAndReloadRecovers) {
  const auto model = exampleModel("add_one");
  Session session(model);
  session.bindToDevice(smallDevice(model));
  std::vector<float> x(16, 1.0f), y(16);
  session.setCallbackForAnchor("x", readFrom(x));
  session.setCallbackForAnchor("y", writeTo(y));
  const auto locations = session.engine().getSimulatedErrorLocations("Add");
  ASSERT_FALSE(locations.empty());
  session.engine().insertSimulatedError(hwsim::DeviceErrorCode::TileException, locations[0]);
  const Error error = captureError([&] { session.runMainPrograms(); });
  EXPECT_EQ(error.code(), ErrorCode::DeviceError);
  EXPECT_NE(std::string(error.what()).find("IPU_RESET"), std::string::npos) << error.what();
  const Error again = captureError([&] { session.runMainPrograms(); });
  EXPECT_EQ(again.code(), ErrorCode::FailedPrecondition);
  EXPECT_NE(std::string(again.what()).find("reload()"), std::string::npos) << again.what();
  session.engine().clearSimulatedErrors();
  session.reload();
  session.runMainPrograms();
  EXPECT_EQ(y, std::vector<float>(16, 2.0f));
}

}  // namespace
}  // namespace mrt

// Every example model of DESIGN.md 9: its anchors and flow, a write/read
// round trip, and its semantics checked by running the executable read back
// from the file on a simulated IPU against reference math.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include <hwsim/device.hpp>
#include <hwsim/engine.hpp>
#include <hwsim/executable.hpp>

#include "internal_example_models.hpp"
#include "popef/package_hash.hpp"
#include "popef/reader.hpp"
#include "popef_test_util.hpp"

namespace mrt::popef {
namespace {

using example_models::buildExampleModel;
using example_models::exampleModelNames;
using example_models::ExampleOptions;
using example_models::exampleWeights;

// Loads a model's executable on an IPU-model device the way a Session does
// for anchors with PopEF data: TensorData anchors are streamed from (or, for
// remote buffers, copied into the buffer from) the model's mapped bytes.
class ModelHarness {
 public:
  explicit ModelHarness(const Model &model)
      : model_(model),
        executable_(hwsim::Executable::deserialize(model.executable().bytes().data(),
                                                   model.executable().bytes().size())),
        engine_(executable_),
        device_(hwsim::DeviceManager::createIpuModelDevice(deviceTarget(executable_))) {
    EXPECT_TRUE(device_.attach());
    engine_.load(device_);
    for (const Anchor &anchor : model.metadata.anchors()) {
      if (anchor.dataSource() != DataSource::TensorData) continue;
      const TensorData &data = model.tensorData(anchor.name());
      auto *bytes = const_cast<std::byte *>(data.data());  // H2D streams only read
      if (anchor.remoteBuffer()) {
        const auto slots = static_cast<std::uint64_t>(anchor.remoteBuffer()->repeats);
        const std::size_t slotBytes = data.size() / slots;
        for (unsigned replica = 0; replica < executable_.replicationFactor(); ++replica) {
          for (std::uint64_t slot = 0; slot < slots; ++slot) {
            engine_.copyToRemoteBuffer(bytes + slot * slotBytes, anchor.remoteBuffer()->name, slot,
                                       replica);
          }
        }
      } else {
        engine_.connectStream(anchor.handle(), bytes);
      }
    }
  }

  template <typename T>
  void connect(const std::string &handle, std::vector<T> &buffer, unsigned replica = hwsim::kAllReplicas) {
    engine_.connectStream(handle, buffer.data(), replica);
  }

  void run(const std::vector<ProgramFlow::ProgramIndexType> &programs) {
    for (const auto program : programs) engine_.run(static_cast<unsigned>(program));
  }
  void load() { run(model_.metadata.programFlow().load()); }
  void main() { run(model_.metadata.programFlow().main()); }
  void save() { run(model_.metadata.programFlow().save()); }

 private:
  static hwsim::Target deviceTarget(const hwsim::Executable &exe) {
    hwsim::Target target = exe.target();
    target.numIpus = exe.numIpus();  // all replicas
    return target;
  }

  const Model &model_;
  hwsim::Executable executable_;
  hwsim::Engine engine_;
  hwsim::Device device_;
};

std::vector<float> floatsOf(const TensorData &data) {
  std::vector<float> values(data.size() / sizeof(float));
  std::memcpy(values.data(), data.data(), data.size());
  return values;
}

std::vector<float> inputs(std::size_t count, std::uint64_t seed) {
  return exampleWeights(count, -2.0f, 2.0f, seed);
}

// Writes the model, reads it back, checks the copy equals the original, and
// returns the copy (so the semantics below run on what a file holds).
std::shared_ptr<Model> roundTrip(const std::shared_ptr<Model> &model, const std::string &path) {
  test::writeModelFile(*model, path);
  auto loaded = loadModel({path});
  test::expectSameModel(*loaded, *model);
  return loaded;
}

void expectAnchor(const Model &model, const std::string &name, TensorType type, const TensorInfo &info,
                  DataSource source = DataSource::None) {
  const Anchor *anchor = model.metadata.findAnchor(name);
  ASSERT_NE(anchor, nullptr) << name;
  EXPECT_EQ(anchor->handle(), name);
  EXPECT_EQ(anchor->type(), type) << name;
  EXPECT_EQ(anchor->tensorInfo(), info) << name;
  EXPECT_EQ(anchor->dataSource(), source) << name;
}

class ExampleModelsTest : public ::testing::Test {
 protected:
  std::shared_ptr<Model> build(const std::string &name, ExampleOptions options) {
    options.tiles = 16;  // small targets keep compilation quick
    return roundTrip(buildExampleModel(name, options), dir_.file(name + ".popef"));
  }
  test::TempDir dir_;
};

TEST_F(ExampleModelsTest, NamesAreTheDesignsSevenAndTimeMajor) {
  EXPECT_EQ(exampleModelNames(), (std::vector<std::string>{"add_one", "mlp", "stateful", "conditional",
                                                           "remote_buffer", "time_major", "replicated",
                                                           "pipeline2"}));
  EXPECT_EQ(test::captureError([] { buildExampleModel("resnet"); }).code(), ErrorCode::NotFound);
  ExampleOptions zeroBatch;
  zeroBatch.batch = 0;
  EXPECT_EQ(test::captureError([&] { buildExampleModel("add_one", zeroBatch); }).code(),
            ErrorCode::InvalidArgument);
  ExampleOptions threeIpus;
  threeIpus.ipus = 3;
  EXPECT_EQ(test::captureError([&] { buildExampleModel("pipeline2", threeIpus); }).code(),
            ErrorCode::InvalidArgument);
}

TEST_F(ExampleModelsTest, AddOne) {
  ExampleOptions options;
  options.batch = 3;
  options.size = 20;
  const auto model = build("add_one", options);
  const Metadata &m = model->metadata;
  EXPECT_EQ(m.executable(), "add_one");
  EXPECT_EQ(m.replicationFactor(), 1u);
  EXPECT_EQ(m.numIpus(), 1u);
  EXPECT_EQ(m.ipuVersion(), 2u);
  EXPECT_EQ(m.packageHash(), runtimePackageHash());
  EXPECT_EQ(m.programFlow().main(), std::vector<ProgramFlow::ProgramIndexType>{0});
  EXPECT_TRUE(m.programFlow().load().empty());
  expectAnchor(*model, "x", TensorType::INPUT, TensorInfo(DataType::F32, {3, 20}));
  expectAnchor(*model, "y", TensorType::OUTPUT, TensorInfo(DataType::F32, {3, 20}));

  ModelHarness harness(*model);
  std::vector<float> x = inputs(60, 7);
  std::vector<float> y(60);
  harness.connect("x", x);
  harness.connect("y", y);
  harness.main();
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], x[i] + 1.0f) << i;
}

// A large add_one is spread over tiles (one row of 1 MiB would not fit on
// one 624 KiB tile), computes the same (in place), and one too big for the
// IPU's memory is refused with the sizes named.
TEST_F(ExampleModelsTest, LargeAddOneSpreadsOverTiles) {
  for (const std::size_t bytes : {std::size_t{1} << 20, std::size_t{16} << 20}) {
    SCOPED_TRACE(bytes);
    ExampleOptions options;
    options.size = bytes / sizeof(float);
    const auto model = buildExampleModel("add_one", options);
    ModelHarness harness(*model);
    std::vector<float> x = inputs(options.size, 11);
    std::vector<float> y(options.size);
    harness.connect("x", x);
    harness.connect("y", y);
    harness.main();
    for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], x[i] + 1.0f) << i;
  }
  ExampleOptions huge;
  huge.size = std::size_t{250} << 20;  // 1000 MiB
  const Error error = test::captureError([&] { buildExampleModel("add_one", huge); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(error.what(),
               "add_one: x of [1, 262144000] F32 needs 1048576000 bytes, more than the IPU's memory "
               "(1472 tiles x 638976 bytes = 940572672 bytes)");
}

TEST_F(ExampleModelsTest, ReplicatedRunsAddOneOnEachReplica) {
  ExampleOptions options;
  options.batch = 2;
  options.size = 8;
  const auto model = build("replicated", options);
  EXPECT_EQ(model->metadata.replicationFactor(), 2u);
  EXPECT_EQ(model->metadata.numIpus(), 2u);
  EXPECT_TRUE(model->metadata.findAnchor("x")->isPerReplica());
  EXPECT_TRUE(model->metadata.findAnchor("y")->isPerReplica());

  ModelHarness harness(*model);
  std::vector<std::vector<float>> x = {inputs(16, 1), inputs(16, 2)};
  std::vector<std::vector<float>> y(2, std::vector<float>(16));
  for (unsigned r = 0; r < 2; ++r) {
    harness.connect("x", x[r], r);
    harness.connect("y", y[r], r);
  }
  harness.main();
  for (unsigned r = 0; r < 2; ++r) {
    for (std::size_t i = 0; i < 16; ++i) EXPECT_EQ(y[r][i], x[r][i] + 1.0f) << r << "/" << i;
  }
}

// softmax(relu(image.w1 + b1).w2 + b2) in double precision.
std::vector<double> mlpReference(const std::vector<float> &x, const Model &model, std::size_t batch) {
  const auto w1 = floatsOf(model.tensorData("w1"));
  const auto b1 = floatsOf(model.tensorData("b1"));
  const auto w2 = floatsOf(model.tensorData("w2"));
  const auto b2 = floatsOf(model.tensorData("b2"));
  constexpr std::size_t I = 784, H = 128, O = 10;
  std::vector<double> out(batch * O);
  for (std::size_t r = 0; r < batch; ++r) {
    std::vector<double> h(H);
    for (std::size_t j = 0; j < H; ++j) {
      double s = b1[j];
      for (std::size_t k = 0; k < I; ++k) s += double(x[r * I + k]) * w1[k * H + j];
      h[j] = std::max(s, 0.0);
    }
    std::vector<double> o(O);
    double top = -1e300;
    for (std::size_t j = 0; j < O; ++j) {
      o[j] = b2[j];
      for (std::size_t k = 0; k < H; ++k) o[j] += h[k] * w2[k * O + j];
      top = std::max(top, o[j]);
    }
    double z = 0;
    for (double v : o) z += std::exp(v - top);
    for (std::size_t j = 0; j < O; ++j) out[r * O + j] = std::exp(o[j] - top) / z;
  }
  return out;
}

void checkMlp(const Model &model, std::size_t batch) {
  expectAnchor(model, "image", TensorType::INPUT, TensorInfo(DataType::F32, {std::int64_t(batch), 784}));
  expectAnchor(model, "probs", TensorType::OUTPUT, TensorInfo(DataType::F32, {std::int64_t(batch), 10}));
  expectAnchor(model, "w1", TensorType::INPUT, TensorInfo(DataType::F32, {784, 128}), DataSource::TensorData);
  expectAnchor(model, "b2", TensorType::INPUT, TensorInfo(DataType::F32, {10}), DataSource::TensorData);
  EXPECT_EQ(model.metadata.findAnchor("w1")->programs(), model.metadata.programFlow().load());
  EXPECT_EQ(model.metadata.findAnchor("image")->programs(), model.metadata.programFlow().main());

  ModelHarness harness(model);
  std::vector<float> image = exampleWeights(batch * 784, 0.0f, 1.0f, 99);
  std::vector<float> probs(batch * 10);
  harness.connect("image", image);
  harness.connect("probs", probs);
  harness.load();
  harness.main();
  const auto want = mlpReference(image, model, batch);
  for (std::size_t i = 0; i < probs.size(); ++i) EXPECT_NEAR(probs[i], want[i], 1e-5) << i;
}

TEST_F(ExampleModelsTest, MlpMatchesReferenceMathWithItsOwnWeights) {
  ExampleOptions options;
  options.batch = 2;
  options.seed = 5;
  const auto model = build("mlp", options);
  EXPECT_EQ(model->metadata.numIpus(), 1u);
  checkMlp(*model, 2);
  // The weights are a function of the seed.
  options.tiles = 16;
  const auto again = buildExampleModel("mlp", options);
  EXPECT_TRUE(test::sameBytes(again->tensorData("w1").bytes(), model->tensorData("w1").bytes()));
  options.seed = 6;
  const auto other = buildExampleModel("mlp", options);
  EXPECT_FALSE(test::sameBytes(other->tensorData("w1").bytes(), model->tensorData("w1").bytes()));
}

TEST_F(ExampleModelsTest, Pipeline2IsMlpOnTwoIpus) {
  ExampleOptions options;
  options.batch = 2;
  const auto model = build("pipeline2", options);
  EXPECT_EQ(model->metadata.numIpus(), 2u);
  EXPECT_EQ(model->metadata.replicationFactor(), 1u);
  checkMlp(*model, 2);
}

TEST_F(ExampleModelsTest, StatefulAccumulatesAndSaves) {
  ExampleOptions options;
  options.batch = 3;
  const auto model = build("stateful", options);
  const ProgramFlow &flow = model->metadata.programFlow();
  EXPECT_EQ(flow.load(), std::vector<ProgramFlow::ProgramIndexType>{0});
  EXPECT_EQ(flow.main(), std::vector<ProgramFlow::ProgramIndexType>{1});
  EXPECT_EQ(flow.save(), std::vector<ProgramFlow::ProgramIndexType>{2});
  expectAnchor(*model, "acc", TensorType::INPUT, TensorInfo(DataType::F32, {4}), DataSource::TensorData);
  expectAnchor(*model, "acc_out", TensorType::OUTPUT, TensorInfo(DataType::F32, {4}));
  expectAnchor(*model, "acc_save", TensorType::OUTPUT, TensorInfo(DataType::F32, {4}));
  EXPECT_EQ(floatsOf(model->tensorData("acc")), std::vector<float>(4, 0.0f));

  ModelHarness harness(*model);
  std::vector<float> x(12);
  std::vector<float> out(4);
  std::vector<float> saved(4);
  harness.connect("x", x);
  harness.connect("acc_out", out);
  harness.connect("acc_save", saved);
  harness.load();
  std::vector<double> expected(4, 0.0);
  for (std::uint64_t round = 0; round < 3; ++round) {
    const std::vector<float> next = inputs(12, 40 + round);
    std::copy(next.begin(), next.end(), x.begin());  // the stream holds x's address
    harness.main();
    for (std::size_t r = 0; r < 3; ++r) {
      for (std::size_t c = 0; c < 4; ++c) expected[c] += x[r * 4 + c];
    }
    for (std::size_t c = 0; c < 4; ++c) EXPECT_NEAR(out[c], expected[c], 1e-5) << round;
  }
  harness.save();
  for (std::size_t c = 0; c < 4; ++c) EXPECT_NEAR(saved[c], expected[c], 1e-5);
}

TEST_F(ExampleModelsTest, ConditionalChoosesOnTheDevice) {
  ExampleOptions options;
  options.batch = 2;
  const auto model = build("conditional", options);
  expectAnchor(*model, "flag", TensorType::INPUT, TensorInfo(DataType::S32, {1}));
  expectAnchor(*model, "x", TensorType::INPUT, TensorInfo(DataType::F32, {2, 8}));

  ModelHarness harness(*model);
  std::vector<float> x = inputs(16, 3);
  std::vector<std::int32_t> flag{0};
  std::vector<float> y(16);
  harness.connect("x", x);
  harness.connect("flag", flag);
  harness.connect("y", y);
  for (const std::int32_t value : {1, 0, -5}) {
    flag[0] = value;
    harness.main();
    for (std::size_t i = 0; i < 16; ++i) {
      EXPECT_EQ(y[i], value != 0 ? 2.0f * x[i] : x[i] - 1.0f) << value << "/" << i;
    }
  }
}

TEST_F(ExampleModelsTest, RemoteBufferAddsItsTensorData) {
  ExampleOptions options;
  options.batch = 2;
  options.seed = 11;
  const auto model = build("remote_buffer", options);
  const Anchor *w = model->metadata.findAnchor("w");
  ASSERT_NE(w, nullptr);
  ASSERT_TRUE(w->remoteBuffer().has_value());
  EXPECT_EQ(w->remoteBuffer()->name, "w");
  EXPECT_EQ(w->remoteBuffer()->repeats, 1);
  EXPECT_EQ(w->dataSource(), DataSource::TensorData);

  ModelHarness harness(*model);
  std::vector<float> x = inputs(16, 8);
  std::vector<float> y(16);
  harness.connect("x", x);
  harness.connect("y", y);
  harness.main();
  const auto weights = floatsOf(model->tensorData("w"));
  for (std::size_t i = 0; i < 16; ++i) EXPECT_EQ(y[i], x[i] + weights[i % 8]) << i;
}

TEST_F(ExampleModelsTest, TimeMajorSumsEachSampleOverTime) {
  ExampleOptions options;
  options.batch = 3;
  const auto model = build("time_major", options);
  expectAnchor(*model, "x", TensorType::INPUT, TensorInfo(DataType::F32, {4, 3, 8}), DataSource::None);
  expectAnchor(*model, "y", TensorType::OUTPUT, TensorInfo(DataType::F32, {4, 3, 8}), DataSource::None);

  ModelHarness harness(*model);
  std::vector<float> x = inputs(4 * 3 * 8, 5);
  std::vector<float> y(x.size());
  harness.connect("x", x);
  harness.connect("y", y);
  harness.main();
  for (std::size_t b = 0; b < 3; ++b) {
    for (std::size_t f = 0; f < 8; ++f) {
      float sum = 0.0f;
      for (std::size_t t = 0; t < 4; ++t) {
        sum += x[(t * 3 + b) * 8 + f];
        EXPECT_FLOAT_EQ(y[(t * 3 + b) * 8 + f], sum) << t << "/" << b << "/" << f;
      }
    }
  }
}

TEST_F(ExampleModelsTest, DefaultTargetIsAFullGc200) {
  // Without --tiles the model is compiled for the IPU version's real target,
  // so it fits the devices of the simulated pool.
  const auto model = buildExampleModel("add_one");
  const auto exe = hwsim::Executable::deserialize(model->executable().bytes().data(),
                                                  model->executable().bytes().size());
  EXPECT_EQ(exe.target().tilesPerIpu, 1472u);
  EXPECT_EQ(model->metadata.findAnchor("x")->tensorInfo(), TensorInfo(DataType::F32, {1, 16}));
}

}  // namespace
}  // namespace mrt::popef

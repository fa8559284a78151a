#include "popef/example_models.hpp"

#include <cstring>
#include <functional>
#include <map>

#include <hwsim/graph.hpp>
#include <hwsim/ops.hpp>
#include <hwsim/program.hpp>
#include <hwsim/target.hpp>

#include "common/error.hpp"
#include "popef/graph_model_builder.hpp"

namespace mrt::popef {

namespace {

namespace p = hwsim::program;
namespace ops = hwsim::ops;
using hwsim::Type;
using Dim = TensorInfo::ShapeDimType;

constexpr std::size_t kImage = 784;
constexpr std::size_t kHidden = 128;
constexpr std::size_t kClasses = 10;

SharedBytes floatBytes(const std::vector<float> &values) {
  std::vector<std::byte> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return SharedBytes::fromVector(std::move(bytes));
}

Dim dim(std::size_t value) { return static_cast<Dim>(value); }

hwsim::Target targetFor(const ExampleOptions &options, unsigned defaultIpus) {
  if (options.ipuVersion != 2 && options.ipuVersion != 21) {
    throw Error(ErrorCode::InvalidArgument, "IPU version {} is not 2 or 21", options.ipuVersion);
  }
  const unsigned ipus = options.ipus == 0 ? defaultIpus : options.ipus;
  hwsim::Target target =
      hwsim::Target::forVersion(static_cast<hwsim::IpuVersion>(options.ipuVersion), ipus);
  if (options.tiles != 0) target.tilesPerIpu = options.tiles;
  return target;
}

// Streams `count` F32 elements from host FIFO `name` into t.
void streamIn(hwsim::Graph &graph, p::Sequence &prog, const std::string &name,
              const hwsim::Tensor &t) {
  prog.add(p::Copy(graph.addHostToDeviceFIFO(name, Type::F32, t.numElements()), t));
}

void streamOut(hwsim::Graph &graph, p::Sequence &prog, const std::string &name,
               const hwsim::Tensor &t) {
  prog.add(p::Copy(t, graph.addDeviceToHostFIFO(name, t.elementType(), t.numElements())));
}

hwsim::Tensor scalarConstant(hwsim::Graph &graph, double value, std::string_view name) {
  hwsim::Tensor constant = graph.addConstant(Type::F32, {1}, value, name);
  graph.setTileMapping(constant, 0);
  return constant;
}

std::shared_ptr<Model> addOne(const ExampleOptions &options, std::string name, unsigned replicas) {
  const std::size_t B = options.batch;
  const std::size_t N = options.size;
  const hwsim::Target target = targetFor(options, 1);
  // x (added to in place and streamed out as y) must fit in the IPU's
  // memory; the graph's own per-tile state comes on top, which the compiler
  // checks.
  const std::uint64_t tensorBytes = std::uint64_t{B} * N * sizeof(float);
  const std::uint64_t memory = std::uint64_t{target.numTiles()} * target.bytesPerTile;
  if (tensorBytes > memory) {
    throw Error(ErrorCode::InvalidArgument,
                "{}: x of [{}, {}] F32 needs {} bytes, more than the IPU's memory ({} tiles x {} bytes = {} bytes)",
                name, B, N, tensorBytes, target.numTiles(), target.bytesPerTile, memory);
  }
  hwsim::Graph graph(target, replicas);
  p::Sequence main;
  // Spread over as many tiles as it takes to give each at least
  // kAddOneGrain elements (a large tensor over up to every tile, as Poplar
  // maps one), not row by row: one row of add_one can be megabytes.
  constexpr std::size_t kAddOneGrain = 4096;
  const hwsim::Tensor x = graph.addVariable(Type::F32, {B, N}, "x");
  graph.mapLinearly(x, kAddOneGrain, 0, 0);
  streamIn(graph, main, "x", x);
  // In place, as a compiler would do for an input dead after the add: one
  // tensor in device memory instead of two, so a large request touches less
  // memory (copy in, one add pass over the same bytes, copy out).
  ops::binaryInPlace(graph, main, "Add", x, scalarConstant(graph, 1.0, "one"));
  streamOut(graph, main, "y", x);

  GraphModelDescription d;
  d.name = std::move(name);
  d.programs = {main};
  d.programNames = {"main"};
  d.main = {0};
  const bool perReplica = replicas > 1;
  d.anchors = {
      {"x", "x", {dim(B), dim(N)}, {0}, perReplica, DataSource::None},
      {"y", "y", {dim(B), dim(N)}, {0}, perReplica, DataSource::None},
  };
  return buildModel(graph, std::move(d));
}

// mlp and pipeline2: layer 1 on the first IPU's tiles, layer 2 on the last's.
std::shared_ptr<Model> mlp(const ExampleOptions &options, std::string name, unsigned ipus) {
  if (options.ipus != 0 && options.ipus != ipus) {
    throw Error(ErrorCode::InvalidArgument, "{} runs on {} IPU(s), not {}", name, ipus, options.ipus);
  }
  const std::size_t B = options.batch;
  const hwsim::Target target = targetFor(options, ipus);
  hwsim::Graph graph(target);
  const ops::TileRange first{0, target.tilesPerIpu};
  const ops::TileRange last{(ipus - 1) * target.tilesPerIpu, target.tilesPerIpu};
  // The image and the weights are laid out where the matmuls use them (as
  // poplin::createMatMulInputLhs/Rhs would), so a Main run exchanges only
  // activations, never the weights the Load program streamed in.
  const hwsim::Tensor image =
      ops::createMatMulInputLhs(graph, Type::F32, {B, kImage}, {kImage, kHidden}, "image", first);
  const hwsim::Tensor w1 = ops::createMatMulInputRhs(graph, Type::F32, {B, kImage}, {kImage, kHidden}, "w1", first);
  const hwsim::Tensor b1 = ops::createTensor(graph, Type::F32, {kHidden}, "b1", first);
  const hwsim::Tensor w2 = ops::createMatMulInputRhs(graph, Type::F32, {B, kHidden}, {kHidden, kClasses}, "w2", last);
  const hwsim::Tensor b2 = ops::createTensor(graph, Type::F32, {kClasses}, "b2", last);
  p::Sequence load;
  p::Sequence main;
  for (const auto &[weight, tensor] :
       std::vector<std::pair<std::string, hwsim::Tensor>>{{"w1", w1}, {"b1", b1}, {"w2", w2}, {"b2", b2}}) {
    streamIn(graph, load, weight, tensor);
  }
  streamIn(graph, main, "image", image);
  const hwsim::Tensor h = ops::matMul(graph, main, image, w1, "layer1", first);
  const hwsim::Tensor hb = ops::binary(graph, main, "Add", h, b1, "bias1");
  const hwsim::Tensor hr = ops::unary(graph, main, "Relu", hb, "relu");
  const hwsim::Tensor o = ops::matMul(graph, main, hr, w2, "layer2", last);
  ops::binaryInPlace(graph, main, "Add", o, b2);
  const hwsim::Tensor probs = ops::softmax(graph, main, o, "probs", last);
  streamOut(graph, main, "probs", probs);

  GraphModelDescription d;
  d.name = std::move(name);
  d.programs = {load, main};
  d.programNames = {"load", "main"};
  d.load = {0};
  d.main = {1};
  d.anchors = {
      {"w1", "w1", {dim(kImage), dim(kHidden)}, {0}, false, DataSource::TensorData},
      {"b1", "b1", {dim(kHidden)}, {0}, false, DataSource::TensorData},
      {"w2", "w2", {dim(kHidden), dim(kClasses)}, {0}, false, DataSource::TensorData},
      {"b2", "b2", {dim(kClasses)}, {0}, false, DataSource::TensorData},
      {"image", "image", {dim(B), dim(kImage)}, {1}, false, DataSource::None},
      {"probs", "probs", {dim(B), dim(kClasses)}, {1}, false, DataSource::None},
  };
  const std::uint64_t seed = options.seed;
  d.tensorData = {
      TensorData("w1", TensorInfo(DataType::F32, {dim(kImage), dim(kHidden)}),
                 floatBytes(exampleWeights(kImage * kHidden, -0.1f, 0.1f, seed * 4 + 0))),
      TensorData("b1", TensorInfo(DataType::F32, {dim(kHidden)}),
                 floatBytes(exampleWeights(kHidden, -0.1f, 0.1f, seed * 4 + 1))),
      TensorData("w2", TensorInfo(DataType::F32, {dim(kHidden), dim(kClasses)}),
                 floatBytes(exampleWeights(kHidden * kClasses, -0.3f, 0.3f, seed * 4 + 2))),
      TensorData("b2", TensorInfo(DataType::F32, {dim(kClasses)}),
                 floatBytes(exampleWeights(kClasses, -0.1f, 0.1f, seed * 4 + 3))),
  };
  return buildModel(graph, std::move(d));
}

std::shared_ptr<Model> stateful(const ExampleOptions &options) {
  constexpr std::size_t kWidth = 4;
  const std::size_t B = options.batch;
  hwsim::Graph graph(targetFor(options, 1));
  const hwsim::Tensor x = ops::createTensor(graph, Type::F32, {B, kWidth}, "x");
  const hwsim::Tensor acc = ops::createTensor(graph, Type::F32, {kWidth}, "acc");
  p::Sequence load;
  p::Sequence main;
  p::Sequence save;
  streamIn(graph, load, "acc", acc);
  streamIn(graph, main, "x", x);
  const hwsim::Tensor batchSum = ops::reduce(graph, main, "ReduceSum", x, {0}, "batch_sum");
  ops::binaryInPlace(graph, main, "Add", acc, batchSum);
  streamOut(graph, main, "acc_out", acc);
  streamOut(graph, save, "acc_save", acc);

  GraphModelDescription d;
  d.name = "stateful";
  d.programs = {load, main, save};
  d.programNames = {"load", "main", "save"};
  d.load = {0};
  d.main = {1};
  d.save = {2};
  d.anchors = {
      {"acc", "acc", {dim(kWidth)}, {0}, false, DataSource::TensorData},
      {"x", "x", {dim(B), dim(kWidth)}, {1}, false, DataSource::None},
      {"acc_out", "acc_out", {dim(kWidth)}, {1}, false, DataSource::None},
      {"acc_save", "acc_save", {dim(kWidth)}, {2}, false, DataSource::None},
  };
  d.tensorData = {TensorData("acc", TensorInfo(DataType::F32, {dim(kWidth)}),
                             floatBytes(std::vector<float>(kWidth, 0.0f)))};
  return buildModel(graph, std::move(d));
}

std::shared_ptr<Model> conditional(const ExampleOptions &options) {
  constexpr std::size_t kWidth = 8;
  const std::size_t B = options.batch;
  hwsim::Graph graph(targetFor(options, 1));
  const hwsim::Tensor x = ops::createTensor(graph, Type::F32, {B, kWidth}, "x");
  const hwsim::Tensor y = ops::createTensor(graph, Type::F32, {B, kWidth}, "y");
  const hwsim::Tensor flag = graph.addVariable(Type::S32, {1}, "flag");
  graph.setTileMapping(flag, 0);
  p::Sequence main;
  streamIn(graph, main, "x", x);
  main.add(p::Copy(graph.addHostToDeviceFIFO("flag", Type::S32, 1), flag));
  p::Sequence doubled;
  doubled.add(p::Copy(x, y));
  ops::binaryInPlace(graph, doubled, "Mul", y, scalarConstant(graph, 2.0, "two"));
  p::Sequence decremented;
  decremented.add(p::Copy(x, y));
  ops::binaryInPlace(graph, decremented, "Sub", y, scalarConstant(graph, 1.0, "one"));
  main.add(p::If(flag, doubled, decremented, "flag_is_set"));
  streamOut(graph, main, "y", y);

  GraphModelDescription d;
  d.name = "conditional";
  d.programs = {main};
  d.programNames = {"main"};
  d.main = {0};
  d.anchors = {
      {"x", "x", {dim(B), dim(kWidth)}, {0}, false, DataSource::None},
      {"flag", "flag", {1}, {0}, false, DataSource::None},
      {"y", "y", {dim(B), dim(kWidth)}, {0}, false, DataSource::None},
  };
  return buildModel(graph, std::move(d));
}

std::shared_ptr<Model> remoteBuffer(const ExampleOptions &options) {
  constexpr std::size_t kWidth = 8;
  const std::size_t B = options.batch;
  hwsim::Graph graph(targetFor(options, 1));
  const hwsim::Tensor x = ops::createTensor(graph, Type::F32, {B, kWidth}, "x");
  const hwsim::Tensor w = ops::createTensor(graph, Type::F32, {kWidth}, "w");
  const hwsim::RemoteBuffer buffer = graph.addRemoteBuffer("w", Type::F32, kWidth, 1);
  p::Sequence main;
  streamIn(graph, main, "x", x);
  main.add(p::Copy(buffer, w, 0, "fetch_w"));
  const hwsim::Tensor y = ops::binary(graph, main, "Add", x, w, "y");
  streamOut(graph, main, "y", y);

  GraphModelDescription d;
  d.name = "remote_buffer";
  d.programs = {main};
  d.programNames = {"main"};
  d.main = {0};
  d.anchors = {
      {"x", "x", {dim(B), dim(kWidth)}, {0}, false, DataSource::None},
      {"w", "w", {dim(kWidth)}, {0}, false, DataSource::TensorData},
      {"y", "y", {dim(B), dim(kWidth)}, {0}, false, DataSource::None},
  };
  d.tensorData = {TensorData("w", TensorInfo(DataType::F32, {dim(kWidth)}),
                             floatBytes(exampleWeights(kWidth, -1.0f, 1.0f, options.seed)))};
  return buildModel(graph, std::move(d));
}

// A time-major sequence model: the batch is dimension 1, as for
// ModelRunnerConfig::batching_dim = 1, and each output mixes a sample's
// values across time, so a request whose samples were gathered from the
// wrong places gives wrong numbers.
std::shared_ptr<Model> timeMajor(const ExampleOptions &options) {
  constexpr std::size_t kSteps = 4;
  constexpr std::size_t kWidth = 8;
  const std::size_t B = options.batch;
  hwsim::Graph graph(targetFor(options, 1));
  const hwsim::Tensor x = ops::createTensor(graph, Type::F32, {kSteps, B, kWidth}, "x");
  p::Sequence main;
  streamIn(graph, main, "x", x);
  // A running sum over time, in place: x[t] += x[t - 1].
  for (std::size_t t = 1; t < kSteps; ++t) {
    ops::binaryInPlace(graph, main, "Add", x.slice(t, t + 1, 0), x.slice(t - 1, t, 0));
  }
  streamOut(graph, main, "y", x);

  GraphModelDescription d;
  d.name = "time_major";
  d.programs = {main};
  d.programNames = {"main"};
  d.main = {0};
  d.anchors = {
      {"x", "x", {dim(kSteps), dim(B), dim(kWidth)}, {0}, false, DataSource::None},
      {"y", "y", {dim(kSteps), dim(B), dim(kWidth)}, {0}, false, DataSource::None},
  };
  return buildModel(graph, std::move(d));
}

using Builder = std::function<std::shared_ptr<Model>(const ExampleOptions &)>;

const std::vector<std::pair<std::string, Builder>> &builders() {
  static const std::vector<std::pair<std::string, Builder>> table = {
      {"add_one", [](const ExampleOptions &o) { return addOne(o, "add_one", 1); }},
      {"mlp", [](const ExampleOptions &o) { return mlp(o, "mlp", 1); }},
      {"stateful", stateful},
      {"conditional", conditional},
      {"remote_buffer", remoteBuffer},
      {"time_major", timeMajor},
      {"replicated", [](const ExampleOptions &o) { return addOne(o, "replicated", 2); }},
      {"pipeline2", [](const ExampleOptions &o) { return mlp(o, "pipeline2", 2); }},
  };
  return table;
}

}  // namespace

std::vector<std::string> exampleModelNames() {
  std::vector<std::string> names;
  for (const auto &[name, builder] : builders()) names.push_back(name);
  return names;
}

std::shared_ptr<Model> buildExampleModel(std::string_view name, const ExampleOptions &options) {
  if (options.batch == 0 || options.size == 0) {
    throw Error(ErrorCode::InvalidArgument, "batch ({}) and size ({}) must be at least 1",
                options.batch, options.size);
  }
  for (const auto &[known, builder] : builders()) {
    if (known == name) return builder(options);
  }
  throw Error(ErrorCode::NotFound, "no example model named '{}'", name);
}

std::vector<float> exampleWeights(std::size_t count, float lo, float hi, std::uint64_t seed) {
  std::vector<float> values(count);
  std::uint64_t state = seed;
  for (float &value : values) {
    // SplitMix64, then the top 24 bits as a fraction in [0, 1).
    state += 0x9e3779b97f4a7c15ull;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const float unit = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
    value = lo + (hi - lo) * unit;
  }
  return values;
}

}  // namespace mrt::popef

#include "example_models.hpp"

#include <functional>
#include <utility>

#include <fmt/format.h>

namespace mrt_examples {

namespace {

using namespace mrt;

using Dims = std::vector<int64_t>;

constexpr std::size_t kImage = 784;
constexpr std::size_t kHidden = 128;
constexpr std::size_t kClasses = 10;

int64_t dim(std::size_t value) { return static_cast<int64_t>(value); }

Target targetFor(const ExampleOptions &options, unsigned defaultIpus) {
  if (options.ipuVersion != 2 && options.ipuVersion != 21) {
    throw Error(MRT_INVALID_ARGUMENT, fmt::format("IPU version {} is not 2 or 21", options.ipuVersion));
  }
  const unsigned ipus = options.ipus == 0 ? defaultIpus : options.ipus;
  Target target = Target::named(options.ipuVersion == 21 ? "c600" : "gc200", ipus);
  if (options.tiles != 0) target.tiles_per_ipu = options.tiles;
  return target;
}

// A graph and its programs being turned into a model: the programs are
// program indices 0, 1, ... in the order they are added.
class ModelGraph {
 public:
  ModelGraph(const Target &target, unsigned replicas = 1) : graph(target, replicas) {}

  Graph graph;

  // A new Sequence program named `name` in phase `phase`.
  Program addProgram(const std::string &name, ProgramPhase phase) {
    const Program p = graph.sequence({}, name);
    programs_.push_back(p);
    names_.push_back(name);
    flow_[static_cast<int>(phase)].push_back(programs_.size() - 1);
    return p;
  }
  uint64_t indexOf(Program p) const {
    for (std::size_t i = 0; i < programs_.size(); ++i) {
      if (programs_[i] == p) return i;
    }
    throw Error(MRT_INTERNAL, "example model: program not added");
  }

  // Streams t in from host FIFO `name` in prog, recording the anchor.
  void streamIn(Program prog, const std::string &name, Tensor t, const Dims &shape,
                DataSource source = DataSource::NONE) {
    const TensorInfo info = graph.info(t);
    graph.add(prog, graph.copy(graph.addHostToDeviceFIFO(name, info.data_type, info.num_elements), t));
    anchors_.push_back({name, name, shape, {indexOf(prog)}, perReplica_, source});
  }
  void streamOut(Program prog, const std::string &name, Tensor t, const Dims &shape) {
    const TensorInfo info = graph.info(t);
    graph.add(prog, graph.copy(t, graph.addDeviceToHostFIFO(name, info.data_type, info.num_elements)));
    anchors_.push_back({name, name, shape, {indexOf(prog)}, perReplica_, DataSource::NONE});
  }
  void addAnchor(AnchorConfig anchor) { anchors_.push_back(std::move(anchor)); }
  void addTensorData(const std::string &name, const Dims &shape, std::vector<float> values) {
    tensorData_.emplace_back(name, shape, std::move(values));
  }
  void setPerReplica(bool perReplica) { perReplica_ = perReplica; }

  Tensor scalarConstant(double value, const std::string &name) {
    const Tensor constant = graph.addConstantFilled(DataType::F32, {1}, value, name);
    graph.setTileMapping(constant, 0);
    return constant;
  }

  // Compiles and assembles the model.
  Model build(const std::string &name) {
    const Executable exe = graph.compile(programs_);
    ModelBuilder builder(name, exe);
    for (std::size_t i = 0; i < names_.size(); ++i) builder.setProgramName(i, names_[i]);
    for (int phase = 0; phase < 3; ++phase) builder.setProgramFlow(static_cast<ProgramPhase>(phase), flow_[phase]);
    for (const AnchorConfig &anchor : anchors_) builder.addAnchor(anchor);
    for (const auto &[tensor, shape, values] : tensorData_) builder.addTensorData(tensor, DataType::F32, shape, values);
    return builder.build();
  }

 private:
  std::vector<Program> programs_;
  std::vector<std::string> names_;
  std::vector<uint64_t> flow_[3];
  std::vector<AnchorConfig> anchors_;
  std::vector<std::tuple<std::string, Dims, std::vector<float>>> tensorData_;
  bool perReplica_ = false;
};

Model addOne(const ExampleOptions &options, const std::string &name, unsigned replicas) {
  const std::size_t B = options.batch;
  const std::size_t N = options.size;
  const Target target = targetFor(options, 1);
  // x (added to in place and streamed out as y) must fit in the IPU's
  // memory; the graph's own per-tile state comes on top, which the compiler
  // checks.
  const uint64_t tensorBytes = uint64_t{B} * N * sizeof(float);
  const uint64_t tiles = uint64_t{target.num_ipus} * target.tiles_per_ipu;
  const uint64_t memory = tiles * target.bytes_per_tile;
  if (tensorBytes > memory) {
    throw Error(MRT_INVALID_ARGUMENT,
                fmt::format("{}: x of [{}, {}] F32 needs {} bytes, more than the IPU's memory ({} tiles x {} "
                            "bytes = {} bytes)",
                            name, B, N, tensorBytes, tiles, target.bytes_per_tile, memory));
  }
  ModelGraph m(target, replicas);
  m.setPerReplica(replicas > 1);
  const Program main = m.addProgram("main", ProgramPhase::Main);
  // Spread over as many tiles as it takes to give each at least
  // kAddOneGrain elements (a large tensor over up to every tile, as Poplar
  // maps one), not row by row: one row of add_one can be megabytes.
  constexpr std::size_t kAddOneGrain = 4096;
  const Tensor x = m.graph.addVariable(DataType::F32, {B, N}, "x");
  m.graph.mapLinearly(x, kAddOneGrain);
  m.streamIn(main, "x", x, {dim(B), dim(N)});
  // In place, as a compiler would do for an input dead after the add: one
  // tensor in device memory instead of two, so a large request touches less
  // memory (copy in, one add pass over the same bytes, copy out).
  m.graph.binaryInPlace(main, "Add", x, m.scalarConstant(1.0, "one"));
  m.streamOut(main, "y", x, {dim(B), dim(N)});
  return m.build(name);
}

// mlp and pipeline2: layer 1 on the first IPU's tiles, layer 2 on the last's.
Model mlp(const ExampleOptions &options, const std::string &name, unsigned ipus) {
  if (options.ipus != 0 && options.ipus != ipus) {
    throw Error(MRT_INVALID_ARGUMENT, fmt::format("{} runs on {} IPU(s), not {}", name, ipus, options.ipus));
  }
  const std::size_t B = options.batch;
  const Target target = targetFor(options, ipus);
  ModelGraph m(target);
  Graph &g = m.graph;
  const TileRange first{0, target.tiles_per_ipu};
  const TileRange last{(ipus - 1) * target.tiles_per_ipu, target.tiles_per_ipu};
  // The image and the weights are laid out where the matmuls use them (as
  // poplin::createMatMulInputLhs/Rhs would), and the Load program copies the
  // weights to every tile that multiplies them (matMulPreloadedRhs), so a
  // Main run exchanges only activations, never the weights.
  const Tensor image = g.createMatMulInput(MatMulOperand::LhsOfPreloaded, DataType::F32, {B, kImage},
                                           {kImage, kHidden}, "image", first);
  const Tensor w1 = g.createMatMulInput(MatMulOperand::RhsPreloaded, DataType::F32, {B, kImage}, {kImage, kHidden},
                                        "w1", first);
  const Tensor b1 = g.createTensor(DataType::F32, {kHidden}, "b1", first);
  const Tensor w2 = g.createMatMulInput(MatMulOperand::RhsPreloaded, DataType::F32, {B, kHidden},
                                        {kHidden, kClasses}, "w2", last);
  const Tensor b2 = g.createTensor(DataType::F32, {kClasses}, "b2", last);
  const Program load = m.addProgram("load", ProgramPhase::Load);
  const Program main = m.addProgram("main", ProgramPhase::Main);
  const std::uint64_t seed = options.seed;
  const struct {
    const char *name;
    Tensor tensor;
    Dims shape;
    float bound;
  } weights[] = {{"w1", w1, {dim(kImage), dim(kHidden)}, 0.1f},
                 {"b1", b1, {dim(kHidden)}, 0.1f},
                 {"w2", w2, {dim(kHidden), dim(kClasses)}, 0.3f},
                 {"b2", b2, {dim(kClasses)}, 0.1f}};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto &w = weights[i];
    m.streamIn(load, w.name, w.tensor, w.shape, DataSource::TENSOR_DATA);
    m.addTensorData(w.name, w.shape, exampleWeights(g.info(w.tensor).num_elements, -w.bound, w.bound, seed * 4 + i));
  }
  m.streamIn(main, "image", image, {dim(B), dim(kImage)});
  const Tensor h = g.matMulPreloadedRhs(main, load, image, w1, "layer1", first);
  const Tensor hb = g.binary(main, "Add", h, b1, "bias1");
  const Tensor hr = g.unary(main, "Relu", hb, "relu");
  const Tensor o = g.matMulPreloadedRhs(main, load, hr, w2, "layer2", last);
  g.binaryInPlace(main, "Add", o, b2);
  const Tensor probs = g.softmax(main, o, "probs", last);
  m.streamOut(main, "probs", probs, {dim(B), dim(kClasses)});
  return m.build(name);
}

Model stateful(const ExampleOptions &options) {
  constexpr std::size_t kWidth = 4;
  const std::size_t B = options.batch;
  ModelGraph m(targetFor(options, 1));
  Graph &g = m.graph;
  const Tensor x = g.createTensor(DataType::F32, {B, kWidth}, "x");
  const Tensor acc = g.createTensor(DataType::F32, {kWidth}, "acc");
  const Program load = m.addProgram("load", ProgramPhase::Load);
  const Program main = m.addProgram("main", ProgramPhase::Main);
  const Program save = m.addProgram("save", ProgramPhase::Save);
  m.streamIn(load, "acc", acc, {dim(kWidth)}, DataSource::TENSOR_DATA);
  m.addTensorData("acc", {dim(kWidth)}, std::vector<float>(kWidth, 0.0f));
  m.streamIn(main, "x", x, {dim(B), dim(kWidth)});
  const Tensor batchSum = g.reduce(main, "ReduceSum", x, {0}, "batch_sum");
  g.binaryInPlace(main, "Add", acc, batchSum);
  m.streamOut(main, "acc_out", acc, {dim(kWidth)});
  m.streamOut(save, "acc_save", acc, {dim(kWidth)});
  return m.build("stateful");
}

Model conditional(const ExampleOptions &options) {
  constexpr std::size_t kWidth = 8;
  const std::size_t B = options.batch;
  ModelGraph m(targetFor(options, 1));
  Graph &g = m.graph;
  const Tensor x = g.createTensor(DataType::F32, {B, kWidth}, "x");
  const Tensor y = g.createTensor(DataType::F32, {B, kWidth}, "y");
  const Tensor flag = g.addVariable(DataType::S32, {1}, "flag");
  g.setTileMapping(flag, 0);
  const Program main = m.addProgram("main", ProgramPhase::Main);
  m.streamIn(main, "x", x, {dim(B), dim(kWidth)});
  m.streamIn(main, "flag", flag, {1});
  const Program doubled = g.sequence({g.copy(x, y)});
  g.binaryInPlace(doubled, "Mul", y, m.scalarConstant(2.0, "two"));
  const Program decremented = g.sequence({g.copy(x, y)});
  g.binaryInPlace(decremented, "Sub", y, m.scalarConstant(1.0, "one"));
  g.add(main, g.ifThen(flag, doubled, decremented, "flag_is_set"));
  m.streamOut(main, "y", y, {dim(B), dim(kWidth)});
  return m.build("conditional");
}

Model remoteBuffer(const ExampleOptions &options) {
  constexpr std::size_t kWidth = 8;
  const std::size_t B = options.batch;
  ModelGraph m(targetFor(options, 1));
  Graph &g = m.graph;
  const Tensor x = g.createTensor(DataType::F32, {B, kWidth}, "x");
  const Tensor w = g.createTensor(DataType::F32, {kWidth}, "w");
  const RemoteBuffer buffer = g.addRemoteBuffer("w", DataType::F32, kWidth, 1);
  const Program main = m.addProgram("main", ProgramPhase::Main);
  m.streamIn(main, "x", x, {dim(B), dim(kWidth)});
  g.add(main, g.copy(buffer, w, 0, {}, "fetch_w"));
  m.addAnchor({"w", "w", {dim(kWidth)}, {m.indexOf(main)}, false, DataSource::TENSOR_DATA});
  m.addTensorData("w", {dim(kWidth)}, exampleWeights(kWidth, -1.0f, 1.0f, options.seed));
  const Tensor y = g.binary(main, "Add", x, w, "y");
  m.streamOut(main, "y", y, {dim(B), dim(kWidth)});
  return m.build("remote_buffer");
}

// A time-major sequence model: the batch is dimension 1, as for
// ModelRunnerConfig::batching_dim = 1, and each output mixes a sample's
// values across time, so a request whose samples were gathered from the
// wrong places gives wrong numbers.
Model timeMajor(const ExampleOptions &options) {
  constexpr std::size_t kSteps = 4;
  constexpr std::size_t kWidth = 8;
  const std::size_t B = options.batch;
  ModelGraph m(targetFor(options, 1));
  Graph &g = m.graph;
  const Tensor x = g.createTensor(DataType::F32, {kSteps, B, kWidth}, "x");
  const Program main = m.addProgram("main", ProgramPhase::Main);
  m.streamIn(main, "x", x, {dim(kSteps), dim(B), dim(kWidth)});
  // A running sum over time, in place: x[t] += x[t - 1].
  for (std::size_t t = 1; t < kSteps; ++t) {
    g.binaryInPlace(main, "Add", g.slice(x, t, t + 1, 0), g.slice(x, t - 1, t, 0));
  }
  m.streamOut(main, "y", x, {dim(kSteps), dim(B), dim(kWidth)});
  return m.build("time_major");
}

using Builder = std::function<Model(const ExampleOptions &)>;

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

mrt::Model buildExampleModel(std::string_view name, const ExampleOptions &options) {
  if (options.batch == 0 || options.size == 0) {
    throw Error(MRT_INVALID_ARGUMENT,
                fmt::format("batch ({}) and size ({}) must be at least 1", options.batch, options.size));
  }
  for (const auto &[known, builder] : builders()) {
    if (known == name) return builder(options);
  }
  throw Error(MRT_NOT_FOUND, fmt::format("no example model named '{}'", name));
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

}  // namespace mrt_examples

// popef::checkAgainstExecutable: every example model passes, and each kind of
// disagreement between a model's metadata and its executable is refused as
// CorruptModel with a message naming the anchor or program and both values.
#include <gtest/gtest.h>

#include <limits>

#include "common/error.hpp"
#include "internal_example_models.hpp"
#include "popef/executable_check.hpp"

namespace mrt::popef {
namespace {

using example_models::buildExampleModel;
using example_models::exampleModelNames;
using example_models::ExampleOptions;
using example_models::exampleWeights;

// The parts of an example model, to be changed by a test and rebuilt.
ModelParts partsOf(std::string_view example, const ExampleOptions &options = {}) {
  const auto model = buildExampleModel(example, options);
  ModelParts parts;
  parts.metadata = model->metadata;
  parts.executable = model->executable();
  parts.tensorData = model->tensorDataList();
  parts.feedData = model->feedDataList();
  parts.opaqueBlobs = model->opaqueBlobs();
  return parts;
}

// Applies `edit` to the anchor named `name` (Metadata hands out const anchors).
template <typename Edit>
void editAnchor(ModelParts &parts, std::string_view name, Edit edit) {
  std::vector<Anchor> anchors = parts.metadata.anchors();
  for (Anchor &anchor : anchors) {
    if (anchor.name() == name) edit(anchor);
  }
  parts.metadata.setAnchors(std::move(anchors));
}

TensorData zeroTensorData(const std::string &name, const TensorInfo &info) {
  return TensorData(name, info,
                    SharedBytes::fromVector(std::vector<std::byte>(static_cast<std::size_t>(info.sizeInBytes()))));
}

// Expects checkAgainstExecutable to refuse the parts with every needle in
// its message.
void expectRefused(ModelParts parts, const std::vector<std::string> &needles) {
  const Model model(std::move(parts));
  try {
    checkAgainstExecutable(model);
    ADD_FAILURE() << "the model was accepted";
  } catch (const Error &error) {
    EXPECT_EQ(error.code(), ErrorCode::CorruptModel) << error.what();
    for (const std::string &needle : needles) {
      EXPECT_NE(std::string(error.what()).find(needle), std::string::npos)
          << "'" << needle << "' not in: " << error.what();
    }
  }
}

TEST(ExecutableCheck, EveryExampleModelPasses) {
  for (const std::string &name : exampleModelNames()) {
    SCOPED_TRACE(name);
    for (const std::size_t batch : {1, 4}) {
      ExampleOptions options;
      options.batch = batch;
      const auto model = buildExampleModel(name, options);
      EXPECT_NO_THROW(checkAgainstExecutable(*model));
    }
  }
}

TEST(ExecutableCheck, ReplicationIpusAndVersionMustBeTheExecutables) {
  ModelParts replicated = partsOf("add_one");
  replicated.metadata.setReplicationFactor(2);
  expectRefused(replicated, {"model 'add_one'", "replication factor 2, the executable 1"});

  ModelParts ipus = partsOf("add_one");
  ipus.metadata.setNumIpus(4);
  expectRefused(ipus, {"4 IPUs, the executable needs 1"});

  ModelParts version = partsOf("add_one");
  version.metadata.setIpuVersion(Metadata::kIpu21);
  expectRefused(version, {"IPU version 21, the executable was compiled for 2"});
}

TEST(ExecutableCheck, ProgramIndicesMustBeInTheExecutable) {
  for (const std::uint64_t index : {std::uint64_t{1}, std::uint64_t{1} << 33,
                                    std::numeric_limits<std::uint64_t>::max()}) {
    ModelParts parts = partsOf("add_one");
    ProgramFlow flow = parts.metadata.programFlow();
    auto names = flow.programsMap();
    names.emplace(index, "extra");
    flow.setProgramsMap(names);
    flow.setMain({index});
    parts.metadata.setProgramFlow(flow);
    expectRefused(parts, {"program " + std::to_string(index) + " ('extra')", "which has 1 programs"});
  }
}

TEST(ExecutableCheck, AnAnchorMustNameAStreamOfTheExecutable) {
  ModelParts parts = partsOf("add_one");
  editAnchor(parts, "x", [](Anchor &x) { x.setHandle("nope"); });
  expectRefused(parts, {"anchor 'x' names stream 'nope', which the executable does not have"});
}

TEST(ExecutableCheck, AnAnchorMustGoTheWayOfItsStream) {
  ModelParts parts = partsOf("add_one");
  editAnchor(parts, "x", [](Anchor &x) { x.setType(TensorType::OUTPUT); });
  expectRefused(parts, {"anchor 'x' is OUTPUT in the metadata", "goes host to device"});

  ModelParts swapped = partsOf("add_one");
  editAnchor(swapped, "x", [](Anchor &x) { x.setHandle("y"); });
  editAnchor(swapped, "y", [](Anchor &y) { y.setHandle("x"); });
  expectRefused(swapped, {"anchor 'x' is INPUT in the metadata but its stream 'y' goes device to host"});
}

TEST(ExecutableCheck, AnAnchorMustHaveItsStreamsTypeAndSize) {
  ModelParts shape = partsOf("add_one");
  editAnchor(shape, "x", [](Anchor &x) { x.setTensorInfo(TensorInfo(DataType::F32, {129, 16})); });
  expectRefused(shape, {"anchor 'x' is F32[129,16] (2064 elements, 8256 bytes) in the metadata",
                        "stream 'x' is F32 x 16 elements (64 bytes) in the executable"});

  ModelParts type = partsOf("add_one");
  editAnchor(type, "y", [](Anchor &y) { y.setTensorInfo(TensorInfo(DataType::S32, {1, 16})); });
  expectRefused(type, {"anchor 'y' is S32[1,16]", "stream 'y' is F32 x 16 elements"});
}

TEST(ExecutableCheck, TensorDataResizedWithItsAnchorIsStillRefused) {
  ModelParts parts = partsOf("mlp");
  const TensorInfo one(DataType::F32, {1});
  editAnchor(parts, "w1", [&](Anchor &w1) { w1.setTensorInfo(one); });
  for (TensorData &data : parts.tensorData) {
    if (data.name() == "w1") data = zeroTensorData("w1", one);
  }
  expectRefused(parts, {"anchor 'w1' is F32[1]", "stream 'w1' is F32 x 100352 elements"});
}

TEST(ExecutableCheck, EveryProgramAnAnchorListsMustMoveItsStream) {
  ModelParts parts = partsOf("stateful");
  editAnchor(parts, "x", [](Anchor &x) { x.setPrograms({0, 1}); });
  expectRefused(parts, {"anchor 'x' says program 0 ('load') moves stream 'x', but that program never moves it"});
}

TEST(ExecutableCheck, EveryStreamAFlowProgramMovesNeedsAnAnchorListingIt) {
  ModelParts unnamed = partsOf("add_one");
  std::vector<Anchor> anchors;
  for (const Anchor &anchor : unnamed.metadata.anchors()) {
    if (anchor.name() != "y") anchors.push_back(anchor);
  }
  unnamed.metadata.setAnchors(anchors);
  expectRefused(unnamed, {"program 0 ('main') moves stream 'y', which no anchor names"});

  ModelParts unlisted = partsOf("add_one");
  editAnchor(unlisted, "x", [](Anchor &x) { x.setPrograms({}); });
  expectRefused(unlisted, {"program 0 ('main') moves stream 'x', but anchor 'x' does not list that program"});
}

TEST(ExecutableCheck, RemoteBufferAnchorsMustMatchTheirBuffer) {
  ModelParts unknown = partsOf("remote_buffer");
  editAnchor(unknown, "w", [](Anchor &w) { w.setRemoteBuffer(RemoteBufferInfo{"other", 1}); });
  expectRefused(unknown, {"anchor 'w' lives in remote buffer 'other', which the executable does not have"});

  ModelParts repeats = partsOf("remote_buffer");
  editAnchor(repeats, "w", [](Anchor &w) { w.setRemoteBuffer(RemoteBufferInfo{"w", 2}); });
  expectRefused(repeats, {"gives remote buffer 'w' 2 slots in the metadata, the executable 1"});

  ModelParts size = partsOf("remote_buffer");
  const TensorInfo sixteen(DataType::F32, {16});
  editAnchor(size, "w", [&](Anchor &w) { w.setTensorInfo(sixteen); });
  for (TensorData &data : size.tensorData) data = zeroTensorData("w", sixteen);
  expectRefused(size, {"anchor 'w' is F32[16]", "remote buffer 'w' is F32 x 1 slots of 8 elements (32 bytes)"});
}

TEST(ExecutableCheck, ExecutableBytesHwsimRefusesAreACorruptModel) {
  ModelParts parts = partsOf("add_one");
  std::vector<std::byte> bytes(parts.executable.bytes().begin(), parts.executable.bytes().end());
  bytes.resize(bytes.size() / 2);
  parts.executable = ExecutableBlob("add_one", SharedBytes::fromVector(std::move(bytes)));
  expectRefused(parts, {"model 'add_one'", "executable"});
}

}  // namespace
}  // namespace mrt::popef

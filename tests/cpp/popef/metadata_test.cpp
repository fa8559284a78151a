// Metadata rules and in-memory Model construction: what makes a model valid.
#include <gtest/gtest.h>

#include "popef/model.hpp"
#include "popef_test_util.hpp"

namespace mrt::popef {
namespace {

using test::captureError;
using test::sampleParts;

// Builds a model from parts changed by `edit` and returns the error.
template <typename Edit>
Error modelError(Edit edit) {
  ModelParts parts = sampleParts();
  edit(parts);
  return captureError([&] { Model model(std::move(parts)); });
}

void expectCorrupt(const Error &error, const std::string &expected) {
  EXPECT_EQ(error.code(), ErrorCode::CorruptModel) << error.what();
  EXPECT_EQ(std::string(error.what()), expected);
}

TEST(MetadataTest, FindsAnchorsByNameAndHandle) {
  const Metadata metadata = sampleParts().metadata;
  ASSERT_NE(metadata.findAnchor("w"), nullptr);
  EXPECT_EQ(metadata.findAnchor("w")->handle(), "h2d_w");
  ASSERT_NE(metadata.findAnchorByHandle("d2h_y"), nullptr);
  EXPECT_EQ(metadata.findAnchorByHandle("d2h_y")->name(), "y");
  EXPECT_EQ(metadata.findAnchor("h2d_w"), nullptr);
  EXPECT_EQ(metadata.findAnchorByHandle("nope"), nullptr);
}

TEST(MetadataTest, SampleModelIsValidAndLookupsWork) {
  const Model model(sampleParts());
  EXPECT_EQ(model.metadata.executable(), "sample");
  EXPECT_EQ(model.tensorData("w").size(), 128u);
  EXPECT_EQ(model.findTensorData("x"), nullptr);
  EXPECT_EQ(model.feedData("feed").numTensors(), 5u);
  ASSERT_NE(model.findOpaque("framework"), nullptr);
  // FeedData::tensor(i) is the i-th 12-byte slice.
  const FeedData &feed = model.feedData("feed");
  EXPECT_EQ(feed.tensor(3).data(), feed.bytes().data() + 36);
  EXPECT_EQ(feed.tensor(3).size(), 12u);
  const Error missing = captureError([&] { (void)model.tensorData("nope"); });
  EXPECT_EQ(missing.code(), ErrorCode::NotFound);
  EXPECT_STREQ(missing.what(), "model 'sample' has no TensorData named 'nope'");
  EXPECT_NO_THROW(model.verify());
}

TEST(MetadataTest, RejectsZeroReplicationFactorAndIpus) {
  expectCorrupt(modelError([](ModelParts &p) { p.metadata.setReplicationFactor(0); }),
                "in-memory Metadata blob: replicationFactor must be at least 1, got 0");
  expectCorrupt(modelError([](ModelParts &p) { p.metadata.setNumIpus(0); }),
                "in-memory Metadata blob: numIpus must be at least 1, got 0");
}

TEST(MetadataTest, RejectsUnknownIpuVersion) {
  expectCorrupt(modelError([](ModelParts &p) { p.metadata.setIpuVersion(3); }),
                "in-memory Metadata blob: unknown ipuVersion 3 (expected 2 or 21)");
}

TEST(MetadataTest, RejectsProgramIndicesMissingFromTheProgramsMap) {
  expectCorrupt(modelError([](ModelParts &p) {
                  ProgramFlow flow = p.metadata.programFlow();
                  flow.setSave({3, 9});
                  p.metadata.setProgramFlow(flow);
                }),
                "in-memory Metadata blob: the save flow uses program 9, which the programs map "
                "does not name");
  expectCorrupt(modelError([](ModelParts &p) {
                  std::vector<Anchor> anchors = p.metadata.anchors();
                  anchors[0].setPrograms({1, 7});
                  p.metadata.setAnchors(anchors);
                }),
                "in-memory Metadata blob: anchor 'x' uses program 7, which the programs map does "
                "not name");
}

TEST(MetadataTest, RejectsDuplicateAnchorNamesAndHandles) {
  expectCorrupt(modelError([](ModelParts &p) {
                  std::vector<Anchor> anchors = p.metadata.anchors();
                  anchors[1].setName("x");
                  p.metadata.setAnchors(anchors);
                }),
                "in-memory Metadata blob: two anchors are named 'x'");
  expectCorrupt(modelError([](ModelParts &p) {
                  std::vector<Anchor> anchors = p.metadata.anchors();
                  anchors[4].setHandle("h2d_x");
                  p.metadata.setAnchors(anchors);
                }),
                "in-memory Metadata blob: two anchors have the handle 'h2d_x'");
}

TEST(MetadataTest, RejectsSeedHandleThatIsNoAnchor) {
  expectCorrupt(modelError([](ModelParts &p) { p.metadata.setSeedHandle("rng"); }),
                "in-memory Metadata blob: seed handle 'rng' is not the handle of any anchor");
}

TEST(MetadataTest, RejectsDataSourceOnOutputsAndBadRemoteBuffers) {
  expectCorrupt(modelError([](ModelParts &p) {
                  std::vector<Anchor> anchors = p.metadata.anchors();
                  anchors[4].setDataSource(DataSource::TensorData);
                  p.metadata.setAnchors(anchors);
                }),
                "in-memory Metadata blob: anchor 'y' is OUTPUT but takes its data from "
                "TensorData; only inputs have a data source");
  expectCorrupt(modelError([](ModelParts &p) {
                  std::vector<Anchor> anchors = p.metadata.anchors();
                  anchors[3].setRemoteBuffer(RemoteBufferInfo{"rb_buf", 0});
                  p.metadata.setAnchors(anchors);
                }),
                "in-memory Metadata blob: anchor 'rb' has remote buffer 'rb_buf' with 0 repeats "
                "(needs a name and >= 1)");
}

TEST(ModelTest, RejectsExecutableOfAnotherName) {
  expectCorrupt(modelError([](ModelParts &p) {
                  p.executable = ExecutableBlob("other", p.executable.sharedBytes());
                }),
                "in-memory Executable blob: executable 'other' is not the 'sample' named by "
                "in-memory Metadata blob");
}

TEST(ModelTest, RejectsDuplicateTensorDataNames) {
  expectCorrupt(modelError([](ModelParts &p) { p.tensorData.push_back(p.tensorData[0]); }),
                "in-memory TensorData blob: duplicate TensorData name 'w' (first in in-memory "
                "TensorData blob)");
}

TEST(ModelTest, RejectsTensorDataOfTheWrongSize) {
  expectCorrupt(modelError([](ModelParts &p) {
                  p.tensorData[0] = TensorData("w", p.tensorData[0].tensorInfo(),
                                               SharedBytes::fromVector(test::randomBytes(127, 9)));
                }),
                "in-memory TensorData blob: TensorData 'w' holds 127 bytes but F16[16,4] needs 128");
  expectCorrupt(modelError([](ModelParts &p) {
                  p.feedData[0] = FeedData("feed", p.feedData[0].tensorInfo(), 6,
                                           p.feedData[0].sharedBytes());
                }),
                "in-memory FeedData blob: FeedData 'feed' holds 60 bytes but 6 tensors of S32[3] "
                "need 12 bytes each");
}

TEST(ModelTest, RejectsAnchorsWhoseDataIsMissingOrDifferent) {
  expectCorrupt(modelError([](ModelParts &p) { p.tensorData.erase(p.tensorData.begin()); }),
                "in-memory Metadata blob: anchor 'w' takes its data from TensorData 'w', which "
                "model 'sample' does not have");
  expectCorrupt(modelError([](ModelParts &p) { p.feedData.clear(); }),
                "in-memory Metadata blob: anchor 'feed' takes its data from FeedData 'feed', which "
                "model 'sample' does not have");
  expectCorrupt(modelError([](ModelParts &p) {
                  p.tensorData[1] = TensorData("rb", TensorInfo(DataType::S8, {8}),
                                               p.tensorData[1].sharedBytes());
                }),
                "in-memory Metadata blob: anchor 'rb' is U8[8] but its TensorData is S8[8]");
}

}  // namespace
}  // namespace mrt::popef

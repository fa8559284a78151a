// predicate_factory: each predicate on the anchors of the stateful model
// (acc: Load; x, acc_out: Main; acc_save: Save) and how Session uses them.
#include <gtest/gtest.h>

#include "session_test_util.hpp"

namespace mrt {
namespace {

using namespace session_test;
namespace cb = predicate_factory::anchor_callbacks;
namespace du = predicate_factory::popef_data_usage;
using P = AnchorCallbackPolicy;
using D = PopefDataUsagePolicy;

class PredicatesTest : public ::testing::Test {
 protected:
  const popef::Anchor &anchor(const std::string &name) const { return *model_->metadata.findAnchor(name); }
  const popef::ProgramFlow &flow() const { return model_->metadata.programFlow(); }
  std::shared_ptr<const popef::Model> model_ = exampleModel("stateful");
};

TEST_F(PredicatesTest, ProgramFlowAnchorCallbacks) {
  EXPECT_EQ(cb::predProgramFlowLoad(flow())(anchor("acc")), P::BIND_USER_CB);
  EXPECT_EQ(cb::predProgramFlowLoad(flow())(anchor("x")), P::BIND_EMPTY_CB);
  EXPECT_EQ(cb::predProgramFlowMain(flow(), P::SKIP_CB, P::BIND_USER_CB)(anchor("acc_out")), P::SKIP_CB);
  EXPECT_EQ(cb::predProgramFlowMain(flow(), P::SKIP_CB, P::BIND_USER_CB)(anchor("acc_save")), P::BIND_USER_CB);
  EXPECT_EQ(cb::predProgramFlowSave(flow())(anchor("acc_save")), P::BIND_USER_CB);
  EXPECT_EQ(cb::predProgramNotAssigned()(anchor("x")), P::BIND_EMPTY_CB);
  popef::Anchor loose = anchor("x");
  loose.setPrograms({});
  EXPECT_EQ(cb::predProgramNotAssigned()(loose), P::BIND_USER_CB);
  popef::Anchor scalar = anchor("x");
  scalar.setTensorInfo(popef::TensorInfo(popef::DataType::F32, {}));
  EXPECT_EQ(cb::predNonScalarType()(anchor("x")), P::BIND_USER_CB);
  EXPECT_EQ(cb::predNonScalarType()(scalar), P::BIND_EMPTY_CB);
}

TEST_F(PredicatesTest, IndexesAnchorsAndCombinations) {
  const std::vector<popef::ProgramFlow::ProgramIndexType> loadAndSave{0, 2};
  const std::vector<popef::ProgramFlow::ProgramIndexType> save{2};
  const auto byIndex = cb::predProgramIndexes(loadAndSave);
  EXPECT_EQ(byIndex(anchor("acc")), P::BIND_USER_CB);
  EXPECT_EQ(byIndex(anchor("x")), P::BIND_EMPTY_CB);
  const auto groups = cb::predProgramIndexes(
      std::vector<predicate_factory::ProgramsWithPolicy<P>>{{save, P::BIND_EMPTY_CB}, {loadAndSave, P::BIND_USER_CB}},
      P::SKIP_CB);
  EXPECT_EQ(groups(anchor("acc_save")), P::BIND_EMPTY_CB);
  EXPECT_EQ(groups(anchor("acc")), P::BIND_USER_CB);
  EXPECT_EQ(groups(anchor("x")), P::SKIP_CB);
  const auto anchors = cb::predAnchorsPolicies(
      std::vector<predicate_factory::AnchorWithPolicy<P>>{{anchor("acc_out"), P::SKIP_CB}});
  EXPECT_EQ(anchors(anchor("acc_out")), P::SKIP_CB);
  EXPECT_EQ(anchors(anchor("x")), P::BIND_EMPTY_CB);

  const auto main = cb::predProgramFlowMain(flow());
  const auto nonScalar = cb::predNonScalarType();
  const auto both = cb::andBind(P::BIND_USER_CB, P::SKIP_CB, main, nonScalar);
  const auto either = cb::orBind(P::BIND_USER_CB, P::SKIP_CB, main, cb::predProgramFlowLoad(flow()));
  EXPECT_EQ(both(anchor("x")), P::BIND_USER_CB);
  EXPECT_EQ(both(anchor("acc")), P::SKIP_CB);
  EXPECT_EQ(either(anchor("acc")), P::BIND_USER_CB);
  EXPECT_EQ(either(anchor("acc_save")), P::SKIP_CB);
}

TEST_F(PredicatesTest, PopefDataUsage) {
  EXPECT_EQ(du::predProgramFlowLoad(flow())(anchor("acc")), D::USE_USER_DATA);
  EXPECT_EQ(du::predProgramFlowLoad(flow())(anchor("x")), D::USE_POPEF_DATA_IF_ANY);
  EXPECT_EQ(du::predProgramFlowMain(flow())(anchor("x")), D::USE_USER_DATA);
  EXPECT_EQ(du::predProgramFlowSave(flow())(anchor("acc_save")), D::USE_USER_DATA);
  EXPECT_EQ(du::predProgramNotAssigned()(anchor("acc")), D::USE_POPEF_DATA_IF_ANY);
  const std::vector<popef::ProgramFlow::ProgramIndexType> load{0};
  EXPECT_EQ(du::predProgramIndexes(load)(anchor("acc")), D::USE_USER_DATA);
  EXPECT_EQ(du::predProgramIndexes(std::vector<predicate_factory::ProgramsWithPolicy<D>>{{load, D::USE_USER_DATA}})(
                anchor("acc")),
            D::USE_USER_DATA);
  EXPECT_EQ(du::predAnchorsPolicies(std::vector<predicate_factory::AnchorWithPolicy<D>>{{anchor("acc"),
                                                                                        D::USE_USER_DATA}})(
                anchor("x")),
            D::USE_POPEF_DATA_IF_ANY);
  EXPECT_EQ(du::andBind(D::USE_USER_DATA, D::USE_POPEF_DATA_IF_ANY, du::predProgramFlowLoad(flow()),
                        du::predProgramFlowMain(flow()))(anchor("acc")),
            D::USE_POPEF_DATA_IF_ANY);
  EXPECT_EQ(du::orBind(D::USE_USER_DATA, D::USE_POPEF_DATA_IF_ANY, du::predProgramFlowLoad(flow()),
                       du::predProgramFlowMain(flow()))(anchor("acc")),
            D::USE_USER_DATA);
}

// In a session: empty callbacks for Save anchors, skip_connected, user data for Load.
TEST_F(PredicatesTest, SessionHandlersFollowThePolicies) {
  SessionConfig config;
  config.pred_tensor_data = du::predProgramFlowLoad(flow());
  Session session(model_, config);
  EXPECT_EQ(session.getUserInputAnchors().size(), 2u);  // acc and x
  session.bindToDevice(smallDevice(model_));
  std::vector<float> acc{1, 2, 3, 4}, x(4, 1.0f), accOut(4);
  session.setCallbackForAnchor("x", readFrom(x));
  int inputFactoryCalls = 0;
  // skip_connected: only acc gets the factory's callback.
  session.setUserInputHandler(
      [&](const CallbackInfo &info) {
        ++inputFactoryCalls;
        EXPECT_EQ(info.anchor.name(), "acc");
        return readFrom(acc);
      },
      {}, true);
  EXPECT_EQ(inputFactoryCalls, 1);
  // Save outputs get an empty callback, Main outputs the factory's.
  session.setUserOutputHandler([&](const CallbackInfo &info) {
    EXPECT_EQ(info.anchor.name(), "acc_out");
    return writeTo(accOut);
  },
                               cb::predProgramFlowSave(flow(), P::BIND_EMPTY_CB, P::BIND_USER_CB));
  EXPECT_TRUE(session.anchorsNotConnectedToCallbacks({0, 1, 2}).empty());
  session.runMainPrograms();
  EXPECT_EQ(accOut, (std::vector<float>{2, 3, 4, 5}));
  session.runSavePrograms();  // the empty callback takes acc_save
}

}  // namespace
}  // namespace mrt

// predicate_factory (model_runtime/SessionUtils.hpp): every factory against
// the anchors of mlp (image/probs moved by Main, four weights by Load), and
// a predicate in SessionConfig and in a handler deciding real bindings.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <stdexcept>
#include <string>

#include "compat_test_util.hpp"
#include "model_runtime/ModelRuntime.hpp"

using namespace model_runtime;
using namespace model_runtime::predicate_factory;
using compat_test::modelPath;

namespace {

class CompatEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { compat_test::usePrivateSystem(); }
};
const ::testing::Environment *const kEnvironment = ::testing::AddGlobalTestEnvironment(new CompatEnvironment);

class CompatPredicates : public ::testing::Test {
 protected:
  void SetUp() override {
    model = popef::createModel({modelPath("mlp")});
    for (const auto &anchor : model->metadata.anchors()) anchors[anchor.name()] = &anchor;
  }
  // The policy of each anchor, by name.
  template <class Policy>
  std::map<std::string, Policy> apply(const std::function<Policy(const popef::Anchor &)> &predicate) const {
    std::map<std::string, Policy> result;
    for (const auto &entry : anchors) result[entry.first] = predicate(*entry.second);
    return result;
  }
  std::shared_ptr<popef::Model> model;
  std::map<std::string, const popef::Anchor *> anchors;
};

constexpr auto USER = AnchorCallbackPolicy::BIND_USER_CB;
constexpr auto EMPTY = AnchorCallbackPolicy::BIND_EMPTY_CB;
constexpr auto SKIP = AnchorCallbackPolicy::SKIP_CB;

}  // namespace

TEST_F(CompatPredicates, ProgramFlowFactoriesSplitLoadFromMain) {
  const auto &flow = model->metadata.programFlow();
  const std::map<std::string, AnchorCallbackPolicy> loadOwned{
      {"b1", USER}, {"b2", USER}, {"image", EMPTY}, {"probs", EMPTY}, {"w1", USER}, {"w2", USER}};
  EXPECT_EQ(apply(anchor_callbacks::predProgramFlowLoad(flow)), loadOwned);
  const auto main = apply(anchor_callbacks::predProgramFlowMain(flow, SKIP, EMPTY));
  EXPECT_EQ(main.at("image"), SKIP);
  EXPECT_EQ(main.at("probs"), SKIP);
  EXPECT_EQ(main.at("w1"), EMPTY);
  for (const auto &entry : apply(anchor_callbacks::predProgramFlowSave(flow))) EXPECT_EQ(entry.second, EMPTY);
  for (const auto &entry : apply(anchor_callbacks::predProgramNotAssigned())) EXPECT_EQ(entry.second, EMPTY);
  for (const auto &entry : apply(anchor_callbacks::predNonScalarType())) EXPECT_EQ(entry.second, USER);
  EXPECT_EQ(apply(anchor_callbacks::predProgramIndexes(flow.main())).at("image"), USER);
  EXPECT_EQ(apply(anchor_callbacks::predProgramIndexes(flow.main())).at("w2"), EMPTY);

  const auto data = apply(popef_data_usage::predProgramFlowLoad(flow));
  EXPECT_EQ(data.at("w1"), PopefDataUsagePolicy::USE_USER_DATA);
  EXPECT_EQ(data.at("image"), PopefDataUsagePolicy::USE_POPEF_DATA_IF_ANY);
  EXPECT_EQ(apply(popef_data_usage::predProgramFlowMain(flow)).at("probs"), PopefDataUsagePolicy::USE_USER_DATA);
  EXPECT_EQ(apply(popef_data_usage::predProgramFlowSave(flow)).at("probs"),
            PopefDataUsagePolicy::USE_POPEF_DATA_IF_ANY);
  EXPECT_EQ(apply(popef_data_usage::predProgramNotAssigned()).at("b1"), PopefDataUsagePolicy::USE_POPEF_DATA_IF_ANY);
  EXPECT_EQ(apply(popef_data_usage::predProgramIndexes(flow.load())).at("b1"), PopefDataUsagePolicy::USE_USER_DATA);
}

TEST_F(CompatPredicates, GroupsAnchorsAndCombinators) {
  const auto &flow = model->metadata.programFlow();
  // The first group owning an anchor gives its policy.
  const auto grouped = apply(anchor_callbacks::predProgramIndexes(
      {ProgramsWithPolicy<AnchorCallbackPolicy>{flow.main(), SKIP}, {flow.load(), USER}}, EMPTY));
  EXPECT_EQ(grouped.at("image"), SKIP);
  EXPECT_EQ(grouped.at("w1"), USER);
  const auto named = apply(anchor_callbacks::predAnchorsPolicies(
      {AnchorWithPolicy<AnchorCallbackPolicy>{*anchors.at("b2"), SKIP}}, USER));
  EXPECT_EQ(named.at("b2"), SKIP);
  EXPECT_EQ(named.at("b1"), USER);
  const auto dataNamed = apply(popef_data_usage::predAnchorsPolicies(
      {AnchorWithPolicy<PopefDataUsagePolicy>{*anchors.at("w1"), PopefDataUsagePolicy::USE_USER_DATA}}));
  EXPECT_EQ(dataNamed.at("w1"), PopefDataUsagePolicy::USE_USER_DATA);
  EXPECT_EQ(dataNamed.at("w2"), PopefDataUsagePolicy::USE_POPEF_DATA_IF_ANY);
  const auto dataGrouped = apply(popef_data_usage::predProgramIndexes(
      {ProgramsWithPolicy<PopefDataUsagePolicy>{flow.main(), PopefDataUsagePolicy::USE_USER_DATA}}));
  EXPECT_EQ(dataGrouped.at("image"), PopefDataUsagePolicy::USE_USER_DATA);
  EXPECT_EQ(dataGrouped.at("w1"), PopefDataUsagePolicy::USE_POPEF_DATA_IF_ANY);

  // andBind: every predicate accepts; orBind: any does.
  const auto nonScalar = anchor_callbacks::predNonScalarType(USER, EMPTY);
  const auto loadOwned = anchor_callbacks::predProgramFlowLoad(flow, USER, EMPTY);
  const auto both = apply(anchor_callbacks::andBind(USER, SKIP, nonScalar, loadOwned));
  EXPECT_EQ(both.at("w1"), USER);
  EXPECT_EQ(both.at("image"), SKIP);
  const auto either = apply(anchor_callbacks::orBind(USER, SKIP, anchor_callbacks::predProgramFlowMain(flow), loadOwned));
  for (const auto &entry : either) EXPECT_EQ(entry.second, USER) << entry.first;
  const auto dataEither = apply(popef_data_usage::orBind(PopefDataUsagePolicy::USE_USER_DATA,
                                                         PopefDataUsagePolicy::USE_POPEF_DATA_IF_ANY,
                                                         popef_data_usage::predProgramFlowSave(flow)));
  EXPECT_EQ(dataEither.at("w1"), PopefDataUsagePolicy::USE_POPEF_DATA_IF_ANY);
}

TEST_F(CompatPredicates, HandlerPredicatesDecideBindingsAndTheirThrowsSurface) {
  DeviceManager devices;
  Session session(model);
  session.bindToDevice(devices.getDevice(model));
  int asked = 0;
  const CallbackFactory factory = [&asked](const CallbackInfo &) -> poplar::StreamCallbackHandle {
    ++asked;
    return [](void *buffer) { std::memset(buffer, 0, 4); };
  };
  // Only image is asked for: the weights keep their PopEF data (SKIP).
  session.setUserInputHandler(factory, anchor_callbacks::predProgramFlowMain(model->metadata.programFlow(), USER, SKIP));
  EXPECT_EQ(asked, 1);
  const AnchorCallbackPredicate throwing = [](const popef::Anchor &anchor) -> AnchorCallbackPolicy {
    throw std::domain_error("no policy for " + anchor.name());
  };
  try {
    session.setUserOutputHandler(factory, throwing);
    ADD_FAILURE() << "the predicate's exception was swallowed";
  } catch (const std::domain_error &e) {
    EXPECT_NE(std::string(e.what()).find("probs"), std::string::npos) << e.what();
  }
  EXPECT_THROW(session.bindToDevice(nullptr), std::invalid_argument);
  EXPECT_THROW(Session(std::shared_ptr<popef::Model>()), std::invalid_argument);
}

#include "session/predicates.hpp"

#include <algorithm>

namespace mrt {

std::string_view toString(PopefDataUsagePolicy policy) noexcept {
  switch (policy) {
    case PopefDataUsagePolicy::USE_POPEF_DATA_IF_ANY: return "USE_POPEF_DATA_IF_ANY";
    case PopefDataUsagePolicy::USE_USER_DATA: return "USE_USER_DATA";
  }
  return "unknown";
}

std::string_view toString(AnchorCallbackPolicy policy) noexcept {
  switch (policy) {
    case AnchorCallbackPolicy::BIND_USER_CB: return "BIND_USER_CB";
    case AnchorCallbackPolicy::BIND_EMPTY_CB: return "BIND_EMPTY_CB";
    case AnchorCallbackPolicy::SKIP_CB: return "SKIP_CB";
  }
  return "unknown";
}

namespace predicate_factory {

bool detail::anchorInPrograms(const popef::Anchor &anchor, const ProgramIndexes &programs) noexcept {
  return std::any_of(anchor.programs().begin(), anchor.programs().end(), [&](auto index) {
    return std::find(programs.begin(), programs.end(), index) != programs.end();
  });
}

namespace {

// The two namespaces build the same shapes of predicate over their own policy.
template <typename Policy>
std::function<Policy(const popef::Anchor &)> notAssigned(Policy accept, Policy reject) {
  return [accept, reject](const popef::Anchor &anchor) { return anchor.programs().empty() ? accept : reject; };
}

}  // namespace

namespace anchor_callbacks {

AnchorCallbackPredicate predProgramFlowLoad(const popef::ProgramFlow &flow, Policy accept, Policy reject) {
  return detail::byPrograms(flow.load(), accept, reject);
}
AnchorCallbackPredicate predProgramFlowMain(const popef::ProgramFlow &flow, Policy accept, Policy reject) {
  return detail::byPrograms(flow.main(), accept, reject);
}
AnchorCallbackPredicate predProgramFlowSave(const popef::ProgramFlow &flow, Policy accept, Policy reject) {
  return detail::byPrograms(flow.save(), accept, reject);
}
AnchorCallbackPredicate predProgramNotAssigned(Policy accept, Policy reject) { return notAssigned(accept, reject); }
AnchorCallbackPredicate predNonScalarType(Policy accept, Policy reject) {
  return [accept, reject](const popef::Anchor &anchor) {
    return anchor.tensorInfo().shape().empty() ? reject : accept;
  };
}
AnchorCallbackPredicate predProgramIndexes(const std::vector<popef::ProgramFlow::ProgramIndexType> &programs,
                                           Policy accept, Policy reject) {
  return detail::byPrograms(programs, accept, reject);
}
AnchorCallbackPredicate predProgramIndexes(const std::vector<ProgramsWithPolicy<Policy>> &groups, Policy reject) {
  return detail::byProgramGroups(groups, reject);
}
AnchorCallbackPredicate predAnchorsPolicies(const std::vector<AnchorWithPolicy<Policy>> &anchors, Policy reject) {
  return detail::byAnchors(anchors, reject);
}

}  // namespace anchor_callbacks

namespace popef_data_usage {

PopefDataUsagePredicate predProgramFlowLoad(const popef::ProgramFlow &flow, Policy accept, Policy reject) {
  return detail::byPrograms(flow.load(), accept, reject);
}
PopefDataUsagePredicate predProgramFlowMain(const popef::ProgramFlow &flow, Policy accept, Policy reject) {
  return detail::byPrograms(flow.main(), accept, reject);
}
PopefDataUsagePredicate predProgramFlowSave(const popef::ProgramFlow &flow, Policy accept, Policy reject) {
  return detail::byPrograms(flow.save(), accept, reject);
}
PopefDataUsagePredicate predProgramNotAssigned(Policy accept, Policy reject) { return notAssigned(accept, reject); }
PopefDataUsagePredicate predProgramIndexes(const std::vector<popef::ProgramFlow::ProgramIndexType> &programs,
                                           Policy accept, Policy reject) {
  return detail::byPrograms(programs, accept, reject);
}
PopefDataUsagePredicate predProgramIndexes(const std::vector<ProgramsWithPolicy<Policy>> &groups, Policy reject) {
  return detail::byProgramGroups(groups, reject);
}
PopefDataUsagePredicate predAnchorsPolicies(const std::vector<AnchorWithPolicy<Policy>> &anchors, Policy reject) {
  return detail::byAnchors(anchors, reject);
}

}  // namespace popef_data_usage
}  // namespace predicate_factory
}  // namespace mrt

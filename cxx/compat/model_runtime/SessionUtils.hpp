// predicate_factory: the Model Runtime API's predefined predicates, as plain
// functions of a popef::Anchor (header-only). An anchor is "owned" by a set
// of programs when any program that transfers it is in the set. Predicates
// are immutable: any thread may call them.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "model_runtime/Callbacks.hpp"

namespace model_runtime {
namespace predicate_factory {

template <typename Policy>
class AnchorWithPolicy {
 public:
  const popef::Anchor &anchor;
  Policy policy;
};

template <typename Policy>
class ProgramsWithPolicy {
 public:
  const std::vector<popef::ProgramFlow::ProgramIndexType> &programsIndexes;
  Policy policy;
};

namespace detail {

inline bool ownedBy(const popef::Anchor &anchor, const std::vector<popef::ProgramFlow::ProgramIndexType> &programs) {
  return std::any_of(anchor.programs().begin(), anchor.programs().end(), [&](auto program) {
    return std::find(programs.begin(), programs.end(), program) != programs.end();
  });
}

// accept if test(anchor), reject otherwise.
template <class Policy, class Test>
std::function<Policy(const popef::Anchor &)> select(Test test, Policy accept, Policy reject) {
  return [test = std::move(test), accept, reject](const popef::Anchor &anchor) {
    return test(anchor) ? accept : reject;
  };
}

template <class Policy>
std::function<Policy(const popef::Anchor &)> ownedByPrograms(std::vector<popef::ProgramFlow::ProgramIndexType> programs,
                                                             Policy accept, Policy reject) {
  return select([programs = std::move(programs)](const popef::Anchor &a) { return ownedBy(a, programs); }, accept,
                reject);
}

// The policy of the first group owning the anchor, reject if none. The
// groups' program lists are copied: the factories' arguments may be temporaries.
template <class Policy>
std::function<Policy(const popef::Anchor &)> programGroups(const std::vector<ProgramsWithPolicy<Policy>> &groups,
                                                           Policy reject) {
  std::vector<std::pair<std::vector<popef::ProgramFlow::ProgramIndexType>, Policy>> copied;
  for (const auto &group : groups) copied.emplace_back(group.programsIndexes, group.policy);
  return [copied = std::move(copied), reject](const popef::Anchor &anchor) {
    for (const auto &group : copied) {
      if (ownedBy(anchor, group.first)) return group.second;
    }
    return reject;
  };
}

// The policy given for the anchor (matched by handle), reject if none.
template <class Policy>
std::function<Policy(const popef::Anchor &)> anchorPolicies(const std::vector<AnchorWithPolicy<Policy>> &entries,
                                                            Policy reject) {
  std::vector<std::pair<std::string, Policy>> copied;
  for (const auto &entry : entries) copied.emplace_back(entry.anchor.handle(), entry.policy);
  return [copied = std::move(copied), reject](const popef::Anchor &anchor) {
    for (const auto &entry : copied) {
      if (entry.first == anchor.handle()) return entry.second;
    }
    return reject;
  };
}

// accept if all (any) of the predicates return their own accept policy,
// which is taken to be the policy given here as accept.
template <class Policy, class... Args>
std::function<Policy(const popef::Anchor &)> combine(bool all, Policy accept, Policy reject, Args &&...pred) {
  std::vector<std::function<Policy(const popef::Anchor &)>> predicates{std::forward<Args>(pred)...};
  return [predicates = std::move(predicates), all, accept, reject](const popef::Anchor &anchor) {
    for (const auto &p : predicates) {
      const bool accepted = p(anchor) == accept;
      if (all && !accepted) return reject;
      if (!all && accepted) return accept;
    }
    return all ? accept : reject;
  };
}

}  // namespace detail

namespace anchor_callbacks {

inline AnchorCallbackPredicate predProgramFlowLoad(const popef::ProgramFlow &flow,
                                                   AnchorCallbackPolicy accept_policy = AnchorCallbackPolicy::BIND_USER_CB,
                                                   AnchorCallbackPolicy reject_policy = AnchorCallbackPolicy::BIND_EMPTY_CB) {
  return detail::ownedByPrograms(flow.load(), accept_policy, reject_policy);
}
inline AnchorCallbackPredicate predProgramFlowMain(const popef::ProgramFlow &flow,
                                                   AnchorCallbackPolicy accept_policy = AnchorCallbackPolicy::BIND_USER_CB,
                                                   AnchorCallbackPolicy reject_policy = AnchorCallbackPolicy::BIND_EMPTY_CB) {
  return detail::ownedByPrograms(flow.main(), accept_policy, reject_policy);
}
inline AnchorCallbackPredicate predProgramFlowSave(const popef::ProgramFlow &flow,
                                                   AnchorCallbackPolicy accept_policy = AnchorCallbackPolicy::BIND_USER_CB,
                                                   AnchorCallbackPolicy reject_policy = AnchorCallbackPolicy::BIND_EMPTY_CB) {
  return detail::ownedByPrograms(flow.save(), accept_policy, reject_policy);
}
inline AnchorCallbackPredicate predProgramNotAssigned(
    AnchorCallbackPolicy accept_policy = AnchorCallbackPolicy::BIND_USER_CB,
    AnchorCallbackPolicy reject_policy = AnchorCallbackPolicy::BIND_EMPTY_CB) {
  return detail::select([](const popef::Anchor &a) { return a.programs().empty(); }, accept_policy, reject_policy);
}
inline AnchorCallbackPredicate predNonScalarType(AnchorCallbackPolicy accept_policy = AnchorCallbackPolicy::BIND_USER_CB,
                                                 AnchorCallbackPolicy reject_policy = AnchorCallbackPolicy::BIND_EMPTY_CB) {
  return detail::select([](const popef::Anchor &a) { return !a.tensorInfo().shape().empty(); }, accept_policy,
                        reject_policy);
}
inline AnchorCallbackPredicate predProgramIndexes(
    const std::vector<popef::ProgramFlow::ProgramIndexType> &program_indexes,
    AnchorCallbackPolicy accept_policy = AnchorCallbackPolicy::BIND_USER_CB,
    AnchorCallbackPolicy reject_policy = AnchorCallbackPolicy::BIND_EMPTY_CB) {
  return detail::ownedByPrograms(program_indexes, accept_policy, reject_policy);
}
inline AnchorCallbackPredicate predProgramIndexes(
    const std::vector<ProgramsWithPolicy<AnchorCallbackPolicy>> &accepted_programs_policies,
    const AnchorCallbackPolicy reject_policy = AnchorCallbackPolicy::BIND_EMPTY_CB) {
  return detail::programGroups(accepted_programs_policies, reject_policy);
}
inline AnchorCallbackPredicate predAnchorsPolicies(
    const std::vector<AnchorWithPolicy<AnchorCallbackPolicy>> &accepted_anchors_policies,
    const AnchorCallbackPolicy reject_policy = AnchorCallbackPolicy::BIND_EMPTY_CB) {
  return detail::anchorPolicies(accepted_anchors_policies, reject_policy);
}
template <typename... Args>
AnchorCallbackPredicate andBind(AnchorCallbackPolicy accept_policy, AnchorCallbackPolicy reject_policy, Args &&...pred) {
  return detail::combine(true, accept_policy, reject_policy, std::forward<Args>(pred)...);
}
template <typename... Args>
AnchorCallbackPredicate orBind(AnchorCallbackPolicy accept_policy, AnchorCallbackPolicy reject_policy, Args &&...pred) {
  return detail::combine(false, accept_policy, reject_policy, std::forward<Args>(pred)...);
}

}  // namespace anchor_callbacks

namespace popef_data_usage {

inline PopefDataUsagePredicate predProgramFlowLoad(
    const popef::ProgramFlow &flow, PopefDataUsagePolicy accept_policy = PopefDataUsagePolicy::USE_USER_DATA,
    PopefDataUsagePolicy reject_policy = PopefDataUsagePolicy::USE_POPEF_DATA_IF_ANY) {
  return detail::ownedByPrograms(flow.load(), accept_policy, reject_policy);
}
inline PopefDataUsagePredicate predProgramFlowMain(
    const popef::ProgramFlow &flow, PopefDataUsagePolicy accept_policy = PopefDataUsagePolicy::USE_USER_DATA,
    PopefDataUsagePolicy reject_policy = PopefDataUsagePolicy::USE_POPEF_DATA_IF_ANY) {
  return detail::ownedByPrograms(flow.main(), accept_policy, reject_policy);
}
inline PopefDataUsagePredicate predProgramFlowSave(
    const popef::ProgramFlow &flow, PopefDataUsagePolicy accept_policy = PopefDataUsagePolicy::USE_USER_DATA,
    PopefDataUsagePolicy reject_policy = PopefDataUsagePolicy::USE_POPEF_DATA_IF_ANY) {
  return detail::ownedByPrograms(flow.save(), accept_policy, reject_policy);
}
inline PopefDataUsagePredicate predProgramNotAssigned(
    PopefDataUsagePolicy accept_policy = PopefDataUsagePolicy::USE_USER_DATA,
    PopefDataUsagePolicy reject_policy = PopefDataUsagePolicy::USE_POPEF_DATA_IF_ANY) {
  return detail::select([](const popef::Anchor &a) { return a.programs().empty(); }, accept_policy, reject_policy);
}
inline PopefDataUsagePredicate predProgramIndexes(
    const std::vector<popef::ProgramFlow::ProgramIndexType> &program_indexes,
    PopefDataUsagePolicy accept_policy = PopefDataUsagePolicy::USE_USER_DATA,
    PopefDataUsagePolicy reject_policy = PopefDataUsagePolicy::USE_POPEF_DATA_IF_ANY) {
  return detail::ownedByPrograms(program_indexes, accept_policy, reject_policy);
}
inline PopefDataUsagePredicate predProgramIndexes(
    const std::vector<ProgramsWithPolicy<PopefDataUsagePolicy>> &accepted_programs_policies,
    const PopefDataUsagePolicy reject_policy = PopefDataUsagePolicy::USE_POPEF_DATA_IF_ANY) {
  return detail::programGroups(accepted_programs_policies, reject_policy);
}
inline PopefDataUsagePredicate predAnchorsPolicies(
    const std::vector<AnchorWithPolicy<PopefDataUsagePolicy>> &accepted_anchors_policies,
    const PopefDataUsagePolicy reject_policy = PopefDataUsagePolicy::USE_POPEF_DATA_IF_ANY) {
  return detail::anchorPolicies(accepted_anchors_policies, reject_policy);
}
template <typename... Args>
PopefDataUsagePredicate orBind(PopefDataUsagePolicy accept_policy, PopefDataUsagePolicy reject_policy, Args &&...pred) {
  return detail::combine(false, accept_policy, reject_policy, std::forward<Args>(pred)...);
}

}  // namespace popef_data_usage
}  // namespace predicate_factory
}  // namespace model_runtime

// Callback types and predicates of the Session (seed 001, 10.2.1): the
// policies that decide, per anchor, whether PopEF data is used
// (PopefDataUsagePolicy) and which callback is bound (AnchorCallbackPolicy),
// and the predicate_factory functions that build common predicates.
//
// Predicates are plain std::function values: copyable, callable from any
// thread, and they keep copies of everything they were built from (program
// index lists, anchor handles), so they outlive their arguments.
#pragma once

#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "popef/anchor.hpp"
#include "popef/program_flow.hpp"

namespace mrt {

// What a CallbackFactory is given.
struct CallbackInfo {
  const popef::Anchor &anchor;
  // The replica whose stream the callback serves (replicated models call
  // the factory once per replica; 0 otherwise).
  unsigned replica = 0;
};

// Called whenever the device reads (input) or wrote (output) the anchor's
// stream; the pointer holds exactly anchor.tensorInfo().sizeInBytes() bytes
// and is valid only during the call.
using CallbackHandle = std::function<void(void *)>;
// Returns the callback for an anchor, or an empty function for "none".
using CallbackFactory = std::function<CallbackHandle(const CallbackInfo &info)>;

enum class PopefDataUsagePolicy {
  USE_POPEF_DATA_IF_ANY = 0,  // bind the anchor's TensorData / FeedData if the model has it
  USE_USER_DATA,              // never: the user binds a callback
};
using PopefDataUsagePredicate = std::function<PopefDataUsagePolicy(const popef::Anchor &)>;
inline const PopefDataUsagePredicate null_popef_data_usage_predicate = {};

enum class AnchorCallbackPolicy {
  BIND_USER_CB = 0,  // bind the factory's callback
  BIND_EMPTY_CB,     // bind a callback that does nothing
  SKIP_CB,           // leave the anchor's binding as it is
};
using AnchorCallbackPredicate = std::function<AnchorCallbackPolicy(const popef::Anchor &)>;
inline const AnchorCallbackPredicate null_anchor_callback_predicate = {};

std::string_view toString(PopefDataUsagePolicy policy) noexcept;
std::string_view toString(AnchorCallbackPolicy policy) noexcept;

namespace predicate_factory {

// An anchor (matched by handle, unique in a model) and the policy it gets.
template <typename Policy>
class AnchorWithPolicy {
 public:
  const popef::Anchor &anchor;
  Policy policy;
};

// Anchors moved by any of programsIndexes get `policy`.
template <typename Policy>
class ProgramsWithPolicy {
 public:
  const std::vector<popef::ProgramFlow::ProgramIndexType> &programsIndexes;
  Policy policy;
};

namespace detail {

using ProgramIndexes = std::vector<popef::ProgramFlow::ProgramIndexType>;

// True if the anchor is moved by any of `programs`.
bool anchorInPrograms(const popef::Anchor &anchor, const ProgramIndexes &programs) noexcept;

template <typename Policy>
std::function<Policy(const popef::Anchor &)> byPrograms(ProgramIndexes programs, Policy accept, Policy reject) {
  return [programs = std::move(programs), accept, reject](const popef::Anchor &anchor) {
    return anchorInPrograms(anchor, programs) ? accept : reject;
  };
}

// The first group (in order) that moves the anchor decides its policy.
template <typename Policy>
std::function<Policy(const popef::Anchor &)> byProgramGroups(const std::vector<ProgramsWithPolicy<Policy>> &groups,
                                                             Policy reject) {
  std::vector<std::pair<ProgramIndexes, Policy>> copies;
  for (const auto &group : groups) copies.emplace_back(group.programsIndexes, group.policy);
  return [copies = std::move(copies), reject](const popef::Anchor &anchor) {
    for (const auto &[programs, policy] : copies) {
      if (anchorInPrograms(anchor, programs)) return policy;
    }
    return reject;
  };
}

template <typename Policy>
std::function<Policy(const popef::Anchor &)> byAnchors(const std::vector<AnchorWithPolicy<Policy>> &anchors,
                                                       Policy reject) {
  std::vector<std::pair<std::string, Policy>> handles;
  for (const auto &entry : anchors) handles.emplace_back(entry.anchor.handle(), entry.policy);
  return [handles = std::move(handles), reject](const popef::Anchor &anchor) {
    for (const auto &[handle, policy] : handles) {
      if (handle == anchor.handle()) return policy;
    }
    return reject;
  };
}

// andBind: accept if every predicate accepts; orBind: if any does. Empty
// predicates count as rejecting.
template <typename Policy, typename... Preds>
std::function<Policy(const popef::Anchor &)> combine(bool all, Policy accept, Policy reject, Preds &&...preds) {
  std::vector<std::function<Policy(const popef::Anchor &)>> list{std::forward<Preds>(preds)...};
  return [list = std::move(list), all, accept, reject](const popef::Anchor &anchor) {
    for (const auto &pred : list) {
      const bool accepted = pred && pred(anchor) == accept;
      if (all && !accepted) return reject;
      if (!all && accepted) return accept;
    }
    return all && !list.empty() ? accept : reject;
  };
}

}  // namespace detail

namespace anchor_callbacks {

using Policy = AnchorCallbackPolicy;

AnchorCallbackPredicate predProgramFlowLoad(const popef::ProgramFlow &flow,
                                            Policy accept_policy = Policy::BIND_USER_CB,
                                            Policy reject_policy = Policy::BIND_EMPTY_CB);
AnchorCallbackPredicate predProgramFlowMain(const popef::ProgramFlow &flow,
                                            Policy accept_policy = Policy::BIND_USER_CB,
                                            Policy reject_policy = Policy::BIND_EMPTY_CB);
AnchorCallbackPredicate predProgramFlowSave(const popef::ProgramFlow &flow,
                                            Policy accept_policy = Policy::BIND_USER_CB,
                                            Policy reject_policy = Policy::BIND_EMPTY_CB);
// Anchors that no program moves.
AnchorCallbackPredicate predProgramNotAssigned(Policy accept_policy = Policy::BIND_USER_CB,
                                               Policy reject_policy = Policy::BIND_EMPTY_CB);
// Anchors with a rank of at least 1 (scalars have an empty shape).
AnchorCallbackPredicate predNonScalarType(Policy accept_policy = Policy::BIND_USER_CB,
                                          Policy reject_policy = Policy::BIND_EMPTY_CB);
AnchorCallbackPredicate predProgramIndexes(const std::vector<popef::ProgramFlow::ProgramIndexType> &program_indexes,
                                           Policy accept_policy = Policy::BIND_USER_CB,
                                           Policy reject_policy = Policy::BIND_EMPTY_CB);
AnchorCallbackPredicate predProgramIndexes(const std::vector<ProgramsWithPolicy<Policy>> &accepted_programs_policies,
                                           Policy reject_policy = Policy::BIND_EMPTY_CB);
AnchorCallbackPredicate predAnchorsPolicies(const std::vector<AnchorWithPolicy<Policy>> &accepted_anchors_policies,
                                            Policy reject_policy = Policy::BIND_EMPTY_CB);

// accept_policy when every predicate returns accept_policy, else reject_policy.
template <typename... Args>
AnchorCallbackPredicate andBind(Policy accept_policy, Policy reject_policy, Args &&...pred) {
  return detail::combine<Policy>(true, accept_policy, reject_policy, std::forward<Args>(pred)...);
}
// accept_policy when any predicate returns accept_policy, else reject_policy.
template <typename... Args>
AnchorCallbackPredicate orBind(Policy accept_policy, Policy reject_policy, Args &&...pred) {
  return detail::combine<Policy>(false, accept_policy, reject_policy, std::forward<Args>(pred)...);
}

}  // namespace anchor_callbacks

namespace popef_data_usage {

using Policy = PopefDataUsagePolicy;

PopefDataUsagePredicate predProgramFlowLoad(const popef::ProgramFlow &flow,
                                            Policy accept_policy = Policy::USE_USER_DATA,
                                            Policy reject_policy = Policy::USE_POPEF_DATA_IF_ANY);
PopefDataUsagePredicate predProgramFlowMain(const popef::ProgramFlow &flow,
                                            Policy accept_policy = Policy::USE_USER_DATA,
                                            Policy reject_policy = Policy::USE_POPEF_DATA_IF_ANY);
PopefDataUsagePredicate predProgramFlowSave(const popef::ProgramFlow &flow,
                                            Policy accept_policy = Policy::USE_USER_DATA,
                                            Policy reject_policy = Policy::USE_POPEF_DATA_IF_ANY);
PopefDataUsagePredicate predProgramNotAssigned(Policy accept_policy = Policy::USE_USER_DATA,
                                               Policy reject_policy = Policy::USE_POPEF_DATA_IF_ANY);
PopefDataUsagePredicate predProgramIndexes(const std::vector<popef::ProgramFlow::ProgramIndexType> &program_indexes,
                                           Policy accept_policy = Policy::USE_USER_DATA,
                                           Policy reject_policy = Policy::USE_POPEF_DATA_IF_ANY);
PopefDataUsagePredicate predProgramIndexes(const std::vector<ProgramsWithPolicy<Policy>> &accepted_programs_policies,
                                           Policy reject_policy = Policy::USE_POPEF_DATA_IF_ANY);
PopefDataUsagePredicate predAnchorsPolicies(const std::vector<AnchorWithPolicy<Policy>> &accepted_anchors_policies,
                                            Policy reject_policy = Policy::USE_POPEF_DATA_IF_ANY);

template <typename... Args>
PopefDataUsagePredicate andBind(Policy accept_policy, Policy reject_policy, Args &&...pred) {
  return detail::combine<Policy>(true, accept_policy, reject_policy, std::forward<Args>(pred)...);
}
template <typename... Args>
PopefDataUsagePredicate orBind(Policy accept_policy, Policy reject_policy, Args &&...pred) {
  return detail::combine<Policy>(false, accept_policy, reject_policy, std::forward<Args>(pred)...);
}

}  // namespace popef_data_usage

}  // namespace predicate_factory
}  // namespace mrt

// Anchor callbacks and the predicates that choose how each anchor of a
// session is fed: CallbackInfo, CallbackHandle, CallbackFactory, the policy
// enums and predicate types, with the Model Runtime API's names. Predicates
// are called on the thread of the Session call that uses them (creation,
// setUser*Handler); an exception they throw is rethrown by that call.
#pragma once

#include <functional>

#include "mrt.hpp"
#include "popef/Types.hpp"
#include "poplar/StreamCallback.hpp"

namespace model_runtime {

struct CallbackInfo {
  const popef::Anchor &anchor;
};

// Called whenever the device reads (input: fill the buffer with
// anchor.tensorInfo().sizeInBytes() bytes) or wrote (output: read them) the
// anchor's stream, on the thread running the session's programs. The buffer
// is valid during the call only.
using CallbackHandle = std::function<void(void *)>;
using CallbackFactory = std::function<poplar::StreamCallbackHandle(const CallbackInfo &info)>;

enum class PopefDataUsagePolicy { USE_POPEF_DATA_IF_ANY = MRT_USE_POPEF_DATA_IF_ANY, USE_USER_DATA = MRT_USE_USER_DATA };
using PopefDataUsagePredicate = std::function<PopefDataUsagePolicy(const popef::Anchor &)>;
static const PopefDataUsagePredicate null_popef_data_usage_predicate = {};

enum class AnchorCallbackPolicy {
  BIND_USER_CB = MRT_BIND_USER_CB,
  BIND_EMPTY_CB = MRT_BIND_EMPTY_CB,
  SKIP_CB = MRT_SKIP_CB
};
using AnchorCallbackPredicate = std::function<AnchorCallbackPolicy(const popef::Anchor &)>;
static const AnchorCallbackPredicate null_anchor_callback_predicate = {};

}  // namespace model_runtime

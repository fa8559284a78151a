// The session part of the C API (include/mrt_c.h, "Sessions"), over
// src/session. A session handle owns its mrt::Session and a reference to
// the (mutable-typed) model for mrt_session_model(); C callbacks become
// std::function wrappers that share ownership of their user data, so
// user_data_free runs once, when the session drops the callback.
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "capi/device.hpp"
#include "capi/guard.hpp"
#include "capi/model.hpp"
#include "capi/session.hpp"
#include "capi/sized_struct.hpp"
#include "capi/user_data.hpp"
#include "popef/reader.hpp"
#include "session/session.hpp"

struct mrt_anchor_predicate {
  std::variant<mrt::AnchorCallbackPredicate, mrt::PopefDataUsagePredicate> predicate;
};


namespace {

using mrt::Error;
using mrt::ErrorCode;
using mrt::capi::anchorInfo;
using mrt::capi::fillSized;
using mrt::capi::modelOf;
using mrt::capi::ownUserData;
using mrt::capi::requireNotNull;
using mrt::capi::sessionOf;
namespace popef = mrt::popef;
namespace cb = mrt::predicate_factory::anchor_callbacks;
namespace du = mrt::predicate_factory::popef_data_usage;
using CallbackPolicy = mrt::AnchorCallbackPolicy;
using DataPolicy = mrt::PopefDataUsagePolicy;

static_assert(static_cast<int>(CallbackPolicy::BIND_USER_CB) == MRT_BIND_USER_CB);
static_assert(static_cast<int>(CallbackPolicy::BIND_EMPTY_CB) == MRT_BIND_EMPTY_CB);
static_assert(static_cast<int>(CallbackPolicy::SKIP_CB) == MRT_SKIP_CB);
static_assert(static_cast<int>(DataPolicy::USE_POPEF_DATA_IF_ANY) == MRT_USE_POPEF_DATA_IF_ANY);
static_assert(static_cast<int>(DataPolicy::USE_USER_DATA) == MRT_USE_USER_DATA);

// The first published layouts: callers may pass these sizes or larger.

// ---- predicates ----

void requireKind(int32_t kind) {
  if (kind != MRT_PREDICATE_ANCHOR_CALLBACK && kind != MRT_PREDICATE_POPEF_DATA_USAGE) {
    throw Error(ErrorCode::InvalidArgument, "kind {} is not an mrt_predicate_kind value", kind);
  }
}

CallbackPolicy callbackPolicyOf(int32_t value, const char *argument) {
  if (value < MRT_BIND_USER_CB || value > MRT_SKIP_CB) {
    throw Error(ErrorCode::InvalidArgument, "{} {} is not an mrt_anchor_callback_policy value", argument, value);
  }
  return static_cast<CallbackPolicy>(value);
}

DataPolicy dataPolicyOf(int32_t value, const char *argument) {
  if (value < MRT_USE_POPEF_DATA_IF_ANY || value > MRT_USE_USER_DATA) {
    throw Error(ErrorCode::InvalidArgument, "{} {} is not an mrt_popef_data_usage_policy value", argument, value);
  }
  return static_cast<DataPolicy>(value);
}

template <typename Policy>
Policy policyOf(int32_t value, const char *argument) {
  if constexpr (std::is_same_v<Policy, CallbackPolicy>) {
    return callbackPolicyOf(value, argument);
  } else {
    return dataPolicyOf(value, argument);
  }
}

void givePredicate(mrt_anchor_predicate **out, mrt_anchor_predicate predicate) {
  *out = new mrt_anchor_predicate{std::move(predicate)};
}

std::vector<popef::ProgramFlow::ProgramIndexType> programsOf(const uint64_t *programs, size_t count,
                                                             const char *argument) {
  if (count > 0) requireNotNull(programs, argument);
  return {programs, programs + count};
}

// The prebuilt predicates of one namespace (Ns is cb or du via a tag).
template <typename Policy, typename Factory>
std::function<Policy(const popef::Anchor &)> prebuilt(int32_t which, const mrt_model *model,
                                                      const std::vector<popef::ProgramFlow::ProgramIndexType> &programs,
                                                      Policy accept, Policy reject, Factory factory) {
  auto flow = [&]() -> const popef::ProgramFlow & { return modelOf(model, "model")->metadata.programFlow(); };
  switch (which) {
    case MRT_PRED_PROGRAM_FLOW_LOAD: return factory.load(flow(), accept, reject);
    case MRT_PRED_PROGRAM_FLOW_MAIN: return factory.main(flow(), accept, reject);
    case MRT_PRED_PROGRAM_FLOW_SAVE: return factory.save(flow(), accept, reject);
    case MRT_PRED_PROGRAM_NOT_ASSIGNED: return factory.notAssigned(accept, reject);
    case MRT_PRED_NON_SCALAR_TYPE: return factory.nonScalar(accept, reject);
    case MRT_PRED_PROGRAM_INDEXES: return factory.indexes(programs, accept, reject);
    default: break;
  }
  throw Error(ErrorCode::InvalidArgument, "prebuilt {} is not an mrt_prebuilt_predicate value", which);
}

struct CallbackFactories {
  static mrt::AnchorCallbackPredicate load(const popef::ProgramFlow &f, CallbackPolicy a, CallbackPolicy r) {
    return cb::predProgramFlowLoad(f, a, r);
  }
  static mrt::AnchorCallbackPredicate main(const popef::ProgramFlow &f, CallbackPolicy a, CallbackPolicy r) {
    return cb::predProgramFlowMain(f, a, r);
  }
  static mrt::AnchorCallbackPredicate save(const popef::ProgramFlow &f, CallbackPolicy a, CallbackPolicy r) {
    return cb::predProgramFlowSave(f, a, r);
  }
  static mrt::AnchorCallbackPredicate notAssigned(CallbackPolicy a, CallbackPolicy r) {
    return cb::predProgramNotAssigned(a, r);
  }
  static mrt::AnchorCallbackPredicate nonScalar(CallbackPolicy a, CallbackPolicy r) {
    return cb::predNonScalarType(a, r);
  }
  static mrt::AnchorCallbackPredicate indexes(const std::vector<popef::ProgramFlow::ProgramIndexType> &p,
                                              CallbackPolicy a, CallbackPolicy r) {
    return cb::predProgramIndexes(p, a, r);
  }
};

struct DataFactories {
  static mrt::PopefDataUsagePredicate load(const popef::ProgramFlow &f, DataPolicy a, DataPolicy r) {
    return du::predProgramFlowLoad(f, a, r);
  }
  static mrt::PopefDataUsagePredicate main(const popef::ProgramFlow &f, DataPolicy a, DataPolicy r) {
    return du::predProgramFlowMain(f, a, r);
  }
  static mrt::PopefDataUsagePredicate save(const popef::ProgramFlow &f, DataPolicy a, DataPolicy r) {
    return du::predProgramFlowSave(f, a, r);
  }
  static mrt::PopefDataUsagePredicate notAssigned(DataPolicy a, DataPolicy r) {
    return du::predProgramNotAssigned(a, r);
  }
  static mrt::PopefDataUsagePredicate nonScalar(DataPolicy, DataPolicy) {
    throw Error(ErrorCode::InvalidArgument,
                "MRT_PRED_NON_SCALAR_TYPE is an anchor callback predicate (kind MRT_PREDICATE_ANCHOR_CALLBACK)");
  }
  static mrt::PopefDataUsagePredicate indexes(const std::vector<popef::ProgramFlow::ProgramIndexType> &p,
                                              DataPolicy a, DataPolicy r) {
    return du::predProgramIndexes(p, a, r);
  }
};

template <typename Policy>
const std::function<Policy(const popef::Anchor &)> &predicateOfKind(const mrt_anchor_predicate *handle,
                                                                     const char *argument) {
  requireNotNull(handle, argument);
  const auto *predicate = std::get_if<std::function<Policy(const popef::Anchor &)>>(&handle->predicate);
  if (predicate == nullptr) {
    throw Error(ErrorCode::InvalidArgument, "{} is a predicate of kind {}, expected {}", argument,
                std::is_same_v<Policy, CallbackPolicy> ? "MRT_PREDICATE_POPEF_DATA_USAGE"
                                                       : "MRT_PREDICATE_ANCHOR_CALLBACK",
                std::is_same_v<Policy, CallbackPolicy> ? "MRT_PREDICATE_ANCHOR_CALLBACK"
                                                       : "MRT_PREDICATE_POPEF_DATA_USAGE");
  }
  return *predicate;
}

// andBind/orBind over a runtime list, folded from the right:
// and(p1, p2, p3) = andBind(p1, andBind(p2, p3)).
template <typename Policy>
std::function<Policy(const popef::Anchor &)> combine(bool all, Policy accept, Policy reject,
                                                     const mrt_anchor_predicate *const *predicates, size_t count) {
  requireNotNull(predicates, "predicates");
  if (count == 0) throw Error(ErrorCode::InvalidArgument, "num_predicates must be at least 1");
  std::function<Policy(const popef::Anchor &)> result;
  for (size_t i = count; i-- > 0;) {
    const std::string argument = fmt::format("predicates[{}]", i);
    auto current = predicateOfKind<Policy>(predicates[i], argument.c_str());
    if (!result) {
      result = mrt::predicate_factory::detail::combine<Policy>(all, accept, reject, std::move(current));
    } else {
      result = mrt::predicate_factory::detail::combine<Policy>(all, accept, reject, std::move(current), result);
    }
  }
  return result;
}

// ---- sessions ----


// The C defaults: SessionConfig's, NULL for the pointers.
mrt_session_config defaultSessionConfig() {
  const mrt::SessionConfig defaults;
  mrt_session_config c{};
  c.policy = defaults.policy == mrt::LaunchPolicy::Immediate ? MRT_LAUNCH_IMMEDIATE : MRT_LAUNCH_DEFERRED;
  c.check_package_hash = defaults.check_package_hash;
  c.max_look_ahead_syncs = -1;
  return c;
}

mrt::SessionConfig sessionConfigOf(const mrt_session_config *config) {
  mrt::SessionConfig result;
  if (config == nullptr) return result;
  const mrt_session_config c =
      mrt::capi::readSized(config, defaultSessionConfig(), MRT_SESSION_CONFIG_V1_SIZE, "config");
  if (c.policy != MRT_LAUNCH_IMMEDIATE && c.policy != MRT_LAUNCH_DEFERRED) {
    throw Error(ErrorCode::InvalidArgument, "config->policy {} is not an mrt_launch_policy value", c.policy);
  }
  result.policy = c.policy == MRT_LAUNCH_IMMEDIATE ? mrt::LaunchPolicy::Immediate : mrt::LaunchPolicy::Deferred;
  if (c.pred_tensor_data != nullptr) {
    result.pred_tensor_data = predicateOfKind<DataPolicy>(c.pred_tensor_data, "config->pred_tensor_data");
  }
  result.check_package_hash = c.check_package_hash;
  result.wait_config = mrt::capi::waitConfigOf(c.wait_config, "config->wait_config");
  if (c.max_look_ahead != nullptr && c.max_look_ahead_syncs >= 0) {
    throw Error(ErrorCode::InvalidArgument,
                "config->max_look_ahead '{}' and config->max_look_ahead_syncs {} are both set; set only "
                "max_look_ahead_syncs",
                c.max_look_ahead, c.max_look_ahead_syncs);
  }
  if (c.max_look_ahead != nullptr) {
    result.max_look_ahead = c.max_look_ahead;
  } else if (c.max_look_ahead_syncs >= 0) {
    result.max_look_ahead = std::to_string(c.max_look_ahead_syncs);
  }
  if (c.model_name != nullptr) result.model_name = c.model_name;
  return result;
}

void createSession(std::shared_ptr<popef::Model> model, const mrt::SessionConfig &config, mrt_session **out) {
  requireNotNull(out, "out");
  auto session = std::make_unique<mrt::Session>(model, config);
  *out = new mrt_session{std::move(model), std::move(session), {}};
}

// A C callback as a CallbackHandle; the user data goes with the last copy.
mrt::CallbackHandle callbackOf(mrt_anchor_callback_fn fn, std::shared_ptr<mrt::capi::UserData> owner,
                               uint64_t size) {
  return [fn, owner = std::move(owner), size](void *buffer) { fn(buffer, size, owner->get()); };
}

void setHandler(mrt_session *session, mrt_callback_factory_fn factory, void *userData, void (*userDataFree)(void *),
                const mrt_anchor_predicate *predicate, bool skipConnected, bool input) {
  const auto owner = ownUserData(userData, userDataFree);
  mrt::Session &s = sessionOf(session);
  requireNotNull(reinterpret_cast<const void *>(factory), "factory");
  mrt::AnchorCallbackPredicate pred;
  if (predicate != nullptr) pred = predicateOfKind<CallbackPolicy>(predicate, "predicate");
  const mrt::CallbackFactory wrapped = [&](const mrt::CallbackInfo &info) -> mrt::CallbackHandle {
    const mrt_anchor_info anchor = anchorInfo(info.anchor);
    mrt_anchor_callback callback{};
    const bool given = factory(&anchor, &callback, owner->get());
    auto callbackOwner = ownUserData(callback.user_data, callback.user_data_free);
    if (!given || callback.fn == nullptr) return {};
    return callbackOf(callback.fn, std::move(callbackOwner), static_cast<uint64_t>(anchor.size_in_bytes));
  };
  if (input) {
    s.setUserInputHandler(wrapped, pred, skipConnected);
  } else {
    s.setUserOutputHandler(wrapped, pred, skipConnected);
  }
}

std::vector<const popef::Anchor *> anchorSet(const mrt::Session &session, int32_t set) {
  switch (set) {
    case MRT_SESSION_INPUT_ANCHORS: return session.getInputAnchors();
    case MRT_SESSION_USER_INPUT_ANCHORS: return session.getUserInputAnchors();
    case MRT_SESSION_USER_OUTPUT_ANCHORS: return session.getUserOutputAnchors();
    default: break;
  }
  throw Error(ErrorCode::InvalidArgument, "set {} is not an mrt_session_anchor_set value", set);
}

template <typename Body>
mrt_status onSession(const char *function, mrt_session *session, Body &&body) {
  return mrt::capi::guard(function, [&] { body(sessionOf(session)); });
}

}  // namespace

extern "C" {

// ---- predicates ----

MRT_API mrt_status mrt_anchor_predicate_create(int32_t kind, int32_t which, const mrt_model *model,
                                               const uint64_t *programs, size_t num_programs,
                                               int32_t accept_policy, int32_t reject_policy,
                                               mrt_anchor_predicate **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    requireNotNull(out, "out");
    requireKind(kind);
    const auto indexes = programsOf(programs, num_programs, "programs");
    if (kind == MRT_PREDICATE_ANCHOR_CALLBACK) {
      givePredicate(out, {prebuilt(which, model, indexes, callbackPolicyOf(accept_policy, "accept_policy"),
                                   callbackPolicyOf(reject_policy, "reject_policy"), CallbackFactories{})});
    } else {
      givePredicate(out, {prebuilt(which, model, indexes, dataPolicyOf(accept_policy, "accept_policy"),
                                   dataPolicyOf(reject_policy, "reject_policy"), DataFactories{})});
    }
  });
}

MRT_API mrt_status mrt_anchor_predicate_create_program_policies(int32_t kind, const mrt_programs_with_policy *groups,
                                                                size_t num_groups, int32_t reject_policy,
                                                                mrt_anchor_predicate **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    requireNotNull(out, "out");
    requireKind(kind);
    if (num_groups > 0) requireNotNull(groups, "groups");
    std::vector<std::vector<popef::ProgramFlow::ProgramIndexType>> lists;
    for (size_t i = 0; i < num_groups; ++i) {
      lists.push_back(programsOf(groups[i].programs, groups[i].num_programs, "groups[].programs"));
    }
    auto build = [&]<typename Policy>(Policy) {
      std::vector<mrt::predicate_factory::ProgramsWithPolicy<Policy>> entries;
      for (size_t i = 0; i < num_groups; ++i) entries.push_back({lists[i], policyOf<Policy>(groups[i].policy, "groups[].policy")});
      return entries;
    };
    if (kind == MRT_PREDICATE_ANCHOR_CALLBACK) {
      givePredicate(out, {cb::predProgramIndexes(build(CallbackPolicy{}), callbackPolicyOf(reject_policy, "reject_policy"))});
    } else {
      givePredicate(out, {du::predProgramIndexes(build(DataPolicy{}), dataPolicyOf(reject_policy, "reject_policy"))});
    }
  });
}

MRT_API mrt_status mrt_anchor_predicate_create_anchor_policies(int32_t kind, const mrt_anchor_with_policy *entries,
                                                               size_t num_entries, int32_t reject_policy,
                                                               mrt_anchor_predicate **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    requireNotNull(out, "out");
    requireKind(kind);
    if (num_entries > 0) requireNotNull(entries, "entries");
    // AnchorWithPolicy names an anchor; only its handle is compared.
    std::vector<popef::Anchor> anchors;
    anchors.reserve(num_entries);
    for (size_t i = 0; i < num_entries; ++i) {
      if (entries[i].handle == nullptr) throw Error(ErrorCode::InvalidArgument, "entries[{}].handle must not be NULL", i);
      popef::Anchor anchor;
      anchor.setHandle(entries[i].handle);
      anchors.push_back(std::move(anchor));
    }
    auto build = [&]<typename Policy>(Policy) {
      std::vector<mrt::predicate_factory::AnchorWithPolicy<Policy>> list;
      for (size_t i = 0; i < num_entries; ++i) list.push_back({anchors[i], policyOf<Policy>(entries[i].policy, "entries[].policy")});
      return list;
    };
    if (kind == MRT_PREDICATE_ANCHOR_CALLBACK) {
      givePredicate(out, {cb::predAnchorsPolicies(build(CallbackPolicy{}), callbackPolicyOf(reject_policy, "reject_policy"))});
    } else {
      givePredicate(out, {du::predAnchorsPolicies(build(DataPolicy{}), dataPolicyOf(reject_policy, "reject_policy"))});
    }
  });
}

MRT_API mrt_status mrt_anchor_predicate_create_user(int32_t kind, mrt_anchor_predicate_fn fn, void *user_data,
                                                    void (*user_data_free)(void *),
                                                    mrt_anchor_predicate **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    auto owner = ownUserData(user_data, user_data_free);
    requireNotNull(out, "out");
    requireNotNull(reinterpret_cast<const void *>(fn), "fn");
    requireKind(kind);
    auto call = [fn, owner](const popef::Anchor &anchor) {
      const mrt_anchor_info info = anchorInfo(anchor);
      return fn(&info, owner->get());
    };
    if (kind == MRT_PREDICATE_ANCHOR_CALLBACK) {
      givePredicate(out, {mrt::AnchorCallbackPredicate(
                             [call](const popef::Anchor &a) { return callbackPolicyOf(call(a), "the user predicate's result"); })});
    } else {
      givePredicate(out, {mrt::PopefDataUsagePredicate(
                             [call](const popef::Anchor &a) { return dataPolicyOf(call(a), "the user predicate's result"); })});
    }
  });
}

MRT_API mrt_status mrt_anchor_predicate_and(int32_t kind, int32_t accept_policy, int32_t reject_policy,
                                            const mrt_anchor_predicate *const *predicates, size_t num_predicates,
                                            mrt_anchor_predicate **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    requireNotNull(out, "out");
    requireKind(kind);
    if (kind == MRT_PREDICATE_ANCHOR_CALLBACK) {
      givePredicate(out, {combine(true, callbackPolicyOf(accept_policy, "accept_policy"),
                                  callbackPolicyOf(reject_policy, "reject_policy"), predicates, num_predicates)});
    } else {
      givePredicate(out, {combine(true, dataPolicyOf(accept_policy, "accept_policy"),
                                  dataPolicyOf(reject_policy, "reject_policy"), predicates, num_predicates)});
    }
  });
}

MRT_API mrt_status mrt_anchor_predicate_or(int32_t kind, int32_t accept_policy, int32_t reject_policy,
                                           const mrt_anchor_predicate *const *predicates, size_t num_predicates,
                                           mrt_anchor_predicate **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    requireNotNull(out, "out");
    requireKind(kind);
    if (kind == MRT_PREDICATE_ANCHOR_CALLBACK) {
      givePredicate(out, {combine(false, callbackPolicyOf(accept_policy, "accept_policy"),
                                  callbackPolicyOf(reject_policy, "reject_policy"), predicates, num_predicates)});
    } else {
      givePredicate(out, {combine(false, dataPolicyOf(accept_policy, "accept_policy"),
                                  dataPolicyOf(reject_policy, "reject_policy"), predicates, num_predicates)});
    }
  });
}

MRT_API mrt_status mrt_anchor_predicate_evaluate(const mrt_anchor_predicate *predicate, const mrt_model *model,
                                                 const char *anchor_handle, int32_t *out_policy) noexcept {
  return mrt::capi::guard(__func__, [&] {
    requireNotNull(predicate, "predicate");
    const popef::Model &m = *modelOf(model, "model");
    requireNotNull(anchor_handle, "anchor_handle");
    requireNotNull(out_policy, "out_policy");
    const popef::Anchor *anchor = m.metadata.findAnchorByHandle(anchor_handle);
    if (anchor == nullptr) {
      throw Error(ErrorCode::NotFound, "model '{}' has no anchor with handle '{}'", m.metadata.executable(),
                  anchor_handle);
    }
    *out_policy = std::visit([&](const auto &fn) { return static_cast<int32_t>(fn(*anchor)); }, predicate->predicate);
  });
}

MRT_API void mrt_anchor_predicate_destroy(mrt_anchor_predicate *predicate) noexcept { delete predicate; }

// ---- sessions ----

MRT_API mrt_status mrt_session_config_init_sized(mrt_session_config *config, size_t size) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt::capi::initSized(config, defaultSessionConfig(), size, MRT_SESSION_CONFIG_V1_SIZE,
                         MRT_STRUCT_SIZE(mrt_session_config, model_name), "config");
  });
}

// The symbol of callers built before mrt_session_config_init_sized: V1 fields.
MRT_API void(mrt_session_config_init)(mrt_session_config *config) noexcept {
  if (config != nullptr) mrt_session_config_init_sized(config, MRT_SESSION_CONFIG_V1_SIZE);
}

MRT_API mrt_status mrt_session_create(const mrt_model *model, const mrt_session_config *config,
                                      mrt_session **out) noexcept {
  return mrt::capi::guard(__func__, [&] { createSession(modelOf(model, "model"), sessionConfigOf(config), out); });
}

MRT_API mrt_status mrt_session_create_from_files(const char *const *paths, size_t num_paths,
                                                 const mrt_session_config *config, mrt_session **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    requireNotNull(paths, "paths");
    requireNotNull(out, "out");
    if (num_paths == 0) throw Error(ErrorCode::InvalidArgument, "num_paths must be at least 1");
    std::vector<std::string> list;
    for (size_t i = 0; i < num_paths; ++i) {
      if (paths[i] == nullptr) throw Error(ErrorCode::InvalidArgument, "paths[{}] must not be NULL", i);
      list.emplace_back(paths[i]);
    }
    const mrt::SessionConfig sessionConfig = sessionConfigOf(config);
    createSession(popef::loadModel(list, sessionConfig.model_name), sessionConfig, out);
  });
}

MRT_API void mrt_session_destroy(mrt_session *session) noexcept {
  if (session == nullptr) return;
  mrt::capi::detachQueueManagers(*session, "its session was destroyed");
  delete session;
}

MRT_API mrt_status mrt_session_model(const mrt_session *session, mrt_model **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    requireNotNull(session, "session");
    requireNotNull(out, "out");
    *out = new mrt_model{session->model};
  });
}

MRT_API mrt_status mrt_session_bind_to_device(mrt_session *session, const mrt_device *device) noexcept {
  return onSession(__func__, session, [&](mrt::Session &s) {
    requireNotNull(device, "device");
    s.bindToDevice(device->device);
  });
}

MRT_API mrt_status mrt_session_unload_from_device(mrt_session *session) noexcept {
  return onSession(__func__, session, [](mrt::Session &s) { s.unloadFromDevice(); });
}

MRT_API mrt_status mrt_session_reload(mrt_session *session) noexcept {
  return onSession(__func__, session, [](mrt::Session &s) { s.reload(); });
}

MRT_API mrt_status mrt_session_run_load_programs(mrt_session *session) noexcept {
  return onSession(__func__, session, [](mrt::Session &s) { s.runLoadPrograms(); });
}

MRT_API mrt_status mrt_session_run_main_programs(mrt_session *session) noexcept {
  return onSession(__func__, session, [](mrt::Session &s) { s.runMainPrograms(); });
}

MRT_API mrt_status mrt_session_run_save_programs(mrt_session *session) noexcept {
  return onSession(__func__, session, [](mrt::Session &s) { s.runSavePrograms(); });
}

MRT_API mrt_status mrt_session_run_programs(mrt_session *session, const uint64_t *programs,
                                            size_t num_programs) noexcept {
  return onSession(__func__, session,
                   [&](mrt::Session &s) { s.runPrograms(programsOf(programs, num_programs, "programs")); });
}

namespace {
// mrt_session_set_(replica_)callback_for_anchor: on `replica`, or every replica.
void setAnchorCallback(mrt_session *session, const char *anchor_handle, unsigned replica, mrt_anchor_callback_fn fn,
                       void *user_data, void (*user_data_free)(void *)) {
  auto owner = ownUserData(user_data, user_data_free);
  mrt::Session &s = sessionOf(session);
  requireNotNull(anchor_handle, "anchor_handle");
  const popef::Anchor *anchor = session->model->metadata.findAnchorByHandle(anchor_handle);
  mrt::CallbackHandle callback;  // empty, or NotFound naming the handle
  if (fn != nullptr && anchor != nullptr) {
    callback = callbackOf(fn, std::move(owner), static_cast<uint64_t>(anchor->tensorInfo().sizeInBytes()));
  }
  if (replica == mrt::Session::kAllReplicas) {
    s.setCallbackForAnchor(anchor_handle, std::move(callback));
  } else {
    s.setCallbackForAnchor(anchor_handle, replica, std::move(callback));
  }
}
}  // namespace

MRT_API mrt_status mrt_session_set_callback_for_anchor(mrt_session *session, const char *anchor_handle,
                                                       mrt_anchor_callback_fn fn, void *user_data,
                                                       void (*user_data_free)(void *)) noexcept {
  return mrt::capi::guard(__func__, [&] {
    setAnchorCallback(session, anchor_handle, mrt::Session::kAllReplicas, fn, user_data, user_data_free);
  });
}

MRT_API mrt_status mrt_session_set_replica_callback_for_anchor(mrt_session *session, const char *anchor_handle,
                                                               uint32_t replica, mrt_anchor_callback_fn fn,
                                                               void *user_data,
                                                               void (*user_data_free)(void *)) noexcept {
  return mrt::capi::guard(__func__, [&] {
    if (replica == mrt::Session::kAllReplicas) {
      throw Error(ErrorCode::InvalidArgument, "replica {} out of range (use mrt_session_set_callback_for_anchor for "
                  "every replica)", replica);
    }
    setAnchorCallback(session, anchor_handle, replica, fn, user_data, user_data_free);
  });
}

MRT_API mrt_status mrt_session_set_remote_buffer_data(mrt_session *session, const char *anchor_handle,
                                                      const void *data, uint64_t size) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt::Session &s = sessionOf(session);
    requireNotNull(anchor_handle, "anchor_handle");
    requireNotNull(data, "data");
    // size is the caller's word for how much data holds: check it before
    // copying, or a wrong one reads past the caller's buffer.
    s.checkRemoteBufferData(anchor_handle, data, size);
    const std::span<const std::byte> bytes(static_cast<const std::byte *>(data), static_cast<std::size_t>(size));
    s.setRemoteBufferData(anchor_handle, popef::SharedBytes::copyOf(bytes));
  });
}

MRT_API mrt_status mrt_session_set_user_input_handler(mrt_session *session, mrt_callback_factory_fn factory,
                                                      void *factory_user_data, void (*factory_user_data_free)(void *),
                                                      const mrt_anchor_predicate *predicate,
                                                      bool skip_connected) noexcept {
  return mrt::capi::guard(__func__, [&] {
    setHandler(session, factory, factory_user_data, factory_user_data_free, predicate, skip_connected, true);
  });
}

MRT_API mrt_status mrt_session_set_user_output_handler(mrt_session *session, mrt_callback_factory_fn factory,
                                                       void *factory_user_data, void (*factory_user_data_free)(void *),
                                                       const mrt_anchor_predicate *predicate,
                                                       bool skip_connected) noexcept {
  return mrt::capi::guard(__func__, [&] {
    setHandler(session, factory, factory_user_data, factory_user_data_free, predicate, skip_connected, false);
  });
}

MRT_API mrt_status mrt_session_anchor_count(const mrt_session *session, int32_t set, size_t *out_count) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const mrt::Session &s = sessionOf(session);
    requireNotNull(out_count, "out_count");
    *out_count = anchorSet(s, set).size();
  });
}

MRT_API mrt_status mrt_session_anchor(const mrt_session *session, int32_t set, size_t index,
                                      mrt_anchor_info *out_anchor) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const auto anchors = anchorSet(sessionOf(session), set);
    if (index >= anchors.size()) {
      throw Error(ErrorCode::InvalidArgument, "anchor index {} is out of range (the set has {})", index,
                  anchors.size());
    }
    fillSized(out_anchor, anchorInfo(*anchors[index]), MRT_ANCHOR_INFO_V1_SIZE, "out_anchor");
  });
}

MRT_API mrt_status mrt_session_anchors_not_connected(const mrt_session *session, const uint64_t *programs,
                                                     size_t num_programs, mrt_unbound_anchor_fn visit,
                                                     void *user_data, size_t *out_count) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const auto map = sessionOf(session).anchorsNotConnectedToCallbacks(programsOf(programs, num_programs, "programs"));
    size_t count = 0;
    for (const auto &[program, anchors] : map) {
      for (const popef::Anchor *anchor : anchors) {
        ++count;
        if (visit == nullptr) continue;
        const mrt_anchor_info info = anchorInfo(*anchor);
        visit(program, &info, user_data);
      }
    }
    if (out_count != nullptr) *out_count = count;
  });
}

MRT_API mrt_status mrt_session_error_if_anchors_not_connected(const mrt_session *session, const uint64_t *programs,
                                                              size_t num_programs) noexcept {
  return mrt::capi::guard(__func__, [&] {
    sessionOf(session).errorIfAnchorsAreNotConnectedToCallbacks(programsOf(programs, num_programs, "programs"));
  });
}

MRT_API mrt_status mrt_session_stop(mrt_session *session) noexcept {
  return onSession(__func__, session, [](mrt::Session &s) { s.stop(); });
}

MRT_API mrt_status mrt_session_is_stopped(const mrt_session *session, bool *out_stopped) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const mrt::Session &s = sessionOf(session);
    requireNotNull(out_stopped, "out_stopped");
    *out_stopped = s.isStopped();
  });
}

}  // extern "C"

// model_runtime::Session and SessionConfig with the Model Runtime API's
// signatures, over mrt::Session (cxx/mrt.hpp). A session links one model to
// one device, binds the anchors' streams and runs the Load, Main and Save
// programs. stop() and isStopped() may be called from any thread; every
// other call must not overlap another call on the session. As the seed
// says, a model with a replication factor other than 1 is refused (so its
// queues only ever serve replica 1 of 1). Errors throw
// mrt::Error (a std::runtime_error) with a message naming the bad value;
// an exception thrown by a callback or predicate is rethrown by the call
// that ran it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "model_runtime/Callbacks.hpp"
#include "model_runtime/DeviceManager.hpp"
#include "model_runtime/QueueManager.hpp"
#include "popef/ModelBuilder.hpp"

namespace model_runtime {

enum class LaunchPolicy { Immediate = MRT_LAUNCH_IMMEDIATE, Deferred = MRT_LAUNCH_DEFERRED };

struct SessionConfig {
  LaunchPolicy policy = LaunchPolicy::Deferred;
  PopefDataUsagePredicate pred_tensor_data = null_popef_data_usage_predicate;
  bool check_package_hash = true;
  DeviceWaitConfig wait_config = {};
  // "unlimited" or an unsigned integer.
  std::string max_look_ahead = "unlimited";
};

class Session {
 public:
  using ProgIdxType = popef::ProgramFlow::ProgramIndexType;
  using ProgramsAndAnchorsMap = std::map<ProgIdxType, std::vector<const popef::Anchor *>>;

  Session(const Session &) = delete;
  Session &operator=(const Session &other) = delete;
  Session(Session &&) = default;
  Session &operator=(Session &&) = default;

  explicit Session(const std::vector<std::string> &popef_paths, const SessionConfig &config = {})
      : Session(std::shared_ptr<popef::Model>(popef::createModel(popef_paths)), config) {}
  explicit Session(std::shared_ptr<popef::Model> model, const SessionConfig &config = {})
      : model_(checked(std::move(model))), session_(create(model_, config)) {}
  ~Session() = default;

  // The session keeps its own reference to the device.
  void bindToDevice(std::shared_ptr<Device> device) {
    if (!device) throw std::invalid_argument("model_runtime::Session::bindToDevice: the device is null");
    session_.bindToDevice(device->mrtDevice());
  }
  void runLoadPrograms() { session_.runLoadPrograms(); }
  void runMainPrograms() { session_.runMainPrograms(); }
  void runSavePrograms() { session_.runSavePrograms(); }
  void runPrograms(const std::vector<ProgIdxType> &progs) { session_.runPrograms(progs); }
  std::shared_ptr<popef::Model> model() const { return model_; }
  void unloadFromDevice() { session_.unloadFromDevice(); }

  // A null callback binds an empty one.
  void setCallbackForAnchor(const std::string &anchor_handle, CallbackHandle callback) {
    if (!callback) {
      session_.setCallbackForAnchor(anchor_handle, nullptr);
      return;
    }
    session_.setCallbackForAnchor(anchor_handle,
                                  [callback = std::move(callback)](void *buffer, uint64_t) { callback(buffer); });
  }
  void setUserOutputHandler(CallbackFactory factory,
                            const AnchorCallbackPredicate &anchor_callback_predicate = null_anchor_callback_predicate,
                            bool skip_connected = false) {
    const mrt::AnchorPredicate predicate = toMrt(model_, anchor_callback_predicate);
    session_.setUserOutputHandler(toMrt(model_, std::move(factory)), predicate ? &predicate : nullptr, skip_connected);
  }
  void setUserInputHandler(CallbackFactory factory,
                           const AnchorCallbackPredicate &anchor_callback_predicate = null_anchor_callback_predicate,
                           bool skip_connected = false) {
    const mrt::AnchorPredicate predicate = toMrt(model_, anchor_callback_predicate);
    session_.setUserInputHandler(toMrt(model_, std::move(factory)), predicate ? &predicate : nullptr, skip_connected);
  }

  ProgramsAndAnchorsMap anchorsNotConnectedToCallbacks(const std::vector<ProgIdxType> &progs) {
    ProgramsAndAnchorsMap result;
    for (const auto &entry : session_.anchorsNotConnectedToCallbacks(progs)) {
      result[entry.first] = anchors(entry.second);
    }
    return result;
  }
  // Throws mrt::Error listing the programs and their unbound anchors, if any.
  void errorIfAnchorsAreNotConnectedToCallbacks(const std::vector<ProgIdxType> &progs) {
    session_.errorIfAnchorsAreNotConnectedToCallbacks(progs);
  }

  void stop() { session_.stop(); }
  void reload() { session_.reload(); }
  bool isStopped() { return session_.isStopped(); }

  // The session owns the manager; a second call replaces the first. Takes
  // nothing, or a RingSizeMultiplierProdType giving each anchor's ring size
  // multiplier (mrt::Error for a value below 1, naming the anchor).
  template <typename... T>
  QueueManager *createQueueManager(T &&...args) {
    static_assert(sizeof...(T) == 0 || (sizeof...(T) == 1 && (std::is_constructible_v<RingSizeMultiplierProdType, T> && ...)),
                  "libmrt: createQueueManager takes nothing or a RingSizeMultiplierProdType");
    mrt::QueueManagerConfig config;
    if constexpr (sizeof...(T) == 1) ringSizes(RingSizeMultiplierProdType(std::forward<T>(args)...), config);
    queueManager_ = std::make_unique<QueueManager>(session_.createQueueManager(config));
    return queueManager_.get();
  }

  std::vector<const popef::Anchor *> getInputAnchors() const { return anchors(session_.getInputAnchors()); }
  std::vector<const popef::Anchor *> getUserInputAnchors() const { return anchors(session_.getUserInputAnchors()); }
  std::vector<const popef::Anchor *> getUserOutputAnchors() const { return anchors(session_.getUserOutputAnchors()); }

  // libmrt extension: the mrt.hpp session underneath.
  mrt::Session &mrtSession() { return session_; }

 private:
  // The seed's Session refuses a model saved with a replication factor
  // other than 1 (ModelRunner serves those); libmrt's own session would run it.
  static std::shared_ptr<popef::Model> checked(std::shared_ptr<popef::Model> model) {
    if (!model) throw std::invalid_argument("model_runtime::Session: the model is null");
    const int64_t replication = model->metadata.replicationFactor();
    if (replication != 1) {
      throw mrt::Error(MRT_INVALID_ARGUMENT,
                       "model_runtime::Session: the model '" + model->metadata.executable() +
                           "' has replication factor " + std::to_string(replication) +
                           " (popef::Metadata::replicationFactor()); a Session runs models of replication factor 1 "
                           "only: serve replicated models with ModelRunner");
    }
    return model;
  }

  // The anchor of the model's metadata with the handle of `info`; anchors
  // handed to callers point into the model the session keeps alive.
  static const popef::Anchor &anchorOf(const popef::Model &model, const mrt::AnchorInfo &info) {
    for (const auto &anchor : model.metadata.anchors()) {
      if (anchor.handle() == info.handle) return anchor;
    }
    throw std::logic_error("model_runtime::Session: the model has no anchor with handle '" + info.handle + "'");
  }
  std::vector<const popef::Anchor *> anchors(const std::vector<mrt::AnchorInfo> &infos) const {
    std::vector<const popef::Anchor *> result;
    for (const auto &info : infos) result.push_back(&anchorOf(*model_, info));
    return result;
  }

  template <class Policy>
  static mrt::AnchorPredicate toMrt(const std::shared_ptr<popef::Model> &model,
                                    const std::function<Policy(const popef::Anchor &)> &predicate) {
    if (!predicate) return {};
    using MrtPolicy = std::conditional_t<std::is_same_v<Policy, AnchorCallbackPolicy>, mrt::AnchorCallbackPolicy,
                                         mrt::PopefDataUsagePolicy>;
    return mrt::AnchorPredicate::fromFunction([model, predicate](const mrt::AnchorInfo &info) {
      return static_cast<MrtPolicy>(predicate(anchorOf(*model, info)));
    });
  }
  static mrt::CallbackFactory toMrt(const std::shared_ptr<popef::Model> &model, CallbackFactory factory) {
    if (!factory) return nullptr;
    return [model, factory = std::move(factory)](const mrt::AnchorInfo &info) -> mrt::AnchorCallback {
      poplar::StreamCallbackHandle handle = factory(CallbackInfo{anchorOf(*model, info)});
      if (!handle) return nullptr;  // keep the anchor's current callback
      return [handle = std::move(handle)](void *buffer, uint64_t) { handle(buffer); };
    };
  }

  // The per-anchor function as the C API's ring size overrides: every
  // anchor that gets a queue has its own multiplier.
  void ringSizes(const RingSizeMultiplierProdType &multiplier, mrt::QueueManagerConfig &config) const {
    if (!multiplier) throw std::invalid_argument("model_runtime::Session::createQueueManager: the function is null");
    auto users = getUserInputAnchors();
    for (const auto *anchor : getUserOutputAnchors()) users.push_back(anchor);
    for (const popef::Anchor *anchor : users) config.ring_size_overrides[anchor->name()] = multiplier(*anchor);
  }

  static mrt::Session create(const std::shared_ptr<popef::Model> &model, const SessionConfig &config) {
    const mrt::AnchorPredicate predicate = toMrt(model, config.pred_tensor_data);
    mrt::SessionConfig c;
    c.policy = static_cast<mrt::LaunchPolicy>(config.policy);
    c.pred_tensor_data = predicate ? &predicate : nullptr;
    c.check_package_hash = config.check_package_hash;
    c.wait_config = config.wait_config.toMrt();
    c.max_look_ahead = config.max_look_ahead;
    return mrt::Session(model->mrtModel(), c);
  }

  std::shared_ptr<popef::Model> model_;
  mrt::Session session_;
  std::unique_ptr<QueueManager> queueManager_;  // declared last: destroyed before the session
};

}  // namespace model_runtime

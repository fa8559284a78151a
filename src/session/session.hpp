// mrt::Session (seed 001, 10.2.4; seed 004): one model linked to one device.
// It owns the hwsim engine of the model's executable, loads it on the bound
// device, binds every anchor's stream (PopEF data, user callbacks or empty
// callbacks), fills remote buffers from TensorData (or the user's bytes),
// and runs the model's Load/Main/Save programs.
//
// Sessions sharing a device: the device has one active session (its session
// slot). A session that is not active reloads its executable when it next
// runs: the active one is displaced first, which runs its Save programs if
// its Load programs have run. The displaced session runs its Load programs
// again before its next Main. Binding to a new device, unloadFromDevice() and
// the displacement above run Save; destroying a session does not. Sessions
// of different models fused into one executable (popef/fuse.hpp) do not
// displace each other: each model has its own tiles, so they are all active
// on the device at once.
//
// Replicated models (an executable compiled with replication factor R, seed
// 002 5.1 and seed 003's replicated streams): the model runs on a device of
// R x (IPUs per replica) IPUs (bindToDevice refuses any other size, naming
// both counts). Each replica has its own copy of every tensor, so each
// anchor has a stream per replica: a user addresses replica r's anchor as
// (anchor handle, r), as Poplar's connectStreamToCallback(handle, index, f)
// does. The calls without a replica bind every replica (PopEF data, a
// callback shared by all replicas); handler factories are called once per
// replica with CallbackInfo::replica; each replica has its own QueueManager
// (createQueueManagerForReplica). runMainPrograms() runs every replica
// together (each on its own thread; a callback bound to all replicas is
// called from each); runMainPrograms(r) runs replica r alone and may be
// called concurrently for different replicas.
//
// Errors (mrt::Error): FailedPrecondition for a call in the wrong state (not
// bound, stopped, after a device error), NotFound for an unknown anchor
// handle or program index, InvalidArgument for unsupported models
// (remote-buffer anchors without data), a replica index out of range or a
// device with other than the model's IPUs,
// VersionMismatch for a package hash other than the runtime's,
// DeviceError (with the recovery action) for a simulated device failure,
// Cancelled when stop() interrupted the programs. Every message names the
// session's model and the bad value.
//
// Thread safety: stop() and isStopped() may be called from any thread at
// any time. Everything else must be called from one thread at a time, and
// sessions sharing a device must also be used one at a time (a run on one
// may displace another), except sessions of models fused together, which
// may run on different threads at once, and runLoadPrograms(r) /
// runMainPrograms(r) for distinct replicas r, which may run concurrently
// once the session is loaded (nothing else may be called meanwhile).
// Callbacks run on the thread running the programs (of their replica).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <hwsim/engine.hpp>

#include "device/device.hpp"
#include "popef/model.hpp"
#include "queue/queue_manager.hpp"
#include "session/predicates.hpp"
#include "session/session_config.hpp"

namespace mrt {

class Session {
 public:
  using ProgIdxType = popef::ProgramFlow::ProgramIndexType;
  using ProgramsAndAnchorsMap = std::map<ProgIdxType, std::vector<const popef::Anchor *>>;
  // Where a replica index is taken: every replica.
  static constexpr unsigned kAllReplicas = hwsim::kAllReplicas;

  explicit Session(const std::vector<std::string> &popef_paths, const SessionConfig &config = {});
  explicit Session(std::shared_ptr<const popef::Model> model, const SessionConfig &config = {});
  ~Session();

  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  Session(Session &&) noexcept;
  Session &operator=(Session &&) noexcept;

  // Binds to `device` (unbinding from the current one first, running Save)
  // and loads the executable on it. The session keeps the device alive.
  void bindToDevice(std::shared_ptr<Device> device);
  // Runs Save if Load has run, and leaves the device. FailedPrecondition if
  // the session is not bound.
  void unloadFromDevice();
  // Loads the executable again on the last bound device (resetting it after
  // a device error); needed after stop(). FailedPrecondition if never bound.
  void reload();

  void runLoadPrograms();
  // Runs Load first if it has not run since the executable was loaded.
  void runMainPrograms();
  // The same on replica `replica` only (InvalidArgument if out of range):
  // one in-model replica served by its own thread. Load runs first if it has
  // not run on that replica since the executable was loaded.
  void runLoadPrograms(unsigned replica);
  void runMainPrograms(unsigned replica);
  void runSavePrograms(unsigned replica);
  // The executable's replication factor (1 for a model that is not replicated).
  unsigned replicationFactor() const;
  void runSavePrograms();
  // Streams the Main programs through their pipeline stages when Main is
  // one program split over the IPUs (hwsim::Engine::runPipelined,
  // docs/hwsim.md "Pipelining"): each call moves every run in flight on by
  // one stage and, with start_new, starts a run (Load first, as
  // runMainPrograms). Stream callbacks of different stages are called on
  // different threads, one at a time. Another Main is run whole with
  // start_new, and not at all without. Any other run finishes the runs in
  // flight first; reload() and stop() lose them.
  void runMainProgramsPipelined(bool start_new);
  // Main is one program split into pipeline stages, on a model that is not
  // replicated (a replicated model's Main always runs whole, on every
  // replica together).
  bool mainIsPipelined() const;
  // Whether a run of Main (all its programs) copies each stream at most once
  // (hwsim::ProgramTransfers::eachStreamAtMostOnce): then a run never needs
  // more than one transfer a queue holds per stream.
  bool mainCopiesEachStreamAtMostOnce() const;
  // Runs of runMainProgramsPipelined() have not ended.
  bool mainPipelineBusy() const;
  // Each program once, in order; no implicit Load.
  void runPrograms(const std::vector<ProgIdxType> &progs);

  std::shared_ptr<const popef::Model> model() const;
  // The device bound last (also after unloadFromDevice()); nullptr if none.
  std::shared_ptr<Device> device() const;

  // Binds `callback` to the stream of the anchor whose handle is
  // anchor_handle (NotFound if none; InvalidArgument for a remote-buffer
  // anchor, whose data the session copies itself). An empty callback binds
  // an empty (dummy) callback. May be called before binding to a device.
  void setCallbackForAnchor(const std::string &anchor_handle, CallbackHandle callback);
  // The same for the stream of replica `replica` only (InvalidArgument if
  // out of range; replica 0 of a model that is not replicated is its only one).
  void setCallbackForAnchor(const std::string &anchor_handle, unsigned replica, CallbackHandle callback);
  // Fills the remote buffer of the anchor whose handle is anchor_handle from
  // `bytes` (all its slots, anchor.tensorInfo().sizeInBytes()) instead of
  // its TensorData: now if the executable is loaded, and at every later
  // load (reload, rebinding). The session shares `bytes` until it is
  // destroyed. NotFound for an unknown handle; InvalidArgument for an
  // anchor with a stream, or another size.
  void setRemoteBufferData(const std::string &anchor_handle, popef::SharedBytes bytes);
  // setRemoteBufferData's checks of `size` bytes at `data`, and the anchor:
  // a caller that must copy the bytes first checks before copying.
  const popef::Anchor &checkRemoteBufferData(const std::string &anchor_handle, const void *data,
                                             std::uint64_t size) const;
  // For each input (output) anchor with a stream: the predicate's policy
  // (BIND_USER_CB without a predicate); for BIND_USER_CB the factory is
  // called (unless skip_connected and the anchor is connected) and a
  // non-empty result replaces the binding. A replicated model's factory is
  // called once per replica (CallbackInfo::replica) and binds that replica.
  void setUserInputHandler(const CallbackFactory &factory,
                           const AnchorCallbackPredicate &anchor_callback_predicate = null_anchor_callback_predicate,
                           bool skip_connected = false);
  void setUserOutputHandler(const CallbackFactory &factory,
                            const AnchorCallbackPredicate &anchor_callback_predicate = null_anchor_callback_predicate,
                            bool skip_connected = false);

  // Program -> its anchors with a stream and no binding (on some replica);
  // programs whose anchors are all bound are left out. NotFound for an
  // unknown index.
  ProgramsAndAnchorsMap anchorsNotConnectedToCallbacks(const std::vector<ProgIdxType> &progs) const;
  // FailedPrecondition listing each program and its unbound anchors.
  void errorIfAnchorsAreNotConnectedToCallbacks(const std::vector<ProgIdxType> &progs) const;

  // Stops running programs at their next host sync, compute set or loop
  // iteration (they fail with
  // Cancelled) and any later run until reload(). Does nothing if the
  // executable is not loaded.
  void stop();
  bool isStopped() const;

  // Input transfers of the session's QueueManager prepared ahead through
  // the engine's stream prefetch (max_look_ahead, session_config.hpp):
  // held now, waiting for the host sync they were prepared for (never more
  // than max_look_ahead), and since creation. Any thread.
  std::uint64_t preparedAhead() const;
  std::uint64_t totalPreparedAhead() const;

  // Every input anchor, those bound to PopEF data and remote buffers too.
  std::vector<const popef::Anchor *> getInputAnchors() const;
  // Input anchors that need a user callback: not fed by PopEF data.
  std::vector<const popef::Anchor *> getUserInputAnchors() const;
  std::vector<const popef::Anchor *> getUserOutputAnchors() const;

  // Creates the session's QueueManager from `args` (see
  // queue/queue_manager.hpp for its constructors; typically
  // createQueueManager(getUserInputAnchors() + getUserOutputAnchors()
  // concatenated) and connects every queue's stream callback to its anchor,
  // replacing earlier bindings. The session owns it (one at a time: a second
  // call replaces the first); stop() disconnects its queues and reload()
  // resets them. Not concurrent with stop(). A replicated model has a
  // manager per replica: createQueueManager refuses it (InvalidArgument),
  // createQueueManagerForReplica(r, ...) makes replica r's, connected to
  // replica r's streams.
  template <typename... T>
  QueueManager *createQueueManager(T &&...args) {
    return adoptQueueManager(std::make_unique<QueueManager>(std::forward<T>(args)...), kAllReplicas);
  }
  template <typename... T>
  QueueManager *createQueueManagerForReplica(unsigned replica, T &&...args) {
    return adoptQueueManager(std::make_unique<QueueManager>(std::forward<T>(args)...), replica);
  }

  // Gives up replica `replica`'s QueueManager (nullptr if it has none): its
  // streams get empty callbacks and stop()/reload() no longer touch it, so
  // the caller may keep it beyond the session (the C API does, for managers
  // whose handle outlives the session). Not concurrent with stop() or a run.
  std::unique_ptr<QueueManager> releaseQueueManager(unsigned replica = 0);

  // The engine running the executable, for diagnostics and tests
  // (profiles, simulated errors). Connect streams through the Session only.
  hwsim::Engine &engine();

  // After a device error until reload(): the device's message with its
  // recovery action, without this class's advice (which a ModelRunner's
  // user cannot follow); "" otherwise.
  std::string deviceFailure() const;

  struct Impl;

 private:
  // kAllReplicas: the one manager of a model that is not replicated.
  QueueManager *adoptQueueManager(std::unique_ptr<QueueManager> manager, unsigned replica);

  std::unique_ptr<Impl> impl_;
};

}  // namespace mrt

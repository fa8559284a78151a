"""Sessions: one model on one device, driven by hand (mrt_session_*), and
the anchor predicates that choose how their anchors are bound.

Anchor callbacks receive a writable numpy view of the transfer, of the
anchor's dtype and shape, valid only during the call: fill it for an input,
read it for an output. They run on the thread calling run_*(); an
exception one raises is re-raised by that run_*() call once it returns.
"""
from __future__ import annotations

import ctypes
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from . import _structs as s
from ._arrays import callback_array, contiguous, encoded, u64_array
from ._callbacks import (NO_FREE, checked_callable, guarded, held, hold, release, release_held,
                         surfacing)
from ._handles import Closable, Handle
from ._native import C, out_value
from .device_time import DeviceTime, read_device_time
from .devices import Device, wait_config
from .errors import InvalidArgumentError, Status
from .models import AnchorInfo, Model, PathLike, anchor_from_struct, create_for
from .types import AnchorSet, LaunchPolicy, PredicateKind, PrebuiltPredicate

AnchorFunction = Callable[[np.ndarray], None]


# ---- anchor predicates -------------------------------------------------------

@s.ANCHOR_PREDICATE_FN
def _predicate_trampoline(anchor, user_data):
    policy = -1  # outside every policy enum: the library fails the call
    with guarded("an anchor predicate"):
        policy = int(held(user_data)(anchor_from_struct(anchor[0])))
    return policy


class AnchorPredicate(Closable):
    """For each anchor, a policy: a CallbackPolicy (kind ANCHOR_CALLBACK)
    or a PopefDataUsage (kind POPEF_DATA_USAGE). Immutable; sessions keep
    their own reference, so it may be closed right after use. Make one with
    the class methods."""
    _kind = "AnchorPredicate"

    def __init__(self, pointer: int, kind: PredicateKind):
        self._handle = Handle(pointer, C.mrt_anchor_predicate_destroy)
        self.kind = PredicateKind(kind)

    @classmethod
    def prebuilt(cls, kind: PredicateKind, prebuilt: PrebuiltPredicate, accept: int, reject: int,
                 model: Model | None = None, programs: Iterable[int] = ()) -> "AnchorPredicate":
        """A predicate of the library's: the PROGRAM_FLOW ones need `model`,
        PROGRAM_INDEXES needs `programs`."""
        ids, count = u64_array(programs)
        return cls(out_value(C.mrt_anchor_predicate_create, int(kind), int(prebuilt),
                             None if model is None else model._pointer(), ids, count, int(accept),
                             int(reject)), kind)

    @classmethod
    def program_policies(cls, kind: PredicateKind, groups: Sequence[tuple[Iterable[int], int]],
                         reject: int) -> "AnchorPredicate":
        """The policy of the first (programs, policy) group that moves an
        anchor; `reject` if none does."""
        entries = (s.ProgramsWithPolicy * max(len(groups), 1))()
        alive = []
        for entry, (programs, policy) in zip(entries, groups):
            ids, count = u64_array(programs)
            alive.append(ids)
            entry.programs, entry.num_programs, entry.policy = ids, count, int(policy)
        return cls(out_value(C.mrt_anchor_predicate_create_program_policies, int(kind), entries,
                             len(groups), int(reject)), kind)

    @classmethod
    def anchor_policies(cls, kind: PredicateKind, policies: Mapping[str, int],
                        reject: int) -> "AnchorPredicate":
        """policies[handle] for the anchors it names, `reject` for others."""
        entries = (s.AnchorWithPolicy * max(len(policies), 1))()
        for entry, (handle, policy) in zip(entries, policies.items()):
            entry.handle, entry.policy = handle.encode(), int(policy)
        return cls(out_value(C.mrt_anchor_predicate_create_anchor_policies, int(kind), entries,
                             len(policies), int(reject)), kind)

    @classmethod
    def user(cls, kind: PredicateKind,
             function: Callable[[AnchorInfo], int]) -> "AnchorPredicate":
        """function(anchor) -> policy, called on the thread of the call
        using the predicate (possibly several at once). If it raises, that
        call fails and re-raises the exception."""
        checked_callable(function, "predicate")
        return cls(out_value(C.mrt_anchor_predicate_create_user, int(kind), _predicate_trampoline,
                             hold(function), release_held), kind)

    @classmethod
    def _combined(cls, function, kind, accept, reject, predicates) -> "AnchorPredicate":
        pointers = (s.c_ptr * max(len(predicates), 1))(*(p._pointer() for p in predicates))
        return cls(out_value(function, int(kind), int(accept), int(reject), pointers,
                             len(predicates)), kind)

    @classmethod
    def all_of(cls, kind: PredicateKind, accept: int, reject: int,
               predicates: Sequence["AnchorPredicate"]) -> "AnchorPredicate":
        """accept when every predicate returns accept (andBind)."""
        return cls._combined(C.mrt_anchor_predicate_and, kind, accept, reject, predicates)

    @classmethod
    def any_of(cls, kind: PredicateKind, accept: int, reject: int,
               predicates: Sequence["AnchorPredicate"]) -> "AnchorPredicate":
        """accept when any predicate returns accept (orBind)."""
        return cls._combined(C.mrt_anchor_predicate_or, kind, accept, reject, predicates)

    def evaluate(self, model: Model, anchor_handle: str) -> int:
        """The policy for the anchor of `model` whose handle is anchor_handle."""
        with surfacing():
            return out_value(C.mrt_anchor_predicate_evaluate, self._pointer(), model._pointer(),
                             anchor_handle.encode(), out_type=s.c_i32)


# ---- sessions ----------------------------------------------------------------

class _AnchorEntry:
    def __init__(self, function: AnchorFunction, anchor: AnchorInfo):
        self.function, self.anchor = function, anchor


@s.ANCHOR_CALLBACK_FN
def _anchor_trampoline(buffer, size, user_data):
    with guarded("an anchor callback"):
        entry = held(user_data)
        entry.function(callback_array(buffer, size, entry.anchor.dtype, entry.anchor.shape))


def _anchor_callback(function: AnchorFunction, anchor: AnchorInfo):
    """(fn, user_data, user_data_free) for function on anchor."""
    return _anchor_trampoline, hold(_AnchorEntry(function, anchor)), release_held


@s.CALLBACK_FACTORY_FN
def _factory_trampoline(anchor, out_callback, user_data):
    result = False
    with guarded("an anchor callback factory"):
        info = anchor_from_struct(anchor[0])
        function = held(user_data)(info)
        if function is not None:
            out = out_callback[0]
            out.fn, out.user_data, out.user_data_free = _anchor_callback(
                checked_callable(function, f"callback for anchor '{info.handle}'"), info)
            result = True
    return result


@s.UNBOUND_ANCHOR_FN
def _unbound_trampoline(program, anchor, user_data):
    with guarded("anchors_not_connected"):
        held(user_data).append((program, anchor_from_struct(anchor[0])))


class Session(Closable):
    """One model on one device (docs/session.md).

    Session(model_or_paths, policy=LaunchPolicy.DEFERRED, popef_data=None,
    check_package_hash=None, wait=0, poll_interval=None,
    max_look_ahead=None, model_name=None): `popef_data` is an
    AnchorPredicate of kind POPEF_DATA_USAGE choosing the inputs fed from
    the model's data (None: all that have data); an IMMEDIATE session gets a
    device at once, waiting `wait` seconds (None: forever); max_look_ahead:
    host syncs prepared ahead (None: unlimited); model_name: which model of
    fused PopEF files to load (None: the files' only model; given a Model,
    None or that model's own name).

    A model compiled with replication factor R (num_replicas) has a stream
    per anchor per replica: set_callback and create_queue_manager take a
    replica, handler factories are asked once per replica (AnchorInfo.replica)
    and run_main(replica) serves one replica on the calling thread.

    stop(), stopped and num_replicas may be used from any thread;
    run_main(replica) for distinct replicas may overlap, each on its own
    thread; every other call must not overlap another call on the session.
    """
    _kind = "Session"

    def __init__(self, model: Model | PathLike | Sequence[PathLike],
                 policy: LaunchPolicy = LaunchPolicy.DEFERRED,
                 popef_data: AnchorPredicate | None = None, check_package_hash: bool | None = None,
                 wait: float | None = 0, poll_interval: float | None = None,
                 max_look_ahead: int | None = None, model_name: str | None = None):
        config = s.SessionConfig()
        C.mrt_session_config_init_sized(ctypes.byref(config), ctypes.sizeof(config))
        config.policy = int(policy)
        if popef_data is not None:
            config.pred_tensor_data = popef_data._pointer()
        if check_package_hash is not None:
            config.check_package_hash = check_package_hash
        wait_struct = wait_config(wait, poll_interval)
        if wait_struct is not None:
            config.wait_config = ctypes.pointer(wait_struct)
        if max_look_ahead is not None:
            config.max_look_ahead_syncs = max_look_ahead
        config.model_name = encoded(model_name)
        with surfacing():  # a user popef_data predicate runs here
            pointer = create_for(model, C.mrt_session_create, C.mrt_session_create_from_files,
                                 ctypes.byref(config))
        self._handle = Handle(pointer, C.mrt_session_destroy)
        self._model = self.model()

    def model(self) -> Model:
        """The session's model (a new reference)."""
        return Model._adopt(out_value(C.mrt_session_model, self._pointer()))

    # Device binding.
    def bind(self, device: Device) -> None:
        """Binds to `device` and loads the executable on it (the session
        keeps its own reference to the device)."""
        C.mrt_session_bind_to_device(self._pointer(), device._pointer())

    def unload(self) -> None:
        """Runs Save if Load has run, and leaves the device."""
        with surfacing():
            C.mrt_session_unload_from_device(self._pointer())

    def reload(self) -> None:
        """Loads the executable again on the last device (after stop() or a
        device error)."""
        C.mrt_session_reload(self._pointer())

    # Running programs (on this thread; anchor callbacks run here too).
    def run_load(self) -> None:
        with surfacing():
            C.mrt_session_run_load_programs(self._pointer())

    def run_main(self, replica: int | None = None) -> None:
        """Runs the Main programs (and Load first if it has not run) of
        every replica, or of replica `replica` (0 .. num_replicas - 1) only,
        whose callbacks and queue transfers then run on this thread."""
        with surfacing():
            if replica is None:
                C.mrt_session_run_main_programs(self._pointer())
            else:
                C.mrt_session_run_main_programs_for_replica(self._pointer(), replica)

    @property
    def num_replicas(self) -> int:
        """The model's replication factor R: replicas 0 .. R - 1."""
        return out_value(C.mrt_session_num_replicas, self._pointer(), out_type=s.c_u32)

    def run_save(self) -> None:
        with surfacing():
            C.mrt_session_run_save_programs(self._pointer())

    def run_programs(self, programs: Iterable[int]) -> None:
        """Each program index once, in order; no implicit Load."""
        ids, count = u64_array(programs)
        with surfacing():
            C.mrt_session_run_programs(self._pointer(), ids, count)

    # Binding anchors.
    def set_callback(self, anchor_handle: str, function: AnchorFunction | None,
                     replica: int | None = None) -> None:
        """Binds function(array) to the anchor's stream (None: an empty
        callback), replacing the previous binding: of every replica (then
        called from each replica's thread), or of replica `replica` only."""
        if function is None:
            callback = (s.ANCHOR_CALLBACK_FN(), None, NO_FREE)
        else:
            callback = _anchor_callback(checked_callable(function, "anchor callback"),
                                        self._model.anchor_by_handle(anchor_handle))
        if replica is None:
            C.mrt_session_set_callback_for_anchor(self._pointer(), anchor_handle.encode(), *callback)
        else:
            C.mrt_session_set_replica_callback_for_anchor(self._pointer(), anchor_handle.encode(),
                                                          replica, *callback)

    def set_remote_buffer_data(self, anchor_handle: str, array: np.ndarray) -> None:
        """Fills a remote-buffer anchor (all its slots) from array (copied)."""
        anchor = self._model.anchor_by_handle(anchor_handle)
        contiguous(array, f"remote buffer '{anchor_handle}'")
        if array.dtype != anchor.dtype:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                       f"remote buffer '{anchor_handle}': expected dtype "
                                       f"{anchor.dtype}, got {array.dtype}")
        C.mrt_session_set_remote_buffer_data(self._pointer(), anchor_handle.encode(),
                                             array.ctypes.data, array.nbytes)

    def _set_handler(self, function, factory, predicate, skip_connected) -> None:
        checked_callable(factory, "callback factory")
        with surfacing():
            function(self._pointer(), _factory_trampoline, hold(factory), release_held,
                     None if predicate is None else predicate._pointer(), skip_connected)

    def set_input_handler(self, factory: Callable[[AnchorInfo], AnchorFunction | None],
                          predicate: AnchorPredicate | None = None,
                          skip_connected: bool = False) -> None:
        """For each input anchor the predicate (kind ANCHOR_CALLBACK; None:
        all) gives BIND_USER_CB, binds factory(anchor) unless it returns None."""
        self._set_handler(C.mrt_session_set_user_input_handler, factory, predicate, skip_connected)

    def set_output_handler(self, factory: Callable[[AnchorInfo], AnchorFunction | None],
                           predicate: AnchorPredicate | None = None,
                           skip_connected: bool = False) -> None:
        """As set_input_handler, for output anchors."""
        self._set_handler(C.mrt_session_set_user_output_handler, factory, predicate, skip_connected)

    def anchors(self, which: AnchorSet = AnchorSet.INPUTS) -> list[AnchorInfo]:
        count = out_value(C.mrt_session_anchor_count, self._pointer(), int(which), out_type=s.c_size)
        result = []
        for index in range(count):
            anchor = s.sized(s.AnchorInfo)
            C.mrt_session_anchor(self._pointer(), int(which), index, ctypes.byref(anchor))
            result.append(anchor_from_struct(anchor))
        return result

    def anchors_not_connected(self, programs: Iterable[int]) -> list[tuple[int, AnchorInfo]]:
        """(program, anchor) for every anchor with a stream and no binding
        moved by each of the programs."""
        ids, count = u64_array(programs)
        found: list = []
        key = hold(found)
        try:
            with surfacing():
                C.mrt_session_anchors_not_connected(self._pointer(), ids, count, _unbound_trampoline,
                                                    key, None)
        finally:
            release(key)
        return found

    def check_anchors_connected(self, programs: Iterable[int]) -> None:
        """FailedPreconditionError listing the unbound anchors, if any."""
        ids, count = u64_array(programs)
        C.mrt_session_error_if_anchors_not_connected(self._pointer(), ids, count)

    def device_time(self, replica: int = 0) -> DeviceTime:
        """The cycles replica `replica` (0 .. num_replicas - 1) of the
        session's device has run since the executable was last loaded
        (0 before; Load and Main runs, transfers, exchange and syncs
        included), and the device's clock (DeviceTime.seconds). Any thread,
        also while another runs programs (not during bind or reload).
        InvalidArgumentError naming the replica if it is out of range."""
        return read_device_time(C.mrt_session_device_cycles, self._pointer(), replica)

    def device_cycles(self, replica: int = 0) -> int:
        """device_time(replica).cycles: as ModelRunner.device_cycles."""
        return self.device_time(replica).cycles

    # Stopping, faults.
    def stop(self) -> None:
        """Stops running programs at their next host sync (the run raises
        CancelledError) until reload(). Any thread."""
        C.mrt_session_stop(self._pointer())

    @property
    def stopped(self) -> bool:
        return bool(out_value(C.mrt_session_is_stopped, self._pointer(), out_type=s.c_bool))

    def insert_simulated_error(self, error: int, step: int, tile: int = 0) -> None:
        """`error` (a SimulatedError) fires whenever program step `step`
        runs on `tile`, until erased or cleared."""
        C.mrt_session_insert_simulated_error(self._pointer(), int(error), step, tile)

    def erase_simulated_error(self, step: int, tile: int = 0) -> None:
        C.mrt_session_erase_simulated_error(self._pointer(), step, tile)

    def clear_simulated_errors(self) -> None:
        C.mrt_session_clear_simulated_errors(self._pointer())

    def create_queue_manager(self, replica: int | None = None, **options) -> "QueueManager":
        """A QueueManager whose queues feed this session's anchors that
        need user data, moved whenever the session runs programs; the
        options are QueueManager's (ring_size_multiplier,
        load_save_ring_size_multiplier, timeout, on_timeout). A replicated
        model has one per replica: pass `replica` (0 .. num_replicas - 1)."""
        from .queues import QueueManager
        return QueueManager._for_session(self, replica, **options)

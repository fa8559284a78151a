"""Queues of pointers between Python and a device (mrt_queue_manager_*).

A QueueManager holds one InputQueue per user input anchor of a model and
one OutputQueue per output anchor. Queues carry the caller's numpy arrays,
never copies: the library copies the bytes straight between the array and
the device when the device transfers the anchor, so an enqueued array is
kept alive (and must not be changed) until its completion callback has run
or the queue is reset. Arrays must have the anchor's dtype and shape, except
for the first (batch) dimension: any positive number of samples.

Threads: one producer thread per queue at a time (enqueue, flush); the
device side runs on the thread driving the session (run_main) or calling
transfer(). Completion and timeout callbacks run on that device thread.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping

import numpy as np

from . import _structs as s
from ._arrays import check_tensor, contiguous, dtype_of, shape_tuple
from ._callbacks import guarded, held, hold, release_held, surfacing
from ._queue_callbacks import QueuedArray, complete_trampoline, optional_callable, start_trampoline
from ._handles import Closable, Handle
from ._native import C, out_value
from .errors import InvalidArgumentError, NotFoundError, Status
from .models import Model
from .queue_entries import InputQueueEntry, LockedEntries, OutputQueueEntry, lock_entry
from .types import TensorType, duration_ns

if TYPE_CHECKING:
    from .sessions import Session

TimeoutFunction = Callable[[str, TensorType, int], None]


class _LibraryDefault:
    def __repr__(self):
        return "LIBRARY_DEFAULT"


# The `timeout` not given: the library's default (not None, which is forever).
LIBRARY_DEFAULT = _LibraryDefault()


@dataclass(frozen=True)
class QueueInfo:
    """What a queue transfers (mrt_queue_info)."""
    name: str
    dtype: np.dtype
    shape: tuple
    size_in_bytes: int      # one device transfer
    sample_size_bytes: int  # the unit of enqueued sizes
    num_buffers: int        # ring entries
    connected: bool


@s.QUEUE_TIMEOUT_FN
def _timeout_trampoline(anchor_name, direction, bytes_done, user_data):
    with guarded("a queue manager's timeout callback"):
        held(user_data)(anchor_name.decode(), TensorType(direction), bytes_done)


class _Queue:
    _info_function = None

    def __init__(self, manager: "QueueManager", pointer: int):
        self._manager = manager  # queues are borrowed from their manager
        self._queue = pointer

    def _pointer(self) -> int:
        self._manager._pointer()  # raises once the manager is closed
        return self._queue

    def info(self) -> QueueInfo:
        info = s.QueueInfo()
        C.mrt_queue_info_init_sized(ctypes.byref(info), ctypes.sizeof(info))
        type(self)._info_function(self._pointer(), ctypes.byref(info))
        return QueueInfo(info.name.decode(), dtype_of(info.data_type),
                         shape_tuple(info.shape, info.rank), info.size_in_bytes,
                         info.sample_size_bytes, info.num_buffers, info.connected)

    def _checked(self, array: np.ndarray, writable: bool) -> np.ndarray:
        info = self.info()
        return check_tensor(array, f"queue '{info.name}'", info.dtype, info.shape, writable,
                            free_dim=0)


class InputQueue(_Queue):
    """The queue of one input anchor."""
    _info_function = C.mrt_input_queue_info

    def enqueue(self, array: np.ndarray, on_start: Callable[[], None] | None = None,
                on_complete: Callable[[], None] | None = None) -> None:
        """Queues array (not copied) for the device; blocks while the queue
        is full. on_start runs before its first byte is read, on_complete
        once the last is (on the device thread). CancelledError if the
        queue is or gets disconnected."""
        self._checked(array, writable=False)
        entry = QueuedArray(array, optional_callable(on_start, "on_start"),
                       optional_callable(on_complete, "on_complete"))
        C.mrt_input_queue_enqueue(self._pointer(), array.ctypes.data, array.nbytes,
                                  start_trampoline, complete_trampoline, hold(entry),
                                  release_held)

    def enqueue_lock(self) -> InputQueueEntry:
        """Locks the ring's next slot and returns its entry to fill in place
        (two-phase enqueue, libmrt.queue_entries); blocks while the ring is
        full, CancelledError if the queue is or gets disconnected. Locking
        again before enqueue_complete() returns the same entry as left."""
        return lock_entry(self, C.mrt_input_queue_enqueue_lock, InputQueueEntry,
                          s.InputQueueEntry)

    def enqueue_complete(self) -> None:
        """Publishes the locked entry, as enqueue() would its array.
        FailedPreconditionError if none is locked; InvalidArgumentError for
        no array or a bad size_bytes (the entry stays locked: fix it and
        complete again); CancelledError if disconnected since the lock."""
        self._manager._locked_entries.complete(self._pointer(), C.mrt_input_queue_enqueue_complete)

    def flush(self) -> None:
        """Completes a partial transfer with zeros (or enqueues one of zeros)."""
        C.mrt_input_queue_flush(self._pointer())

    def reset(self) -> None:
        """Empties the queue and reconnects it (no other thread may use it)."""
        C.mrt_input_queue_reset(self._pointer())

    def disconnect(self) -> None:
        """Wakes blocked calls; the device gets zeros until reset. Any thread."""
        C.mrt_input_queue_disconnect(self._pointer())


class OutputQueue(_Queue):
    """The queue of one output anchor."""
    _info_function = C.mrt_output_queue_info

    def enqueue(self, array: np.ndarray, on_complete: Callable[[], None] | None = None) -> None:
        """Queues a writable array (not copied) for the device's output;
        on_complete runs once it is written (on the device thread)."""
        self._checked(array, writable=True)
        entry = QueuedArray(array, None, optional_callable(on_complete, "on_complete"))
        C.mrt_output_queue_enqueue(self._pointer(), array.ctypes.data, array.nbytes,
                                   complete_trampoline, hold(entry), release_held)

    def enqueue_lock(self) -> OutputQueueEntry:
        """As InputQueue.enqueue_lock(), for an output buffer."""
        return lock_entry(self, C.mrt_output_queue_enqueue_lock, OutputQueueEntry,
                          s.OutputQueueEntry)

    def enqueue_complete(self) -> None:
        """As InputQueue.enqueue_complete()."""
        self._manager._locked_entries.complete(self._pointer(), C.mrt_output_queue_enqueue_complete)

    def flush(self) -> None:
        """Gives the dummy output of a flushed input a scratch buffer."""
        C.mrt_output_queue_flush(self._pointer())

    def reset(self) -> None:
        C.mrt_output_queue_reset(self._pointer())

    def disconnect(self) -> None:
        C.mrt_output_queue_disconnect(self._pointer())


class QueueManager(Closable):
    """QueueManager(model, ring_size_multiplier=None,
    load_save_ring_size_multiplier=None, ring_size_overrides=None,
    timeout=..., on_timeout=None): a manager not connected to any device,
    whose device side the caller plays with transfer();
    Session.create_queue_manager(**same options) makes one its session
    feeds. ring_size_overrides {anchor name: multiplier} gives single
    anchors their own ring size multiplier in place of their group's.
    on_timeout(anchor_name, direction, bytes_done) runs on the device thread
    when a transfer has waited `timeout` seconds (not given: the library's
    default; None: forever)."""
    _kind = "QueueManager"

    def __init__(self, model: Model, *, ring_size_multiplier: int | None = None,
                 load_save_ring_size_multiplier: int | None = None,
                 ring_size_overrides: Mapping[str, int] | None = None,
                 timeout: float | None | _LibraryDefault = LIBRARY_DEFAULT,
                 on_timeout: TimeoutFunction | None = None):
        config = self._config(ring_size_multiplier, load_save_ring_size_multiplier,
                              ring_size_overrides, timeout, on_timeout)
        self._handle = Handle(out_value(C.mrt_queue_manager_create, model._pointer(),
                                        ctypes.byref(config)), C.mrt_queue_manager_destroy)
        self._locked_entries = LockedEntries()

    @classmethod
    def _for_session(cls, session: "Session", replica: int | None,
                     ring_size_multiplier: int | None = None,
                     load_save_ring_size_multiplier: int | None = None,
                     ring_size_overrides: Mapping[str, int] | None = None,
                     timeout: float | None | _LibraryDefault = LIBRARY_DEFAULT,
                     on_timeout: TimeoutFunction | None = None) -> "QueueManager":
        config = cls._config(ring_size_multiplier, load_save_ring_size_multiplier,
                             ring_size_overrides, timeout, on_timeout)
        manager = object.__new__(cls)
        if replica is None:
            pointer = out_value(C.mrt_session_create_queue_manager, session._pointer(),
                                ctypes.byref(config))
        else:
            pointer = out_value(C.mrt_session_create_queue_manager_for_replica, session._pointer(),
                                replica, ctypes.byref(config))
        manager._handle = Handle(pointer, C.mrt_queue_manager_destroy)
        manager._locked_entries = LockedEntries()
        return manager

    @staticmethod
    def _config(ring_size_multiplier, load_save_ring_size_multiplier, ring_size_overrides,
                timeout, on_timeout):
        config = s.QueueManagerConfig()
        C.mrt_queue_manager_config_init_sized(ctypes.byref(config), ctypes.sizeof(config))
        if ring_size_multiplier is not None:
            config.ring_size_multiplier = ring_size_multiplier
        if load_save_ring_size_multiplier is not None:
            config.load_save_ring_size_multiplier = load_save_ring_size_multiplier
        if ring_size_overrides:
            if not isinstance(ring_size_overrides, Mapping):
                raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                           "ring_size_overrides: expected a dict of anchor name -> "
                                           f"multiplier, got {type(ring_size_overrides).__name__}")
            overrides = (s.RingSizeOverride * len(ring_size_overrides))(
                *((str(name).encode(), int(multiplier))
                  for name, multiplier in ring_size_overrides.items()))
            # The library reads the array during the create call; config keeps it.
            config.ring_size_overrides, config.num_ring_size_overrides = overrides, len(overrides)
        if timeout is not LIBRARY_DEFAULT:
            config.timeout_ns = duration_ns(timeout, "timeout")
        if optional_callable(on_timeout, "on_timeout") is not None:
            config.timeout_fn, config.timeout_user_data = _timeout_trampoline, hold(on_timeout)
            config.timeout_user_data_free = release_held
        return config

    def _names(self, count_function, name_function) -> list[str]:
        count = out_value(count_function, self._pointer(), out_type=s.c_size)
        return [out_value(name_function, self._pointer(), i, out_type=s.c_str).decode()
                for i in range(count)]

    def input_names(self) -> list[str]:
        return self._names(C.mrt_queue_manager_num_inputs, C.mrt_queue_manager_input_name)

    def output_names(self) -> list[str]:
        return self._names(C.mrt_queue_manager_num_outputs, C.mrt_queue_manager_output_name)

    def input(self, name: str) -> InputQueue:
        """The queue of an input anchor, by name or stream handle."""
        return InputQueue(self, out_value(C.mrt_queue_manager_input_queue, self._pointer(),
                                          name.encode()))

    def output(self, name: str) -> OutputQueue:
        return OutputQueue(self, out_value(C.mrt_queue_manager_output_queue, self._pointer(),
                                           name.encode()))

    def flush_all(self) -> None:
        C.mrt_queue_manager_flush_all(self._pointer())

    def disconnect_all(self) -> None:
        C.mrt_queue_manager_disconnect_all(self._pointer())

    def reset_all(self) -> None:
        C.mrt_queue_manager_reset_all(self._pointer())

    def transfer(self, handle: str, device_buffer: np.ndarray) -> None:
        """Plays the device for one transfer of anchor `handle`: fills
        device_buffer (an input) or drains it (an output); exactly one
        transfer's bytes. Blocks until enough is enqueued. Callbacks run on
        this thread; one they raise is re-raised here."""
        contiguous(device_buffer, f"transfer '{handle}' buffer", writable=True)
        expected = self._transfer_size(handle)
        if device_buffer.nbytes != expected:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                       f"transfer '{handle}': the device buffer must hold one "
                                       f"transfer of {expected} bytes, got {device_buffer.nbytes}")
        with surfacing():
            C.mrt_queue_manager_transfer(self._pointer(), handle.encode(), device_buffer.ctypes.data)

    def _transfer_size(self, handle: str) -> int:
        """The bytes of one transfer of the queue named or handled `handle`
        (the library names the queues when there is none)."""
        try:
            return self.input(handle).info().size_in_bytes
        except NotFoundError:
            return self.output(handle).info().size_in_bytes

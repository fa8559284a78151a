"""The two-phase enqueue (mrt_*_queue_enqueue_lock / _complete): the
producer locks the ring's next slot, fills that slot's entry in place and
publishes it.

    entry = manager.input("x").enqueue_lock()   # blocks while the ring is full
    entry.array = batch                          # checked as enqueue() checks it
    entry.on_complete = done
    entry.complete()                             # or queue.enqueue_complete()

The array is not copied: as with enqueue(), it is kept alive until the
library is done with it. The library holds it from the lock on: a lock a
reset drops lets it go in the reset (a disconnect: at the queue's next
lock or complete()), and one still locked when the manager closes then. Producer thread only; one entry per
queue is locked at a time, and while it is, enqueue() and flush() of that
queue raise FailedPreconditionError.
"""
from __future__ import annotations

import ctypes
import threading
from typing import TYPE_CHECKING, Callable

import numpy as np

from . import _structs as s
from ._callbacks import held, hold, release_held
from ._queue_callbacks import QueuedArray, complete_trampoline, optional_callable, start_trampoline
from .errors import FailedPreconditionError, InvalidArgumentError, MrtError, Status

if TYPE_CHECKING:
    from .queues import _Queue


class LockedEntries:
    """A queue manager's record of each queue's locked entry and the key of
    the QueuedArray its user_data holds, so that a relock finds the entry
    the caller left. The library owns that user data from the lock on and
    frees it exactly once (mrt_input_queue_enqueue_lock), also when a reset
    or disconnect drops the entry: the record only forgets."""

    def __init__(self):
        self._locked: dict[int, tuple[int, int]] = {}  # queue -> (entry address, key)
        self._mutex = threading.Lock()

    def adopt(self, queue: int, struct: ctypes.Structure, trampolines: dict) -> int:
        """After a lock of `queue`: the key of the entry's QueuedArray, a new
        one (installed in the entry) unless the lock returned the entry
        the caller left locked."""
        address = ctypes.addressof(struct)
        with self._mutex:
            previous = self._locked.get(queue)
            if previous is not None and previous == (address, struct.user_data):
                return previous[1]
            key = hold(QueuedArray(None, None, None))
            self._locked[queue] = (address, key)
        for field, trampoline in trampolines.items():
            setattr(struct, field, trampoline)
        struct.user_data, struct.user_data_free = key, release_held
        return key

    def is_locked(self, queue: int, struct: ctypes.Structure, key: int) -> bool:
        with self._mutex:
            return self._locked.get(queue) == (ctypes.addressof(struct), key)

    def complete(self, queue: int, function: Callable[[int], int]) -> None:
        """function(queue) (an enqueue_complete), then forgets the entry
        unless it stays locked (a bad entry: InvalidArgumentError)."""
        try:
            function(queue)
        except InvalidArgumentError:
            raise
        except MrtError:
            self._forget(queue)
            raise
        self._forget(queue)

    def _forget(self, queue: int) -> None:
        with self._mutex:
            self._locked.pop(queue, None)


def _callback_property(name: str, doc: str) -> property:
    """A callback of the entry's QueuedArray (None: none), checked when set."""
    def get(entry: "_QueueEntry") -> Callable[[], None] | None:
        return getattr(entry._held(), name)

    def set_(entry: "_QueueEntry", function: Callable[[], None] | None) -> None:
        setattr(entry._held(), name, optional_callable(function, name))

    return property(get, set_, doc=f"{name}() {doc}; None: none.")


class _QueueEntry:
    """The locked entry of one ring slot (a view of the library's entry)."""
    _trampolines: dict = {}
    _writable = False

    def __init__(self, queue: "_Queue", struct: ctypes.Structure):
        self._queue = queue
        self._struct = struct
        self._key = queue._manager._locked_entries.adopt(queue._queue, struct, self._trampolines)

    def _held(self) -> QueuedArray:
        queue = self._queue._pointer()  # raises once the manager is closed
        if not self._queue._manager._locked_entries.is_locked(queue, self._struct, self._key):
            raise FailedPreconditionError(
                Status.FAILED_PRECONDITION,
                f"the entry of slot {self._struct.slot} is no longer locked (completed, or the "
                "queue was reset or disconnected): lock again")
        return held(self._key)

    @property
    def slot(self) -> int:
        """The ring slot, 0 .. num_buffers - 1."""
        return self._struct.slot

    @property
    def array(self) -> np.ndarray | None:
        """The array to queue, checked when set as enqueue() checks it (None:
        no data, which complete() refuses); setting it sets size_bytes to
        all of it."""
        return self._held().array

    @array.setter
    def array(self, array: np.ndarray | None) -> None:
        entry = self._held()
        if array is not None:
            self._queue._checked(array, writable=self._writable)
        entry.array = array
        self._struct.data = None if array is None else array.ctypes.data
        self._struct.size_bytes = 0 if array is None else array.nbytes

    @property
    def size_bytes(self) -> int:
        """The bytes queued from the start of the array; set it to queue
        fewer (a positive multiple of the sample size, which complete()
        checks; never more than the array holds)."""
        return self._struct.size_bytes

    @size_bytes.setter
    def size_bytes(self, size: int) -> None:
        entry = self._held()
        limit = 0 if entry.array is None else entry.array.nbytes
        if entry.array is not None and size > limit:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                       f"size_bytes {size}: the entry's array holds {limit} bytes")
        self._struct.size_bytes = size

    on_complete = _callback_property("on_complete", "runs on the device thread once the entry's "
                                     "bytes are moved")

    def complete(self) -> None:
        """Publishes the entry (the queue's enqueue_complete())."""
        self._queue.enqueue_complete()


class InputQueueEntry(_QueueEntry):
    """The locked entry of an input queue (mrt_input_queue_entry): set
    `array` (and optionally size_bytes, on_start, on_complete), then
    complete()."""
    _trampolines = {"read_start_fn": start_trampoline, "read_complete_fn": complete_trampoline}

    on_start = _callback_property("on_start", "runs on the device thread before the first byte "
                                  "is read")


class OutputQueueEntry(_QueueEntry):
    """The locked entry of an output queue (mrt_output_queue_entry): set a
    writable `array` (and optionally on_complete), then complete()."""
    _trampolines = {"write_complete_fn": complete_trampoline}
    _writable = True


def lock_entry(queue: "_Queue", lock_function, entry_type: type, struct_type: type) -> _QueueEntry:
    """lock_function(queue, &entry) and the entry's wrapper."""
    pointer = s.P(struct_type)()
    lock_function(queue._pointer(), ctypes.byref(pointer))
    return entry_type(queue, pointer.contents)

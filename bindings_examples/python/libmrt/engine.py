"""Engines: executables loaded on a device and run (mrt_engine_*, Poplar's Engine)."""
from __future__ import annotations

import ctypes
import os

import numpy as np

from . import _structs as s
from ._arrays import callback_array, contiguous, options_argument
from ._callbacks import (NO_FREE, checked_callable, guarded, held, hold, release_held,
                         surfacing)
from ._handles import Closable, Handle, joining_destroyer, open_objects
from ._native import C, out_value
from .devices import Device
from .errors import InvalidArgumentError, NotFoundError, Status
from .executables import Executable
from .types import ALL_REPLICAS, ProfileFormat

class _StreamEntry:
    def __init__(self, function, dtype):
        self.function = function
        self.dtype = dtype


@s.STREAM_FN
def _stream_trampoline(data, size, replica, user_data):
    with guarded("a stream callback"):
        entry = held(user_data)
        entry.function(callback_array(data, size, entry.dtype, None), replica)


@s.PRINT_FN
def _print_trampoline(line, user_data):
    with guarded("the print callback"):
        held(user_data)(line.decode("utf-8", "replace"))


class Engine(Closable):
    """An executable loaded on a device and run (Poplar's Engine):
    Engine(executable, options={"debug.instrument": "true"}). One thread
    drives it at a time; stop() may be called from any thread."""
    _kind = "Engine"

    def __init__(self, executable: Executable, options: dict | None = None):
        pointer = out_value(C.mrt_engine_create, executable._pointer(), options_argument(options))
        self._handle = Handle(pointer, joining_destroyer(C.mrt_engine_destroy,
                                                         "libmrt-engine-destroy"))
        self._handles = executable.handles()
        self._buffers = []  # arrays connected with connect_stream_to_buffer
        open_objects.add(self)

    def close(self) -> None:
        """Stops a run in progress, waits for it and frees the engine."""
        super().close()
        self._buffers = []

    def load(self, device: Device) -> None:
        C.mrt_engine_load(self._pointer(), device._pointer())

    def run(self, program: int = 0, replica: int | None = None) -> None:
        """Runs program index `program` on every replica (replica 0 on this
        thread), or on one replica (on this thread). An exception raised by
        a stream or print callback on this thread is re-raised here once the
        run returns; those of other replicas' threads go to the callback
        error hook."""
        with surfacing():
            if replica is None:
                C.mrt_engine_run(self._pointer(), program)
            else:
                C.mrt_engine_run_replica(self._pointer(), program, replica)

    def stop(self) -> None:
        C.mrt_engine_stop(self._pointer())

    def _dtype_of(self, handle):
        info = self._handles.get(handle)
        return info.dtype if info is not None else np.dtype(np.uint8)

    def connect_stream(self, handle: str, function, replica: int = ALL_REPLICAS) -> None:
        """Connects a FIFO to function(array, replica): array is a writable
        numpy view of the transfer, of the stream's dtype (fill it for a
        host-to-device stream, read it for device-to-host), valid only
        during the call. Called on the thread running the replica."""
        checked_callable(function, "stream callback")
        C.mrt_engine_connect_stream(self._pointer(), handle.encode(), replica,
                                          _stream_trampoline,
                                          hold(_StreamEntry(function, self._dtype_of(handle))),
                                          release_held)

    def connect_stream_to_buffer(self, handle: str, array: np.ndarray,
                                 replica: int = ALL_REPLICAS) -> None:
        """Connects a FIFO to a circular buffer (a whole number of
        transfers): the array, used without copies and kept alive by the
        engine until close()."""
        contiguous(array, f"stream '{handle}' buffer", writable=True)
        C.mrt_engine_connect_stream_to_buffer(self._pointer(), handle.encode(), replica,
                                                    array.ctypes.data, array.nbytes)
        self._buffers.append(array)

    def _checked(self, handle, array, writable, what):
        contiguous(array, f"{what} '{handle}'", writable)
        info = self._handles.get(handle)
        if info is not None and array.dtype != info.dtype:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                           f"{what} '{handle}': expected dtype {info.dtype}, got {array.dtype}")
        return array

    def _new(self, handle):
        info = self._handles.get(handle)
        if info is None:
            raise NotFoundError(Status.NOT_FOUND, f"the executable has no handle '{handle}'; it has "
                           f"{', '.join(sorted(self._handles)) or 'none'}")
        return np.empty(info.num_elements, info.dtype)

    def write_tensor(self, handle: str, array: np.ndarray, replica: int = ALL_REPLICAS) -> None:
        """Writes a host-write handle's tensor (mrt_graph_create_host_write)."""
        self._checked(handle, array, False, "write_tensor")
        C.mrt_engine_write_tensor(self._pointer(), handle.encode(), array.ctypes.data,
                                        array.nbytes, replica)

    def read_tensor(self, handle: str, out: np.ndarray | None = None, replica: int = 0) -> np.ndarray:
        """Reads a host-read handle's tensor into `out` (or a new flat array)."""
        out = self._new(handle) if out is None else out
        self._checked(handle, out, True, "read_tensor")
        C.mrt_engine_read_tensor(self._pointer(), handle.encode(), out.ctypes.data,
                                       out.nbytes, replica)
        return out

    def copy_to_remote_buffer(self, handle: str, array: np.ndarray, slot: int = 0,
                              replica: int = 0) -> None:
        self._checked(handle, array, False, "copy_to_remote_buffer")
        C.mrt_engine_copy_to_remote_buffer(self._pointer(), handle.encode(), array.ctypes.data,
                                                 array.nbytes, slot, replica)

    def copy_from_remote_buffer(self, handle: str, slot: int = 0, out: np.ndarray | None = None,
                                replica: int = 0) -> np.ndarray:
        out = self._new(handle) if out is None else out
        self._checked(handle, out, True, "copy_from_remote_buffer")
        C.mrt_engine_copy_from_remote_buffer(self._pointer(), handle.encode(),
                                                   out.ctypes.data, out.nbytes, slot, replica)
        return out

    def set_print_callback(self, function) -> None:
        """PrintTensor lines go to function(line: str); None: to stdout."""
        if function is None:
            C.mrt_engine_set_print_callback(self._pointer(), s.PRINT_FN(), None, NO_FREE)
            return
        checked_callable(function, "print callback")
        C.mrt_engine_set_print_callback(self._pointer(), _print_trampoline, hold(function),
                                              release_held)

    def device_cycles(self, replica: int = 0) -> int:
        out = s.c_u64()
        C.mrt_engine_device_cycles(self._pointer(), replica, ctypes.byref(out))
        return out.value

    def insert_simulated_error(self, error: int, step: int, tile: int = 0) -> None:
        C.mrt_engine_insert_simulated_error(self._pointer(), int(error), step, tile)

    def erase_simulated_error(self, step: int, tile: int = 0) -> None:
        C.mrt_engine_erase_simulated_error(self._pointer(), step, tile)

    def clear_simulated_errors(self) -> None:
        C.mrt_engine_clear_simulated_errors(self._pointer())

    def set_profiling(self, enabled: bool = True) -> None:
        C.mrt_engine_set_profiling(self._pointer(), enabled)

    def write_profile(self, path, format: int = ProfileFormat.SUMMARY) -> None:
        C.mrt_engine_write_profile(self._pointer(), int(format), os.fsencode(path))

    def profile_text(self, format: int = ProfileFormat.SUMMARY) -> str:
        pointer, length = self._pointer(), s.c_size()
        C.mrt_engine_profile_text(pointer, int(format), None, 0, ctypes.byref(length))
        buffer = ctypes.create_string_buffer(length.value + 1)
        C.mrt_engine_profile_text(pointer, int(format), buffer, len(buffer),
                                        ctypes.byref(length))
        return buffer.value.decode("utf-8", "replace")

"""Futures of asynchronous requests (mrt_future_*).

A libmrt Future is a concurrent.futures.Future: result(timeout),
exception(timeout), done(), add_done_callback(fn) and
concurrent.futures.wait / as_completed work as usual, and it is awaitable
in asyncio (`outputs = await runner.execute_async(inputs)`). It is completed
by the library's on_ready callback on the thread that finishes the request:
with the request's outputs, or with the MrtError of its status, message
and recovery action. Requests cannot be cancelled (cancel() returns False).
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import ctypes
from typing import Any, Callable

from . import _structs as s
from ._callbacks import guarded, held, hold, release_held
from ._handles import Handle
from ._native import C
from .errors import FailedPreconditionError, MrtError, RecoveryAction, Status


class _Completion:
    """What the library holds through one on_ready registration: the
    future to complete and the buffers the request uses (kept alive until
    the request is done, even if the Future is dropped first)."""

    def __init__(self, future: "Future", handle: Handle, keep_alive: Any):
        self.future = future
        self.handle = handle
        self.keep_alive = keep_alive

    def complete(self, status: int) -> None:
        future = self.future
        if status == Status.OK:
            future.set_result(future._value)
        else:
            pointer = self.handle.pointer
            message = C.mrt_future_error_message(pointer).decode("utf-8", "replace")
            future.set_exception(MrtError(status, message, C.mrt_future_recovery_action(pointer)))
        # concurrent.futures keeps run callbacks for the future's lifetime;
        # drop them (later ones run at once), so what they hold is released.
        future._done_callbacks.clear()


@s.READY_FN
def _ready_trampoline(status, user_data):
    with guarded("completing a Future"):
        held(user_data).complete(status)


class Future(concurrent.futures.Future):
    """The pending outcome of ModelRunner.execute_async(_alloc). Its result
    is the outputs: the dict of arrays, or a TensorMemory."""

    def __init__(self, pointer: int, value: Any, keep_alive: Any = None):
        super().__init__()
        self.set_running_or_notify_cancel()  # running already: not cancellable
        self._handle: Handle | None = Handle(pointer, C.mrt_future_destroy)
        self._value = value
        completion = _Completion(self, self._handle, (value, keep_alive))
        C.mrt_future_on_ready(pointer, _ready_trampoline, hold(completion), release_held)

    def add_done_callback(self, fn: Callable[["Future"], Any]) -> None:
        """Calls fn(future) once the request is done: at once (on this
        thread) if it is, else on the library thread that completes it. An
        exception fn raises goes to the callback error hook."""
        def call(future):
            with guarded("a Future done callback"):
                fn(future)
        super().add_done_callback(call)

    def is_ready(self) -> bool:
        """True once the library has finished the request, succeeded or
        failed (mrt_future_is_ready). It turns True a moment before done():
        done() waits for the outputs to be handed to this Future as well,
        so only done() promises that result() does not block. After close()
        (the handle gone), done()."""
        handle = self._handle
        pointer = None if handle is None else handle.pointer
        return self.done() if pointer is None else bool(C.mrt_future_is_ready(pointer))

    def status(self) -> Status:
        """The finished request's Status, as the library reports it
        (mrt_future_status): OK, or the code of its failure (whose message
        result() raises). Raises FailedPreconditionError, with the library's
        message, while the request is still running; after close() the
        status this Future was completed with."""
        handle = self._handle
        pointer = None if handle is None else handle.pointer
        if pointer is None:
            if not self.done():
                raise FailedPreconditionError(Status.FAILED_PRECONDITION,
                                              "the request is still running")
            error = self.exception()
            return Status.OK if error is None else error.code
        request_status = s.c_i32()
        C.mrt_future_status(pointer, ctypes.byref(request_status))
        try:
            return Status(request_status.value)
        except ValueError:  # a code this package does not know
            return request_status.value

    def recovery_action(self) -> RecoveryAction:
        """What the device needs after a DEVICE_ERROR; NONE otherwise."""
        error = self.exception() if self.done() else None
        return error.recovery_action if isinstance(error, MrtError) else RecoveryAction.NONE

    def wait(self, timeout: float | None = None) -> bool:
        """Waits up to timeout seconds (None: forever); True if done."""
        done, _ = concurrent.futures.wait([self], timeout)
        return bool(done)

    def close(self) -> None:
        """Drops this future's library handle (the request goes on; its
        buffers stay alive until it is done)."""
        handle, self._handle = self._handle, None
        if handle is not None and self.done():
            handle.release()

    def __enter__(self) -> "Future":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __await__(self):
        return asyncio.wrap_future(self).__await__()

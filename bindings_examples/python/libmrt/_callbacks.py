"""Python callables the library holds, and running them from C threads.

The library calls back on its own threads (device threads, the logging
thread) through (fn, user_data, user_data_free) triples. Here user_data is
a key into `_held`, which keeps the Python object alive until the library
calls user_data_free (`release_held`); so nothing the library may still
call is ever collected. The C-callable trampolines are module-level
CFUNCTYPE objects that live as long as the package.

An exception raised by user code inside a callback never unwinds into C:
`guarded` catches it and passes it to `callback_error_hook(where,
exception)` (by default printed to stderr), and the library carries on.
Where the binding can surface the error on the caller's thread later (a
Future's result, Session runs), it records it and re-raises it there too.
"""
from __future__ import annotations

import contextlib
import itertools
import sys
import threading
import traceback
from typing import Any, Callable

from . import _structs as s
from .errors import InvalidArgumentError, Status


def _default_callback_error_hook(where: str, exception: BaseException) -> None:
    print(f"libmrt: exception in {where} (ignored; the library carries on):", file=sys.stderr)
    traceback.print_exception(type(exception), exception, exception.__traceback__, file=sys.stderr)


# Replace (libmrt.set_callback_error_hook) to collect callback errors; the
# hook must not raise (if it does, the traceback is printed to stderr).
callback_error_hook: Callable[[str, BaseException], None] = _default_callback_error_hook

_held: dict[int, Any] = {}
_next_key = itertools.count(1)
_state = threading.local()


def hold(obj: Any) -> int:
    """Keeps obj until the library frees the returned user_data key."""
    key = next(_next_key)
    _held[key] = obj
    return key


def held(key: int) -> Any:
    return _held[key]


def release(key: int) -> None:
    """Drops what hold() kept, for keys never handed to the library."""
    _held.pop(key, None)


def checked_callable(function: Any, what: str) -> Any:
    """function itself, or InvalidArgumentError if it is not callable (a
    callback the library would call later fails now, on the caller's thread)."""
    if not callable(function):
        raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"{what}: {function!r} is not callable")
    return function


def report(where: str, exception: BaseException) -> None:
    try:
        callback_error_hook(where, exception)
    except BaseException:  # the hook failed too: last resort, never into C
        traceback.print_exc(file=sys.stderr)


@contextlib.contextmanager
def guarded(where: str):
    """Runs a callback's Python code: marks this thread as inside a library
    callback (see in_library_callback), and catches what it raises. Inside
    a `surfacing` call on this thread the first exception is kept for that
    call to raise; others go to callback_error_hook."""
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        yield
    except BaseException as exception:
        caught = getattr(_state, "caught", None)
        if caught is not None and not caught:
            caught.append(exception)
        else:  # no call to raise it, or that call raises an earlier one
            report(where, exception)
    finally:
        _state.depth -= 1


@contextlib.contextmanager
def surfacing():
    """For calls that run callbacks on the calling thread (session runs,
    handler factories, predicates, compile progress): an exception raised
    by such a callback is re-raised here once the call returns, chained to
    the library's error if the call failed too."""
    saved = getattr(_state, "caught", None)
    _state.caught = caught = []
    try:
        yield
    except BaseException as error:
        if caught:
            raise caught[0] from error
        raise
    finally:
        _state.caught = saved
    if caught:
        raise caught[0]


def in_library_callback() -> bool:
    """Whether this thread is inside a callback from the library: objects
    whose destruction joins library threads (runners, engines) must then
    be destroyed elsewhere, as the thread to join may be this one."""
    return getattr(_state, "depth", 0) > 0


@s.FREE_FN
def release_held(user_data):
    with guarded("user_data_free"):
        _held.pop(user_data, None)


NO_FREE = s.FREE_FN()


@s.PROGRESS_FN
def progress_trampoline(step, total, user_data):
    """Compilation progress (graph compile, ONNX), on the calling thread."""
    with guarded("a progress callback"):
        held(user_data)(step, total)

"""libmrt's logger: level, destination callback, and messages from Python."""
from __future__ import annotations

from typing import Callable

from . import _structs as s
from ._callbacks import NO_FREE, checked_callable, guarded, held, hold, release_held
from ._native import C
from .types import LogLevel


@s.LOG_FN
def _log_trampoline(level, message, user_data):
    with guarded("the log callback"):
        held(user_data)(LogLevel(level), message.decode("utf-8", "replace"))


def set_log_callback(function: Callable[[LogLevel, str], None] | None) -> None:
    """Sends libmrt's log messages to function(level, message), called on
    whichever thread logs, never two calls at once; None restores the
    MRT_LOG_DEST destination. The previous function is released once its
    last call has returned. Exceptions it raises go to the callback error
    hook. It must not call set_log_callback itself."""
    if function is None:
        C.mrt_set_log_callback(s.LOG_FN(), None, NO_FREE)
        return
    checked_callable(function, "log callback")
    C.mrt_set_log_callback(_log_trampoline, hold(function), release_held)


def set_log_level(level: LogLevel | int) -> None:
    """Messages at `level` and more severe are emitted (OFF: none)."""
    C.mrt_set_log_level(int(level))


def get_log_level() -> LogLevel:
    return LogLevel(C.mrt_get_log_level())


def log_message(level: LogLevel | int, message: str) -> None:
    """Emits message through libmrt's logger (ERR to TRACE)."""
    C.mrt_log_message(int(level), message.encode())

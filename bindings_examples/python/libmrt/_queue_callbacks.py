"""What the library holds for one enqueued array, and the trampolines that
run its callbacks on the device thread (shared by enqueue and the
two-phase enqueue)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import _structs as s
from ._callbacks import checked_callable, guarded, held


class QueuedArray:
    """The user data of one queue entry: the array (kept alive while the
    library may read or write it) and its callbacks."""

    def __init__(self, array: np.ndarray | None, on_start: Callable[[], None] | None,
                 on_complete: Callable[[], None] | None):
        self.array, self.on_start, self.on_complete = array, on_start, on_complete


@s.QUEUE_DATA_FN
def start_trampoline(user_data):
    with guarded("a queue's on_start callback"):
        entry = held(user_data)
        if entry.on_start is not None:
            entry.on_start()


@s.QUEUE_DATA_FN
def complete_trampoline(user_data):
    with guarded("a queue's on_complete callback"):
        entry = held(user_data)
        if entry.on_complete is not None:
            entry.on_complete()


def optional_callable(function: Any, what: str) -> Any:
    """None, or function checked to be callable."""
    return None if function is None else checked_callable(function, what)

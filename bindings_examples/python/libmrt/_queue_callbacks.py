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


def _run(user_data: int, callback: str) -> None:
    with guarded(f"a queue's {callback} callback"):
        function = getattr(held(user_data), callback)
        if function is not None:
            function()


@s.QUEUE_DATA_FN
def start_trampoline(user_data):
    _run(user_data, "on_start")


@s.QUEUE_DATA_FN
def complete_trampoline(user_data):
    _run(user_data, "on_complete")


def optional_callable(function: Any, what: str) -> Any:
    """None, or function checked to be callable."""
    return None if function is None else checked_callable(function, what)

"""Ownership of library pointers: one _Handle per pointer, closed once."""
from __future__ import annotations

import threading
import weakref
from typing import Callable

from ._callbacks import in_library_callback
from .errors import FailedPreconditionError, Status


_release_lock = threading.Lock()


class Handle:
    """Owns one library pointer; destroyed once, by release() or when the
    last Python reference (the owning object, a numpy view, a callback
    entry) goes."""

    def __init__(self, pointer: int, destroy: Callable[[int], None]):
        if not pointer:
            raise ValueError("Handle of a NULL pointer")
        self.pointer: int | None = pointer
        self._destroy = destroy

    def release(self) -> None:
        with _release_lock:  # two threads closing at once destroy once
            pointer, self.pointer = self.pointer, None
        if pointer:
            self._destroy(pointer)

    def __del__(self):
        self.release()


def joining_destroyer(destroy: Callable[[int], None], thread_name: str) -> Callable[[int], None]:
    """A destroy function for objects whose destruction joins library
    threads (runners, engines, sessions): called from inside a library
    callback it hands the call to a Python thread of its own (not a daemon,
    so the interpreter waits for it at exit), after the callback returns."""
    def run(pointer: int) -> None:
        if in_library_callback():
            threading.Thread(target=destroy, args=(pointer,), name=thread_name).start()
        else:
            destroy(pointer)
    return run


# Objects whose library threads may call into Python: closed at interpreter
# exit (libmrt.__init__ registers it) so none calls into a finalized Python.
open_objects: "weakref.WeakSet[Closable]" = weakref.WeakSet()


class Closable:
    """A Python object owning library handles: close() (or a with block)
    frees them, __del__ too as a safety net; a method called after close()
    raises FailedPreconditionError."""
    _kind = "object"
    _handle: Handle | None = None
    # True for objects whose memory numpy views borrow (models, executables,
    # TensorMemory): close() drops this object's reference and the library
    # object is freed when the last view goes.
    _views_share_handle = False

    def _pointer(self) -> int:
        handle = self._handle
        if handle is None or handle.pointer is None:
            raise FailedPreconditionError(Status.FAILED_PRECONDITION, f"{self._kind} is closed")
        return handle.pointer

    @property
    def closed(self) -> bool:
        handle = self._handle
        return handle is None or handle.pointer is None

    def close(self) -> None:
        """Frees the library object (idempotent)."""
        handle, self._handle = self._handle, None
        open_objects.discard(self)
        if handle is not None and not self._views_share_handle:
            handle.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # never raise from a finalizer
            pass


"""Status codes and the exceptions raised for them.

Every failed libmrt call raises an MrtError carrying the status (`code`,
also `status`) and the library's message; the class is the status's own
subclass (NotFoundError for MRT_NOT_FOUND, ...), so callers catch what they
can handle:

    try:
        runner.execute({"imagee": image})
    except libmrt.NotFoundError as error:
        print(error.code.name, error.message)

MrtError(code, message) itself builds the subclass of `code`.
"""
from __future__ import annotations

import enum


class Status(enum.IntEnum):
    """The mrt_status codes (explicitly numbered in mrt_c.h, never renumbered)."""
    OK = 0
    INVALID_ARGUMENT = 1
    NOT_FOUND = 2
    FAILED_PRECONDITION = 3
    RESOURCE_EXHAUSTED = 4
    DEADLINE_EXCEEDED = 5
    CANCELLED = 6
    UNAVAILABLE = 7
    DEVICE_ERROR = 8
    CORRUPT_MODEL = 9
    VERSION_MISMATCH = 10
    UNIMPLEMENTED = 11
    INTERNAL = 12


class RecoveryAction(enum.IntEnum):
    """What a device needs after a DEVICE_ERROR (mrt_recovery_action)."""
    NONE = 0
    IPU_RESET = 1
    PARTITION_RESET = 2
    FULL_RESET = 3


_SUBCLASSES: dict[int, type] = {}


class MrtError(Exception):
    """A failed libmrt call: `code` (a Status; an int for a code this
    module does not know), the library's `message`, and for device errors
    the `recovery_action` the device needs."""

    code: Status
    message: str
    recovery_action: RecoveryAction

    def __new__(cls, code: int, message: str = "", recovery_action: int = 0):
        if cls is MrtError:
            cls = _SUBCLASSES.get(int(code), MrtError)
        return super().__new__(cls)

    def __init__(self, code: int, message: str = "", recovery_action: int = 0):
        try:
            code = Status(code)
        except ValueError:
            pass
        try:
            recovery_action = RecoveryAction(recovery_action)
        except ValueError:
            pass
        self.code = code
        self.message = message
        self.recovery_action = recovery_action
        name = code.name if isinstance(code, Status) else str(int(code))
        super().__init__(f"MRT_{name}: {message}")

    def __reduce__(self):
        return (MrtError, (int(self.code), self.message, int(self.recovery_action)))

    @property
    def status(self) -> Status:
        """The same as `code`."""
        return self.code


def _subclass(name: str, status: Status, doc: str) -> type:
    cls = type(name, (MrtError,), {"__doc__": doc, "__module__": __name__})
    _SUBCLASSES[int(status)] = cls
    return cls


InvalidArgumentError = _subclass("InvalidArgumentError", Status.INVALID_ARGUMENT,
                                 "A NULL, out of range or malformed argument (also a numpy "
                                 "array of the wrong dtype or shape).")
NotFoundError = _subclass("NotFoundError", Status.NOT_FOUND, "An unknown name, file or id.")
FailedPreconditionError = _subclass("FailedPreconditionError", Status.FAILED_PRECONDITION,
                                    "The object is in the wrong state for the call (also: closed).")
ResourceExhaustedError = _subclass("ResourceExhaustedError", Status.RESOURCE_EXHAUSTED,
                                   "Out of memory, queue full, too many handles.")
DeadlineExceededError = _subclass("DeadlineExceededError", Status.DEADLINE_EXCEEDED,
                                  "A timeout expired.")
CancelledError = _subclass("CancelledError", Status.CANCELLED, "The operation was stopped.")
UnavailableError = _subclass("UnavailableError", Status.UNAVAILABLE, "No device could be had.")
DeviceError = _subclass("DeviceError", Status.DEVICE_ERROR,
                        "The (simulated) hardware reported a fault; recovery_action says what "
                        "the device needs.")
CorruptModelError = _subclass("CorruptModelError", Status.CORRUPT_MODEL, "A malformed model.")
VersionMismatchError = _subclass("VersionMismatchError", Status.VERSION_MISMATCH,
                                 "Incompatible library, model or package version.")
UnimplementedError = _subclass("UnimplementedError", Status.UNIMPLEMENTED,
                               "A valid request this build does not support.")
InternalError = _subclass("InternalError", Status.INTERNAL, "A bug in libmrt: please report it.")


class LibraryNotFoundError(ImportError):
    """libmrt.so could not be loaded; the message lists every place tried."""

"""Library-wide facts: version, status names, the host memory limit."""
from __future__ import annotations

import ctypes

from ._native import C
from .errors import RecoveryAction, Status


def version() -> str:
    """The loaded library's version, "MAJOR.MINOR.PATCH"."""
    return C.mrt_version_string().decode()


def version_tuple() -> tuple[int, int, int]:
    parts = [ctypes.c_int() for _ in range(3)]
    C.mrt_version(*(ctypes.byref(p) for p in parts))
    return tuple(p.value for p in parts)


def check_version(major: int, minor: int) -> None:
    """Raises VersionMismatchError unless the library serves major.minor."""
    C.mrt_check_version(major, minor)


def status_string(code: Status | int) -> str:
    """The library's name and meaning of a status code."""
    return C.mrt_status_string(int(code)).decode()


def last_error_recovery_action() -> RecoveryAction:
    """The recovery action of this thread's last failed call (also on
    every DeviceError raised, as `recovery_action`)."""
    return RecoveryAction(C.mrt_last_error_recovery_action())


def set_host_memory_limit(limit_bytes: int) -> None:
    """The process-wide limit on simulated device memory (0: default)."""
    C.mrt_set_host_memory_limit(limit_bytes)


def host_memory_limit() -> int:
    return C.mrt_host_memory_limit()


def host_memory_reserved() -> int:
    return C.mrt_host_memory_reserved()

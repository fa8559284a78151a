"""The modelled time on the target: cycles a device has run and its clock
(mrt_model_runner_device_cycles)."""
from __future__ import annotations

import ctypes
from dataclasses import dataclass

from . import _structs as s


@dataclass(frozen=True)
class DeviceTime:
    """The cycles a replica's device (its own lane, for a replica of a
    model compiled with replication) has run since it was last loaded, Load
    and every Main run, host transfers, exchange and syncs included, and the
    device's clock in Hz. `b - a` of two readings is the DeviceTime of the
    requests served in between; `seconds` is cycles / clock_hz."""
    cycles: int
    clock_hz: float

    @property
    def seconds(self) -> float:
        """cycles / clock_hz: modelled seconds on the target."""
        return self.cycles / self.clock_hz if self.clock_hz else 0.0

    def __sub__(self, other: "DeviceTime") -> "DeviceTime":
        if not isinstance(other, DeviceTime):
            return NotImplemented
        return DeviceTime(self.cycles - other.cycles, self.clock_hz)


def read_device_time(function, pointer: int, replica: int) -> DeviceTime:
    """function(pointer, replica, &cycles, &clock_hz) as a DeviceTime (the
    C calls of this shape raise MrtError for a replica out of range)."""
    cycles, clock_hz = s.c_u64(), s.c_double()
    function(pointer, replica, ctypes.byref(cycles), ctypes.byref(clock_hz))
    return DeviceTime(cycles.value, clock_hz.value)

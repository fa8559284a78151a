"""The simulated IPU system and its devices (mrt_device_manager_*, mrt_device_*).

Waiting for a busy device: every get_* takes `wait` in seconds: 0 (the
default) fails at once, None waits forever, > 0 keeps trying that long;
`poll_interval` (seconds; None: the library's default) is the pause
between attempts. try_get_* return None instead of raising
UnavailableError when no device could be attached.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import _structs as s
from ._arrays import options_argument
from ._handles import Closable, Handle
from ._native import C, out_value
from .types import duration_ns

if TYPE_CHECKING:
    from .models import Model

_NO_WAIT, _WAIT_WITH_TIMEOUT, _WAIT_FOREVER = 0, 1, 2


def wait_config(wait: float | None, poll_interval: float | None):
    """An mrt_device_wait_config for `wait` seconds (None: forever), or
    None (the library's NO_WAIT) for 0 without a poll interval."""
    if wait == 0 and poll_interval is None:
        return None
    config = s.DeviceWaitConfig()
    C.mrt_device_wait_config_init_sized(ctypes.byref(config), ctypes.sizeof(config))
    if wait is None:
        config.strategy = _WAIT_FOREVER
    elif wait > 0:
        config.strategy = _WAIT_WITH_TIMEOUT
        config.timeout_ns = duration_ns(wait, "wait")
    else:
        duration_ns(wait, "wait")  # raises for a negative or malformed value
    if poll_interval is not None:
        config.sleep_time_ns = duration_ns(poll_interval, "poll_interval")
    return config


def _by_ref(config):
    return None if config is None else ctypes.byref(config)


@dataclass(frozen=True)
class DeviceInfo:
    """One device of the system (mrt_device_info); is_free is a snapshot."""
    id: int
    num_ipus: int
    ipu_version: int
    tiles_per_ipu: int
    is_free: bool
    target_name: str


class Device(Closable):
    """One attached (or IPU Model) device. close() releases this reference;
    engines, sessions and runners using it keep their own."""
    _kind = "Device"

    def __init__(self, pointer: int):
        self._handle = Handle(pointer, C.mrt_device_destroy)

    def _int(self, function) -> int:
        return out_value(function, self._pointer(), out_type=s.c_i64)

    @property
    def id(self) -> int:
        """The id in the system; -1 for an IPU Model device."""
        return self._int(C.mrt_device_id)

    @property
    def ipu_version(self) -> int:
        return self._int(C.mrt_device_ipu_version)

    @property
    def num_ipus(self) -> int:
        return self._int(C.mrt_device_num_ipus)


def _device_or_none(pointer: int | None) -> Device | None:
    return Device(pointer) if pointer else None


class DeviceManager(Closable):
    """The simulated system described by MRT_HWSIM_IPUS; hands out Devices.
    Any thread may use it at once."""
    _kind = "DeviceManager"

    def __init__(self):
        self._handle = Handle(out_value(C.mrt_device_manager_create), C.mrt_device_manager_destroy)

    def device_count(self) -> int:
        return out_value(C.mrt_device_manager_device_count, self._pointer(), out_type=s.c_size)

    def ipu_hardware_version(self) -> int:
        """2 (Mk2), 21 (C600), or 0 for a system without IPUs."""
        return out_value(C.mrt_device_manager_ipu_hardware_version, self._pointer(), out_type=s.c_i64)

    def devices(self) -> list[DeviceInfo]:
        """Every device id of the system, in id order."""
        result = []
        for index in range(self.device_count()):
            info = s.sized(s.DeviceInfo)
            C.mrt_device_manager_device_info(self._pointer(), index, ctypes.byref(info))
            result.append(DeviceInfo(info.id, info.num_ipus, info.ipu_version, info.tiles_per_ipu,
                                     info.is_free, info.target_name.decode()))
        return result

    def get_device(self, num_ipus: int = 1, options: dict | None = None, wait: float | None = 0,
                   poll_interval: float | None = None,
                   requires_remote_buffers: bool = False) -> Device:
        """Attaches the first free device of num_ipus IPUs."""
        return Device(self._get(C.mrt_device_manager_get_device, (num_ipus, options_argument(options)),
                                wait, poll_interval, (requires_remote_buffers,)))

    def try_get_device(self, num_ipus: int = 1, options: dict | None = None, wait: float | None = 0,
                       poll_interval: float | None = None,
                       requires_remote_buffers: bool = False) -> Device | None:
        return _device_or_none(self._get(C.mrt_device_manager_try_get_device,
                                         (num_ipus, options_argument(options)), wait,
                                         poll_interval, (requires_remote_buffers,)))

    def get_device_for_model(self, model: "Model", wait: float | None = 0,
                             poll_interval: float | None = None) -> Device:
        """A device with the model's IPUs, IPU version and device options."""
        return Device(self._get(C.mrt_device_manager_get_device_for_model, (model._pointer(),),
                                wait, poll_interval))

    def try_get_device_for_model(self, model: "Model", wait: float | None = 0,
                                 poll_interval: float | None = None) -> Device | None:
        return _device_or_none(self._get(C.mrt_device_manager_try_get_device_for_model,
                                         (model._pointer(),), wait, poll_interval))

    def get_specific_device(self, device_id: int, options: dict | None = None,
                            wait: float | None = 0, poll_interval: float | None = None) -> Device:
        return Device(self._get(C.mrt_device_manager_get_specific_device,
                                (device_id, options_argument(options)), wait, poll_interval))

    def try_get_specific_device(self, device_id: int, options: dict | None = None,
                                wait: float | None = 0,
                                poll_interval: float | None = None) -> Device | None:
        return _device_or_none(self._get(C.mrt_device_manager_try_get_specific_device,
                                         (device_id, options_argument(options)), wait,
                                         poll_interval))

    def get_specific_device_for_model(self, device_id: int, model: "Model", wait: float | None = 0,
                                      poll_interval: float | None = None) -> Device:
        return Device(self._get(C.mrt_device_manager_get_specific_device_for_model,
                                (device_id, model._pointer()), wait, poll_interval))

    def try_get_specific_device_for_model(self, device_id: int, model: "Model",
                                          wait: float | None = 0,
                                          poll_interval: float | None = None) -> Device | None:
        return _device_or_none(self._get(C.mrt_device_manager_try_get_specific_device_for_model,
                                         (device_id, model._pointer()), wait, poll_interval))

    def _get(self, function, leading: tuple, wait: float | None, poll_interval: float | None,
             trailing: tuple = ()) -> int:
        """function(manager, *leading, wait config, *trailing, &out)."""
        config = wait_config(wait, poll_interval)
        return out_value(function, self._pointer(), *leading, _by_ref(config), *trailing)

    def create_ipu_model_device(self, num_ipus: int = 1, ipu_version: int = 2,
                                tiles_per_ipu: int = 0) -> Device:
        """An IPU Model device, outside the system's pool (tiles_per_ipu 0:
        the architecture's 1472)."""
        return Device(out_value(C.mrt_device_manager_create_ipu_model_device, self._pointer(),
                                num_ipus, ipu_version, tiles_per_ipu))

    def create_ipu_model_device_for_model(self, model: "Model", tiles_per_ipu: int = 0) -> Device:
        return Device(out_value(C.mrt_device_manager_create_ipu_model_device_for_model,
                                self._pointer(), model._pointer(), tiles_per_ipu))

    def create_small_ipu_model_device(self, num_ipus: int = 1, ipu_version: int = 2) -> Device:
        """An IPU Model device of 4 tiles per IPU (Target("ipu-model-small"))."""
        return Device(out_value(C.mrt_device_manager_create_small_ipu_model_device, self._pointer(),
                                num_ipus, ipu_version))

    def create_small_ipu_model_device_for_model(self, model: "Model") -> Device:
        return Device(out_value(C.mrt_device_manager_create_small_ipu_model_device_for_model,
                                self._pointer(), model._pointer()))

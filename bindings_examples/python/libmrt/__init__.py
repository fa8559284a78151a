"""libmrt - Python bindings of libmrt, an open Model Runtime for IPU-style
accelerators, over its C API (mrt_c.h) through ctypes: pure Python, nothing
to compile. The import finds libmrt.so as libmrt._native describes
(MRT_LIBRARY, the install prefix, the dynamic loader).

    import numpy as np, libmrt
    with libmrt.ModelRunner("mlp.popef") as runner:
        probs = runner.execute({"image": np.zeros((1, 784), np.float32)})["probs"]

Modules, one purpose each:
  errors       Status, MrtError and its subclass per status code
  types        the header's enums and constants; durations
  system       version, status strings, host memory limit
  log          libmrt's logger: level, callback, messages
  models       Model, AnchorInfo, ModelInfo
  devices      DeviceManager, Device, DeviceInfo
  sessions     Session, AnchorPredicate
  queues       QueueManager, InputQueue, OutputQueue
  queue_entries InputQueueEntry, OutputQueueEntry (the two-phase enqueue)
  popef        list_popef, PopefListing, PopefFile, BlobInfo (what mrt-info shows),
               blob_type_name
  runner       ModelRunner, TensorMemory, DataDesc, RequestTimes (statistics),
               FlushSelection (flush_select_callback)
  device_time  DeviceTime (modelled cycles and clock of a device)
  futures      Future (concurrent.futures and asyncio)
  graph        Target, codelets(), Graph (building models)
  executables  Executable
  engine       Engine
  builder      ModelBuilder
  fusion       fuse_models
  onnx         compile_onnx, read_onnx_tensor_file

Rules every class follows:
- close() (or a with block) frees the library object; __del__ too as a
  safety net. A call after close() raises FailedPreconditionError.
- numpy arrays pass without copies; their dtype and shape are checked
  against the model before C is called.
- Failures raise MrtError subclasses carrying `code` and `message`.
- Durations are seconds; None means forever / never.
- Callbacks may run on library threads: the package keeps them alive
  while the library holds them, and an exception one raises never reaches
  C. It is re-raised by the call that ran the callback on the caller's
  thread (session runs, compiles, transfers) or else passed to the hook
  set with set_callback_error_hook (default: printed to stderr).
"""
from __future__ import annotations

import atexit
from typing import Callable

from . import _callbacks
from ._handles import open_objects
from .builder import ModelBuilder
from .device_time import DeviceTime
from .devices import Device, DeviceInfo, DeviceManager
from .engine import Engine
from .errors import (CancelledError, CorruptModelError, DeadlineExceededError, DeviceError,
                     FailedPreconditionError, InternalError, InvalidArgumentError,
                     LibraryNotFoundError, MrtError, NotFoundError, RecoveryAction,
                     ResourceExhaustedError, Status, UnavailableError, UnimplementedError,
                     VersionMismatchError)
from .executables import Executable, ExecutableInfo, HandleInfo, PipelineInfo, StepInfo
from .fusion import fuse_models
from .futures import Future
from .graph import Codelet, Graph, Target, TensorInfo, TileInterval, codelets
from .log import get_log_level, log_message, set_log_callback, set_log_level
from .models import AnchorInfo, Model, ModelInfo
from .onnx import compile_onnx, read_onnx_tensor_file
from .popef import BlobInfo, PopefFile, PopefListing, blob_type_name, list_popef
from .queue_entries import InputQueueEntry, OutputQueueEntry
from .queues import InputQueue, OutputQueue, QueueInfo, QueueManager
from .runner import DataDesc, FlushSelection, ModelRunner, RequestTimes, TensorMemory
from .sessions import AnchorPredicate, Session
from .system import (check_version, host_memory_limit, host_memory_reserved,
                     last_error_recovery_action, set_host_memory_limit, status_string, version,
                     version_tuple)
from .types import (ALL_REPLICAS, BATCHING_DISABLED, AnchorSet, BlobType, CallbackPolicy,
                    DataSource, DataType, FieldDirection, HandleKind, LaunchPolicy, LogLevel,
                    MatmulOperand, ModelOptions, Phase, PopefDataUsage, PrebuiltPredicate,
                    PredicateKind, ProfileFormat, SimulatedError, SyncType, TensorType)

__version__ = "0.1.0"


def set_callback_error_hook(hook: Callable[[str, BaseException], None] | None) -> None:
    """hook(where, exception) receives exceptions raised by callbacks that
    ran on library threads (done callbacks, log, queue and stream
    callbacks); None restores the default (printed to stderr)."""
    _callbacks.callback_error_hook = hook or _callbacks._default_callback_error_hook


def get_callback_error_hook() -> Callable[[str, BaseException], None]:
    return _callbacks.callback_error_hook


@atexit.register
def _shutdown() -> None:
    # Before the interpreter finalizes: stop the library's threads that call
    # into Python (runners, engines) and take back the log callback.
    for closable in list(open_objects):
        closable.close()
    try:
        set_log_callback(None)
    except MrtError:
        pass


__all__ = [name for name in dir() if not name.startswith("_") and name not in (
    "annotations", "atexit", "Callable", "open_objects")]

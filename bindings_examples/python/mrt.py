"""mrt - Python bindings of libmrt's C API (mrt_c.h) through ctypes.

Pure Python: no compiled extension. The library is found, in this order, at
the path in the environment variable MRT_LIBRARY, as libmrt.so.0 through the
dynamic loader (LD_LIBRARY_PATH, the ld.so cache), or by ctypes.util.

    import numpy as np, mrt
    with mrt.Model("mlp.popef") as model, mrt.ModelRunner(model) as runner:
        image = np.zeros((1, 784), np.float32)
        probs = runner.execute({"image": image})["probs"]

Rules the classes follow:
- Every handle is freed by close() (or a with block); __del__ frees it too as
  a safety net. Calling a method after close() raises MrtError
  (FAILED_PRECONDITION). numpy views of a model's TensorData or of a
  TensorMemory keep the library's memory alive on their own, so closing the
  Python object never leaves a view dangling.
- numpy arrays are passed to the library without copies: dtype, C
  contiguity, writability (outputs) and size are checked before calling C,
  and outputs are written into the arrays the caller provides.
- Callbacks (the log callback, Future.add_done_callback) are kept alive for
  as long as the library holds them and released when the library calls
  their user_data_free. An exception raised by a callback never reaches the
  library: it is passed to callback_error_hook (by default printed to
  stderr) and the library carries on.
- Failures raise MrtError(code, message) with the library's message.
"""

import atexit
import ctypes
import ctypes.util
import enum
import itertools
import os
import sys
import threading
import traceback
import weakref
from collections import namedtuple

import numpy as np

__all__ = [
    "Status", "MrtError", "Model", "ModelRunner", "Future", "TensorMemory", "DataDesc",
    "AnchorInfo", "ModelInfo", "library", "version", "set_log_callback", "set_log_level",
    "get_log_level", "log_message", "callback_error_hook",
]


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


class LogLevel(enum.IntEnum):
    OFF = 0
    ERR = 1
    WARN = 2
    INFO = 3
    DEBUG = 4
    TRACE = 5


class MrtError(Exception):
    """A failed libmrt call: `code` (a Status) and the library's `message`."""

    def __init__(self, code, message):
        try:
            code = Status(code)
        except ValueError:
            pass
        self.code = code
        self.message = message
        name = code.name if isinstance(code, Status) else str(int(code))
        super().__init__(f"MRT_{name}: {message}")


# ---------------------------------------------------------------------------
# Loading the library and declaring the functions used.

def _load_library():
    explicit = os.environ.get("MRT_LIBRARY")
    if explicit:
        return ctypes.CDLL(explicit)
    try:
        return ctypes.CDLL("libmrt.so.0")
    except OSError as first_error:
        found = ctypes.util.find_library("mrt")
        if found is None:
            raise OSError("libmrt not found: set MRT_LIBRARY to the path of libmrt.so.0 or add its "
                          f"directory to LD_LIBRARY_PATH ({first_error})") from None
        return ctypes.CDLL(found)


library = _load_library()

_status = ctypes.c_int32
_size = ctypes.c_size_t
_ptr = ctypes.c_void_p
_str = ctypes.c_char_p
_POINTER = ctypes.POINTER


def _last_error_message():
    return library.mrt_last_error_message().decode("utf-8", "replace")


def _raise_on_error(status, function, arguments):
    # errcheck runs right after the call, on the same thread, so the
    # thread-local message is the one of this call.
    if status != Status.OK:
        raise MrtError(status, _last_error_message())
    return status


# Marks, in the table below, the functions whose mrt_status return value is
# the outcome of the call (raised as MrtError when not OK).
_CHECKED = object()


def _declare(name, restype, *argtypes):
    function = getattr(library, name)
    function.argtypes = list(argtypes)
    if restype is _CHECKED:
        function.restype = _status
        function.errcheck = _raise_on_error
    else:
        function.restype = restype
    return function


# Callback types of mrt_c.h.
_LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_int, _str, _ptr)
_READY_FN = ctypes.CFUNCTYPE(None, ctypes.c_int32, _ptr)
_FREE_FN = ctypes.CFUNCTYPE(None, _ptr)


class _TensorView(ctypes.Structure):
    _fields_ = [("name", _str), ("data", _ptr), ("size_bytes", ctypes.c_uint64)]


class _DataDesc(ctypes.Structure):
    _fields_ = [("name", _str), ("size_in_bytes", ctypes.c_int64),
                ("shape", _POINTER(ctypes.c_int64)), ("rank", _size),
                ("data_type", ctypes.c_int32), ("popef_contains_tensor_data", ctypes.c_bool)]


class _ModelInfo(ctypes.Structure):
    _fields_ = [("struct_size", _size), ("executable", _str),
                ("replication_factor", ctypes.c_uint64), ("num_ipus", ctypes.c_uint64),
                ("ipu_version", ctypes.c_uint32), ("is_inference", ctypes.c_bool),
                ("seed_handle", _str), ("package_hash", _str), ("num_anchors", _size),
                ("num_programs", _size), ("num_engine_options", _size),
                ("num_device_options", _size), ("num_tensor_data", _size),
                ("num_feed_data", _size)]


class _AnchorInfo(ctypes.Structure):
    _fields_ = [("struct_size", _size), ("name", _str), ("handle", _str),
                ("data_type", ctypes.c_int32), ("shape", _POINTER(ctypes.c_int64)),
                ("rank", _size), ("size_in_bytes", ctypes.c_int64),
                ("programs", _POINTER(ctypes.c_uint64)), ("num_programs", _size),
                ("is_per_replica", ctypes.c_bool), ("tensor_type", ctypes.c_int32),
                ("data_source", ctypes.c_int32), ("remote_buffer", _str),
                ("remote_buffer_repeats", ctypes.c_int64)]


class _RunnerConfig(ctypes.Structure):
    _fields_ = [("struct_size", _size), ("replication_factor", ctypes.c_uint32),
                ("run_save_programs", ctypes.c_bool), ("thread_safe", ctypes.c_bool),
                ("frozen_inputs", _POINTER(_TensorView)), ("num_frozen_inputs", _size),
                ("save_programs_outputs", _ptr), ("num_save_programs_outputs", _size),
                ("replica_devices", _ptr), ("num_replica_devices", _size),
                ("device_wait_config", _ptr), ("check_package_hash", ctypes.c_bool),
                ("timeout_ns", ctypes.c_int64), ("validate_io_params", ctypes.c_bool),
                ("batching_dim", ctypes.c_uint32), ("auto_reset", ctypes.c_bool),
                ("max_look_ahead", ctypes.c_int64),
                ("ring_buffer_size_multiplier", ctypes.c_uint32),
                ("flush_on_waiting_outputs", ctypes.c_bool),
                ("batch_size_timeout_ns", ctypes.c_int64),
                ("data_parallel_timeout_ns", ctypes.c_int64),
                ("is_batch_size_timeout_enabled", ctypes.c_bool),
                ("request_tracepoints_buffer_size", _size), ("flush_callback", _ptr),
                ("flush_user_data", _ptr), ("flush_user_data_free", _ptr)]


# The plain (scalar) ModelRunner options a caller may set by keyword.
_RUNNER_OPTIONS = ("replication_factor", "run_save_programs", "thread_safe", "check_package_hash",
                   "timeout_ns", "validate_io_params", "batching_dim", "auto_reset",
                   "max_look_ahead", "ring_buffer_size_multiplier", "flush_on_waiting_outputs",
                   "batch_size_timeout_ns", "data_parallel_timeout_ns",
                   "is_batch_size_timeout_enabled", "request_tracepoints_buffer_size")
_BATCHING_DISABLED = 0xFFFFFFFF

_lib = {}
for _name, _restype, _argtypes in [
    ("mrt_status_string", _str, [_status]),
    ("mrt_last_error_message", _str, []),
    ("mrt_version_string", _str, []),
    ("mrt_check_version", _CHECKED, [ctypes.c_int, ctypes.c_int]),
    ("mrt_set_log_level", _CHECKED, [ctypes.c_int32]),
    ("mrt_get_log_level", ctypes.c_int, []),
    ("mrt_set_log_callback", _CHECKED, [_LOG_FN, _ptr, _FREE_FN]),
    ("mrt_log_message", _CHECKED, [ctypes.c_int32, _str]),
    ("mrt_model_load", _CHECKED, [_POINTER(_str), _size, _POINTER(_ptr)]),
    ("mrt_model_load_named", _CHECKED, [_POINTER(_str), _size, _str, _POINTER(_ptr)]),
    ("mrt_model_destroy", None, [_ptr]),
    ("mrt_model_tensor_data", _CHECKED, [_ptr, _str, _POINTER(_ptr), _POINTER(ctypes.c_uint64)]),
    ("mrt_model_get_info", _CHECKED, [_ptr, _POINTER(_ModelInfo)]),
    ("mrt_model_anchor", _CHECKED, [_ptr, _size, _POINTER(_AnchorInfo)]),
    ("mrt_model_anchor_by_name", _CHECKED, [_ptr, _str, _POINTER(_AnchorInfo)]),
    ("mrt_model_runner_config_init", None, [_ptr]),
    ("mrt_model_runner_create", _CHECKED, [_ptr, _POINTER(_RunnerConfig), _POINTER(_ptr)]),
    ("mrt_model_runner_destroy", None, [_ptr]),
    ("mrt_model_runner_execute_inputs", _CHECKED, [_ptr, _POINTER(_POINTER(_DataDesc)), _POINTER(_size)]),
    ("mrt_model_runner_execute_outputs", _CHECKED, [_ptr, _POINTER(_POINTER(_DataDesc)), _POINTER(_size)]),
    ("mrt_model_runner_model_inputs", _CHECKED, [_ptr, _POINTER(_POINTER(_DataDesc)), _POINTER(_size)]),
    ("mrt_model_runner_model_outputs", _CHECKED, [_ptr, _POINTER(_POINTER(_DataDesc)), _POINTER(_size)]),
    ("mrt_model_runner_execute", _CHECKED,
     [_ptr, _POINTER(_TensorView), _size, _POINTER(_TensorView), _size, ctypes.c_uint32]),
    ("mrt_model_runner_execute_async", _CHECKED,
     [_ptr, _POINTER(_TensorView), _size, _POINTER(_TensorView), _size, ctypes.c_uint32,
      _POINTER(_ptr)]),
    ("mrt_model_runner_execute_alloc", _CHECKED,
     [_ptr, _POINTER(_TensorView), _size, ctypes.c_uint32, _POINTER(_ptr)]),
    ("mrt_model_runner_insert_simulated_error", _CHECKED, [_ptr, ctypes.c_int32, _str, ctypes.c_uint32]),
    ("mrt_tensor_memory_count", _CHECKED, [_ptr, _POINTER(_size)]),
    ("mrt_tensor_memory_get", _CHECKED, [_ptr, _size, _POINTER(_TensorView)]),
    ("mrt_tensor_memory_find", _CHECKED, [_ptr, _str, _POINTER(_TensorView)]),
    ("mrt_tensor_memory_destroy", None, [_ptr]),
    ("mrt_future_is_ready", ctypes.c_bool, [_ptr]),
    # wait returns the request's status, not an error of the call: checked by hand.
    ("mrt_future_wait", ctypes.c_int32, [_ptr, ctypes.c_int64]),
    ("mrt_future_status", _CHECKED, [_ptr, _POINTER(_status)]),
    ("mrt_future_error_message", _str, [_ptr]),
    ("mrt_future_on_ready", _CHECKED, [_ptr, _READY_FN, _ptr, _FREE_FN]),
    ("mrt_future_destroy", None, [_ptr]),
]:
    _lib[_name] = _declare(_name, _restype, *_argtypes)
del _name, _restype, _argtypes

# This module is written against mrt_c.h 0.1.
_lib["mrt_check_version"](0, 1)


def version():
    """The loaded library's version, "MAJOR.MINOR.PATCH"."""
    return _lib["mrt_version_string"]().decode()


def status_string(code):
    return _lib["mrt_status_string"](int(code)).decode()


# ---------------------------------------------------------------------------
# Callbacks: Python objects the library holds, by id, until user_data_free.

def _default_callback_error_hook(where, exception):
    print(f"mrt: exception in {where} (ignored; the library carries on):", file=sys.stderr)
    traceback.print_exception(type(exception), exception, exception.__traceback__,
                              file=sys.stderr)


# Called as callback_error_hook(where, exception) when a callback raises;
# replace it to collect the errors (it must not raise itself).
callback_error_hook = _default_callback_error_hook

_held = {}                    # id -> what the library holds through user_data
_next_id = itertools.count(1)


def _hold(obj):
    key = next(_next_id)
    _held[key] = obj
    return key


def _report(where, exception):
    try:
        callback_error_hook(where, exception)
    except BaseException:  # the hook failed too: last resort, never into C
        traceback.print_exc(file=sys.stderr)


# Whether this thread is inside a callback from the library. A runner must
# not be destroyed there: destroying joins the device thread, which may be
# this very thread (a callback dropping the last reference to a runner).
_callback_state = threading.local()


class _InCallback:
    def __enter__(self):
        _callback_state.depth = getattr(_callback_state, "depth", 0) + 1

    def __exit__(self, *exc_info):
        _callback_state.depth -= 1


def _in_library_callback():
    return getattr(_callback_state, "depth", 0) > 0


@_FREE_FN
def _release_held(user_data):
    with _InCallback():
        _held.pop(user_data, None)


@_LOG_FN
def _log_trampoline(level, message, user_data):
    with _InCallback():
        try:
            function = _held[user_data]
            function(LogLevel(level), message.decode("utf-8", "replace"))
        except BaseException as exception:
            _report("the log callback", exception)


@_READY_FN
def _ready_trampoline(status, user_data):
    with _InCallback():
        try:
            entry = _held[user_data]
            if entry is not None and entry.function is not None:
                entry.function(status)
        except BaseException as exception:
            _report("a Future done callback", exception)


def set_log_callback(function):
    """Sends libmrt's log messages to function(level: LogLevel, message: str),
    called on whichever thread logs, never two calls at once; None restores
    the MRT_LOG_DEST destination. The previous function is released once its
    last call has returned."""
    if function is None:
        _lib["mrt_set_log_callback"](_LOG_FN(), None, _FREE_FN())
        return
    if not callable(function):
        raise MrtError(Status.INVALID_ARGUMENT, f"log callback: {function!r} is not callable")
    _lib["mrt_set_log_callback"](_log_trampoline, _hold(function), _release_held)


def set_log_level(level):
    _lib["mrt_set_log_level"](int(level))


def get_log_level():
    return LogLevel(_lib["mrt_get_log_level"]())


def log_message(level, message):
    _lib["mrt_log_message"](int(level), message.encode())


# ---------------------------------------------------------------------------
# Handles.

class _Handle:
    """Owns one library pointer; destroyed once, by release() or when the
    last Python reference (the object or a numpy view) goes."""

    def __init__(self, pointer, destroy):
        self.pointer = pointer
        self._destroy = destroy

    def release(self):
        pointer, self.pointer = self.pointer, None
        if pointer:
            self._destroy(pointer)

    def __del__(self):
        self.release()


class _Closable:
    _kind = "object"

    def _pointer(self):
        handle = getattr(self, "_handle", None)
        if handle is None or handle.pointer is None:
            raise MrtError(Status.FAILED_PRECONDITION, f"{self._kind} is closed")
        return handle.pointer

    @property
    def closed(self):
        handle = getattr(self, "_handle", None)
        return handle is None or handle.pointer is None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __del__(self):
        self.close()


_DTYPES = {0: np.bool_, 1: np.uint8, 2: np.int8, 3: np.uint16, 4: np.int16, 5: np.int32,
           6: np.uint32, 7: np.int64, 8: np.uint64, 9: np.float16, 10: np.float32, 11: np.float64}


def _dtype(data_type):
    return np.dtype(_DTYPES.get(data_type, np.uint8))


def _borrowed_array(address, size, dtype, shape, owner):
    """A read-only numpy view of library memory that keeps `owner` (the
    handle the memory belongs to) alive."""
    buffer = (ctypes.c_char * size).from_address(address) if size else bytearray()
    if size:
        buffer._mrt_owner = owner
    array = np.frombuffer(buffer, dtype=dtype)
    if shape is not None and int(np.prod(shape)) == array.size:
        array = array.reshape(shape)
    array.flags.writeable = False
    return array


ModelInfo = namedtuple("ModelInfo", "executable replication_factor num_ipus ipu_version "
                       "is_inference num_anchors num_tensor_data num_feed_data")
AnchorInfo = namedtuple("AnchorInfo", "name handle dtype shape size_in_bytes is_input data_source")
DataDesc = namedtuple("DataDesc", "name size_in_bytes shape dtype popef_contains_tensor_data")


def _paths_argument(paths):
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    encoded = [os.fsencode(p) for p in paths]
    return (_str * len(encoded))(*encoded), len(encoded)


class Model(_Closable):
    """A model loaded from PopEF files: Model("mlp.popef") or
    Model(["a.popef", "b.popef"], executable="name")."""
    _kind = "Model"

    def __init__(self, paths, executable=None):
        array, count = _paths_argument(paths)
        out = _ptr()
        if executable is None:
            _lib["mrt_model_load"](array, count, ctypes.byref(out))
        else:
            _lib["mrt_model_load_named"](array, count, executable.encode(), ctypes.byref(out))
        self._handle = _Handle(out.value, _lib["mrt_model_destroy"])

    def close(self):
        """Drops this object's reference: the model is freed at once unless a
        tensor_data() view still uses its memory (then when the last goes)."""
        self._handle = None

    def info(self):
        info = _ModelInfo(struct_size=ctypes.sizeof(_ModelInfo))
        _lib["mrt_model_get_info"](self._pointer(), ctypes.byref(info))
        return ModelInfo(info.executable.decode(), info.replication_factor, info.num_ipus,
                         info.ipu_version, info.is_inference, info.num_anchors,
                         info.num_tensor_data, info.num_feed_data)

    @staticmethod
    def _anchor_tuple(anchor):
        shape = tuple(anchor.shape[i] for i in range(anchor.rank))
        return AnchorInfo(anchor.name.decode(), anchor.handle.decode(), _dtype(anchor.data_type),
                          shape, anchor.size_in_bytes, anchor.tensor_type == 0, anchor.data_source)

    def anchors(self):
        pointer = self._pointer()
        result = []
        for index in range(self.info().num_anchors):
            anchor = _AnchorInfo(struct_size=ctypes.sizeof(_AnchorInfo))
            _lib["mrt_model_anchor"](pointer, index, ctypes.byref(anchor))
            result.append(self._anchor_tuple(anchor))
        return result

    def anchor(self, name):
        anchor = _AnchorInfo(struct_size=ctypes.sizeof(_AnchorInfo))
        _lib["mrt_model_anchor_by_name"](self._pointer(), name.encode(), ctypes.byref(anchor))
        return self._anchor_tuple(anchor)

    def tensor_data(self, name):
        """The TensorData blob `name` as a read-only numpy view of the
        memory-mapped file (no copy), with its anchor's dtype and shape."""
        pointer = self._pointer()
        data, size = _ptr(), ctypes.c_uint64()
        _lib["mrt_model_tensor_data"](pointer, name.encode(), ctypes.byref(data), ctypes.byref(size))
        try:
            anchor = self.anchor(name)
            dtype, shape = anchor.dtype, anchor.shape
        except MrtError:
            dtype, shape = np.dtype(np.uint8), None
        return _borrowed_array(data.value, size.value, dtype, shape, self._handle)


def _destroy_runner(pointer):
    if _in_library_callback():
        # Not on a library thread: hand it to a Python thread of its own
        # (not a daemon, so the interpreter waits for it at exit).
        threading.Thread(target=_lib["mrt_model_runner_destroy"], args=(pointer,),
                         name="mrt-runner-destroy").start()
    else:
        _lib["mrt_model_runner_destroy"](pointer)


# Runners still open at interpreter exit are closed before Python finalizes,
# so that no device thread calls into a finished interpreter.
_open_runners = weakref.WeakSet()


class ModelRunner(_Closable):
    """Serves inference requests on a model. ModelRunner(model_or_paths,
    **options): options are ModelRunnerConfig fields (replication_factor,
    thread_safe, timeout_ns, batching_dim, auto_reset, ...)."""
    _kind = "ModelRunner"

    def __init__(self, model, **options):
        unknown = sorted(set(options) - set(_RUNNER_OPTIONS))
        if unknown:
            raise MrtError(Status.INVALID_ARGUMENT,
                           f"ModelRunner: unknown option(s) {', '.join(unknown)}; known: "
                           f"{', '.join(_RUNNER_OPTIONS)}")
        owned_model = None
        if not isinstance(model, Model):
            owned_model = model = Model(model)
        # A newer library may have a longer config: let init write into room
        # to spare, then tell the library how much of it this module knows.
        room = ctypes.create_string_buffer(max(4096, 2 * ctypes.sizeof(_RunnerConfig)))
        _lib["mrt_model_runner_config_init"](ctypes.addressof(room))
        config = _RunnerConfig.from_buffer_copy(room.raw[:ctypes.sizeof(_RunnerConfig)])
        if config.struct_size < ctypes.sizeof(_RunnerConfig):
            raise MrtError(Status.VERSION_MISMATCH,
                           f"libmrt's mrt_model_runner_config has {config.struct_size} bytes, "
                           f"this module needs {ctypes.sizeof(_RunnerConfig)}")
        config.struct_size = ctypes.sizeof(_RunnerConfig)
        for key, value in options.items():
            if key == "batching_dim" and value is None:
                value = _BATCHING_DISABLED
            setattr(config, key, value)
        out = _ptr()
        try:
            _lib["mrt_model_runner_create"](model._pointer(), ctypes.byref(config), ctypes.byref(out))
        finally:
            if owned_model is not None:
                owned_model.close()  # the runner keeps what it needs of it
        self._handle = _Handle(out.value, _destroy_runner)
        self._batching = config.batching_dim != _BATCHING_DISABLED
        self._batching_dim = config.batching_dim
        self.execute_inputs = self._descs("mrt_model_runner_execute_inputs")
        self.execute_outputs = self._descs("mrt_model_runner_execute_outputs")
        self.model_inputs = self._descs("mrt_model_runner_model_inputs")
        self.model_outputs = self._descs("mrt_model_runner_model_outputs")
        _open_runners.add(self)

    def close(self):
        """Destroys the runner: pending requests complete with CANCELLED.
        Called from a library callback (a done callback runs on the device
        thread), the destruction happens on a thread of its own, after the
        callback has returned."""
        handle = getattr(self, "_handle", None)
        if handle is not None:
            handle.release()
        runners = globals().get("_open_runners")  # None while the interpreter exits
        if runners is not None:
            runners.discard(self)

    def _descs(self, function):
        descs, count = _POINTER(_DataDesc)(), _size()
        _lib[function](self._pointer(), ctypes.byref(descs), ctypes.byref(count))
        result = {}
        for i in range(count.value):
            d = descs[i]
            shape = tuple(d.shape[k] for k in range(d.rank))
            result[d.name.decode()] = DataDesc(d.name.decode(), d.size_in_bytes, shape,
                                               _dtype(d.data_type), d.popef_contains_tensor_data)
        return result

    def _size_ok(self, desc, nbytes):
        if not self._batching:
            return nbytes == desc.size_in_bytes
        batch = desc.shape[self._batching_dim] if len(desc.shape) > self._batching_dim else 1
        sample = desc.size_in_bytes // max(batch, 1)
        return nbytes > 0 and sample > 0 and nbytes % sample == 0

    def _views(self, tensors, descs, direction, writable):
        """A C array of mrt_tensor_view over the numpy arrays, checked first."""
        if not isinstance(tensors, dict):
            raise MrtError(Status.INVALID_ARGUMENT,
                           f"{direction}s: expected a dict of name -> numpy array, got "
                           f"{type(tensors).__name__}")
        views = (_TensorView * max(len(tensors), 1))()
        for i, (name, array) in enumerate(tensors.items()):
            what = f"{direction} '{name}'"
            if not isinstance(name, str):
                raise MrtError(Status.INVALID_ARGUMENT, f"{direction} name {name!r} is not a str")
            if not isinstance(array, np.ndarray):
                raise MrtError(Status.INVALID_ARGUMENT,
                               f"{what}: expected a numpy array, got {type(array).__name__}")
            if not array.flags.c_contiguous:
                raise MrtError(Status.INVALID_ARGUMENT,
                               f"{what}: the array must be C-contiguous (np.ascontiguousarray)")
            if writable and not array.flags.writeable:
                raise MrtError(Status.INVALID_ARGUMENT, f"{what}: the array is read-only")
            desc = descs.get(name)
            # Unknown names go to the library, which names what it expected.
            if desc is not None:
                if array.dtype != desc.dtype:
                    raise MrtError(Status.INVALID_ARGUMENT,
                                   f"{what}: expected dtype {desc.dtype}, got {array.dtype}")
                if not self._size_ok(desc, array.nbytes):
                    raise MrtError(Status.INVALID_ARGUMENT,
                                   f"{what}: expected {desc.size_in_bytes} bytes "
                                   f"(shape {list(desc.shape)}), got {array.nbytes}")
            views[i].name = name.encode()
            views[i].data = array.ctypes.data
            views[i].size_bytes = array.nbytes
        return views

    def _outputs_for(self, outputs):
        if outputs is None:
            return {d.name: np.empty(d.shape, d.dtype) for d in self.execute_outputs.values()}
        return outputs

    def execute(self, inputs, outputs=None, replica=0):
        """Runs one request and returns the outputs dict once they are
        written: `outputs` (arrays the caller provides) or new arrays."""
        pointer = self._pointer()
        outputs = self._outputs_for(outputs)
        in_views = self._views(inputs, self.model_inputs, "input", False)
        out_views = self._views(outputs, self.execute_outputs, "output", True)
        _lib["mrt_model_runner_execute"](pointer, in_views, len(inputs), out_views, len(outputs),
                                         replica)
        return outputs

    def execute_async(self, inputs, outputs=None, replica=0):
        """Queues one request; the Future's result() gives the outputs. The
        arrays are kept alive until the request is done, even if the Future
        is closed first; do not touch them before then."""
        pointer = self._pointer()
        outputs = self._outputs_for(outputs)
        in_views = self._views(inputs, self.model_inputs, "input", False)
        out_views = self._views(outputs, self.execute_outputs, "output", True)
        out = _ptr()
        _lib["mrt_model_runner_execute_async"](pointer, in_views, len(inputs), out_views,
                                               len(outputs), replica, ctypes.byref(out))
        future = Future(out.value, outputs)
        # The library holds the buffers until the request is done: so does
        # the registry, released by user_data_free after the request.
        future._register(_Pending(None, (inputs, outputs, in_views, out_views)))
        return future

    def execute_alloc(self, inputs, replica=0):
        """Runs one request with outputs in memory the library allocates."""
        pointer = self._pointer()
        in_views = self._views(inputs, self.model_inputs, "input", False)
        out = _ptr()
        _lib["mrt_model_runner_execute_alloc"](pointer, in_views, len(inputs), replica,
                                               ctypes.byref(out))
        return TensorMemory(out.value, self.execute_outputs)

    def insert_simulated_error(self, step_name, error=0, replica=0):
        """Makes the simulated device of `replica` fail once at the program
        step `step_name` of its next run (error: 0 tile exception, 1 memory
        parity, 2 exchange error, 3 host link error); for testing."""
        _lib["mrt_model_runner_insert_simulated_error"](self._pointer(), error, step_name.encode(),
                                                        replica)


class _Pending:
    """What the library holds through one on_ready registration."""

    def __init__(self, function, keep_alive=None):
        self.function = function
        self.keep_alive = keep_alive


class Future(_Closable):
    """The pending outcome of ModelRunner.execute_async."""
    _kind = "Future"

    def __init__(self, pointer, outputs):
        self._handle = _Handle(pointer, _lib["mrt_future_destroy"])
        self._outputs = outputs

    def close(self):
        """Frees the handle; a pending request still completes safely."""
        handle = getattr(self, "_handle", None)
        if handle is not None:
            handle.release()

    def _register(self, pending):
        _lib["mrt_future_on_ready"](self._pointer(), _ready_trampoline, _hold(pending),
                                    _release_held)

    def add_done_callback(self, function):
        """Calls function(status: int) once the request is done: at once if
        it is, else on the library thread that completes it."""
        if not callable(function):
            raise MrtError(Status.INVALID_ARGUMENT, f"done callback: {function!r} is not callable")
        self._register(_Pending(function))

    def done(self):
        return bool(_lib["mrt_future_is_ready"](self._pointer()))

    def wait(self, timeout=None):
        """Waits (timeout in seconds, None for ever); True if done."""
        nanoseconds = -1 if timeout is None else max(0, int(timeout * 1e9))
        status = _lib["mrt_future_wait"](self._pointer(), nanoseconds)
        if status == Status.INVALID_ARGUMENT and not self.done():
            raise MrtError(status, _last_error_message())
        return status != Status.DEADLINE_EXCEEDED or self.done()

    def status(self):
        """The request's Status; MrtError(FAILED_PRECONDITION) while pending."""
        request = _status()
        _lib["mrt_future_status"](self._pointer(), ctypes.byref(request))
        return Status(request.value)

    def error_message(self):
        return _lib["mrt_future_error_message"](self._pointer()).decode("utf-8", "replace")

    def result(self, timeout=None):
        """The outputs dict once the request succeeded; MrtError with the
        request's code and message if it failed, DEADLINE_EXCEEDED if it is
        not done in time."""
        if not self.wait(timeout):
            raise MrtError(Status.DEADLINE_EXCEEDED, f"request not done within {timeout} s")
        status = self.status()
        if status != Status.OK:
            raise MrtError(status, self.error_message())
        return self._outputs


class TensorMemory(_Closable):
    """Outputs allocated by the library (ModelRunner.execute_alloc).
    memory["probs"] is a read-only numpy view (no copy) that stays valid
    after close()."""
    _kind = "TensorMemory"

    def __init__(self, pointer, descs):
        self._handle = _Handle(pointer, _lib["mrt_tensor_memory_destroy"])
        self._descs = descs

    def close(self):
        self._handle = None

    def __len__(self):
        count = _size()
        _lib["mrt_tensor_memory_count"](self._pointer(), ctypes.byref(count))
        return count.value

    def names(self):
        pointer = self._pointer()
        view = _TensorView()
        names = []
        for index in range(len(self)):
            _lib["mrt_tensor_memory_get"](pointer, index, ctypes.byref(view))
            names.append(view.name.decode())
        return names

    def __getitem__(self, name):
        view = _TensorView()
        _lib["mrt_tensor_memory_find"](self._pointer(), name.encode(), ctypes.byref(view))
        desc = self._descs.get(name)
        dtype = desc.dtype if desc is not None else np.dtype(np.uint8)
        shape = desc.shape if desc is not None else None
        return _borrowed_array(view.data, view.size_bytes, dtype, shape, self._handle)


@atexit.register
def _shutdown():
    # Before the interpreter finalizes: stop device threads and take back
    # the log callback, so that the library never calls into a dead Python.
    for runner in list(_open_runners):
        runner.close()
    try:
        set_log_callback(None)
    except MrtError:
        pass

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
  stderr) and the library carries on. So do stream, print and compile
  progress callbacks (Engine.connect_stream, set_print_callback,
  Graph.compile(progress=...)).
- Building models (Target, Graph, Executable, Engine, ModelBuilder): graph
  objects (tensors, programs, ...) are the library's ids as plain ints;
  build_model.py is the example.
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
    # Building models.
    "DataType", "Phase", "DataSource", "MatmulOperand", "SyncType", "HandleKind",
    "FieldDirection", "SimulatedError", "ProfileFormat", "ModelOptions", "ALL_REPLICAS",
    "Target", "Graph", "Codelet", "codelets", "TensorInfo", "TileInterval", "Executable",
    "ExecutableInfo", "StepInfo", "HandleInfo", "DeviceManager", "Device", "Engine",
    "ModelBuilder",
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

    @property
    def status(self):
        """The same as `code`."""
        return self.code


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
    ("mrt_model_runner_config_init_sized", _CHECKED, [_ptr, _size]),
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


def _destroyer(function, thread_name):
    """The destroy function of a _Handle that calls the library's `function`.
    Called from a library callback (on a device thread), it hands the call to
    a Python thread of its own named thread_name (not a daemon, so the
    interpreter waits for it at exit), after the callback has returned."""
    def destroy(pointer):
        if _in_library_callback():
            threading.Thread(target=_lib[function], args=(pointer,), name=thread_name).start()
        else:
            _lib[function](pointer)
    return destroy


def _release_tracked(closable, registry):
    """Releases closable's handle, if any, and removes it from the module's
    weak set named `registry` (the one _shutdown closes at exit)."""
    handle = getattr(closable, "_handle", None)
    if handle is not None:
        handle.release()
    tracked = globals().get(registry)  # None while the interpreter exits
    if tracked is not None:
        tracked.discard(closable)


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

    @classmethod
    def _adopt(cls, pointer):
        model = object.__new__(cls)
        model._handle = _Handle(pointer, _lib["mrt_model_destroy"])
        return model

    @classmethod
    def from_bytes(cls, data) -> "Model":
        """A model from the bytes of a PopEF file (copied, checked as files are)."""
        data = bytes(data)
        out = _ptr()
        _lib["mrt_model_load_from_memory"](data, len(data), ctypes.byref(out))
        return cls._adopt(out.value)

    def write(self, path) -> None:
        """Writes the model as one PopEF file (created or truncated)."""
        _lib["mrt_model_write"](self._pointer(), os.fsencode(path))

    def write_split(self, model_path, data_path) -> None:
        """Writes metadata and executable to model_path and the data blobs
        to data_path; Model([model_path, data_path]) reads them back."""
        _lib["mrt_model_write_split"](self._pointer(), os.fsencode(model_path),
                                      os.fsencode(data_path))

    def to_bytes(self) -> bytes:
        """The bytes write() writes to a file."""
        pointer, size = self._pointer(), _size()
        _lib["mrt_model_write_to_memory"](pointer, None, 0, ctypes.byref(size))
        buffer = ctypes.create_string_buffer(max(size.value, 1))
        _lib["mrt_model_write_to_memory"](pointer, buffer, size.value, ctypes.byref(size))
        return buffer.raw[:size.value]

    def executable(self) -> "Executable":
        """The model's executable (deserialized and verified)."""
        return Executable.from_model(self)

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


_destroy_runner = _destroyer("mrt_model_runner_destroy", "mrt-runner-destroy")


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
        # init_sized writes the defaults of the fields this module knows, and
        # no byte beyond them whatever the library's version.
        config = _RunnerConfig()
        _lib["mrt_model_runner_config_init_sized"](ctypes.byref(config), ctypes.sizeof(config))
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
        _release_tracked(self, "_open_runners")

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


# ---------------------------------------------------------------------------
# Building models: targets, graphs, programs, ops, compiling, executables,
# engines, devices and writing PopEF models (mrt_c.h "Building models").
#
# Graph objects (tensors, compute sets, vertices, streams, remote buffers,
# functions, programs) are the library's 64-bit ids as plain Python ints,
# owned by their graph; a wrong or stale id raises MrtError from the library.

Tensor = int
ComputeSet = int
Vertex = int
Stream = int
RemoteBuffer = int
Function = int
Program = int

ALL_REPLICAS = 0xFFFFFFFF


class DataType(enum.IntEnum):
    """mrt_data_type (also PopEF's values)."""
    BOOL = 0
    U8 = 1
    S8 = 2
    U16 = 3
    S16 = 4
    S32 = 5
    U32 = 6
    S64 = 7
    U64 = 8
    F16 = 9
    F32 = 10
    F64 = 11


class Phase(enum.IntEnum):
    LOAD = 0
    MAIN = 1
    SAVE = 2


class DataSource(enum.IntEnum):
    NONE = 0
    TENSOR_DATA = 1
    FEED_DATA = 2


class MatmulOperand(enum.IntEnum):
    LHS = 0
    RHS = 1


class SyncType(enum.IntEnum):
    INTERNAL = 0
    EXTERNAL = 1
    GLOBAL = 2


class HandleKind(enum.IntEnum):
    HOST_TO_DEVICE = 0
    DEVICE_TO_HOST = 1
    REMOTE_BUFFER = 2
    HOST_WRITE = 3
    HOST_READ = 4


class FieldDirection(enum.IntEnum):
    IN = 0
    OUT = 1
    INOUT = 2


class SimulatedError(enum.IntEnum):
    TILE_EXCEPTION = 0
    MEMORY_PARITY = 1
    EXCHANGE_ERROR = 2
    HOST_LINK_ERROR = 3


class ProfileFormat(enum.IntEnum):
    SUMMARY = 0
    INTERVALS = 1
    TRACE = 2


class ModelOptions(enum.IntEnum):
    ENGINE = 0
    DEVICE = 1


_DATA_TYPES = {np.dtype(v): k for k, v in _DTYPES.items()}


def _data_type(value):
    """An mrt_data_type from a DataType/int or anything np.dtype() takes."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    try:
        return _DATA_TYPES[np.dtype(value)]
    except (TypeError, KeyError):
        raise MrtError(Status.INVALID_ARGUMENT, f"no mrt data type for {value!r}") from None


def _name(name):
    return None if name is None else name.encode()


def _u64_array(values):
    values = [int(v) for v in values]
    return (ctypes.c_uint64 * max(len(values), 1))(*values), len(values)


def _i64_array(values):
    values = [int(v) for v in values]
    return (ctypes.c_int64 * max(len(values), 1))(*values), len(values)


def _options_argument(options):
    """A NULL-terminated key/value char* array from a dict (None: NULL)."""
    if not options:
        return None
    items = []
    for key, value in options.items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        items += [str(key).encode(), str(value).encode()]
    return (_str * (len(items) + 1))(*items, None)


def _contiguous(array, what, writable=False):
    if not isinstance(array, np.ndarray):
        raise MrtError(Status.INVALID_ARGUMENT,
                       f"{what}: expected a numpy array, got {type(array).__name__}")
    if not array.flags.c_contiguous:
        raise MrtError(Status.INVALID_ARGUMENT,
                       f"{what}: the array must be C-contiguous (np.ascontiguousarray)")
    if writable and not array.flags.writeable:
        raise MrtError(Status.INVALID_ARGUMENT, f"{what}: the array is read-only")
    return array


class _Target(ctypes.Structure):
    _fields_ = [("struct_size", _size), ("name", _str), ("ipu_version", ctypes.c_uint32),
                ("num_ipus", ctypes.c_uint32), ("tiles_per_ipu", ctypes.c_uint32),
                ("worker_contexts_per_tile", ctypes.c_uint32), ("bytes_per_tile", ctypes.c_uint64)] + [
        (field, ctypes.c_double) for field in (
            "clock_hz", "f32_matmul_flops_per_cycle", "f16_matmul_flops_per_cycle",
            "f32_vector_width", "f16_vector_width", "int_vector_width",
            "transcendental_cycles_per_element", "vertex_overhead_cycles",
            "exchange_bytes_per_cycle", "host_link_bytes_per_second", "ipu_link_bytes_per_second",
            "internal_sync_cycles", "external_sync_cycles", "host_sync_cycles")]


class _TensorInfo(ctypes.Structure):
    _fields_ = [("struct_size", _size), ("data_type", ctypes.c_int32), ("rank", _size),
                ("shape", _POINTER(ctypes.c_uint64)), ("num_elements", ctypes.c_uint64),
                ("num_bytes", ctypes.c_uint64), ("is_contiguous", ctypes.c_bool),
                ("is_constant", ctypes.c_bool)]


class _TileInterval(ctypes.Structure):
    _fields_ = [("begin", ctypes.c_uint64), ("end", ctypes.c_uint64), ("tile", ctypes.c_uint32)]


class _CodeletInfo(ctypes.Structure):
    _fields_ = [("struct_size", _size), ("name", _str), ("description", _str),
                ("num_fields", _size), ("num_attributes", _size)]


class _ExecutableInfo(ctypes.Structure):
    _fields_ = [("struct_size", _size), ("hash", ctypes.c_uint64),
                ("replication_factor", ctypes.c_uint32), ("num_ipus", ctypes.c_uint32),
                ("num_programs", ctypes.c_uint32), ("num_tiles", ctypes.c_uint32),
                ("num_streams", _size), ("num_remote_buffers", _size), ("num_host_reads", _size),
                ("num_host_writes", _size), ("num_steps", _size),
                ("total_memory_bytes", ctypes.c_uint64), ("max_tile_memory_bytes", ctypes.c_uint64),
                ("max_memory_tile", ctypes.c_uint32), ("bytes_per_tile", ctypes.c_uint64)]


class _StepInfo(ctypes.Structure):
    _fields_ = [("struct_size", _size), ("kind", _str), ("name", _str),
                ("modelled_cycles", ctypes.c_uint64)]


class _HandleInfo(ctypes.Structure):
    _fields_ = [("struct_size", _size), ("handle", _str), ("kind", ctypes.c_int32),
                ("data_type", ctypes.c_int32), ("num_elements", ctypes.c_uint64),
                ("repeats", ctypes.c_uint64)]


class _AnchorConfig(ctypes.Structure):
    _fields_ = [("struct_size", _size), ("name", _str), ("handle", _str),
                ("shape", _POINTER(ctypes.c_int64)), ("rank", _size),
                ("programs", _POINTER(ctypes.c_uint64)), ("num_programs", _size),
                ("is_per_replica", ctypes.c_bool), ("data_source", ctypes.c_int32)]


_PROGRESS_FN = ctypes.CFUNCTYPE(None, ctypes.c_int32, ctypes.c_int32, _ptr)
_STREAM_FN = ctypes.CFUNCTYPE(None, _ptr, ctypes.c_uint64, ctypes.c_uint32, _ptr)
_PRINT_FN = ctypes.CFUNCTYPE(None, _str, _ptr)


class _OnnxInputShape(ctypes.Structure):
    _fields_ = [("name", _str), ("dims", _POINTER(ctypes.c_int64)), ("rank", _size)]


class _OnnxOptions(ctypes.Structure):
    _fields_ = [("struct_size", _size), ("target", _str), ("custom_target", _ptr),
                ("num_ipus", ctypes.c_uint32), ("replication_factor", ctypes.c_uint32),
                ("batch_size", ctypes.c_int64), ("model_name", _str),
                ("progress", _PROGRESS_FN), ("user_data", _ptr), ("user_data_free", _FREE_FN),
                ("input_shapes", _POINTER(_OnnxInputShape)), ("num_input_shapes", _size),
                ("precision", ctypes.c_int32)]


_u64 = ctypes.c_uint64
_u32 = ctypes.c_uint32
_i32 = ctypes.c_int32
_i64 = ctypes.c_int64
_P = _POINTER
_OPTS = _POINTER(_str)
_SHAPE = _POINTER(_u64)

for _name_, _restype, _argtypes in [
    # Devices.
    ("mrt_device_manager_create", _CHECKED, [_P(_ptr)]),
    ("mrt_device_manager_destroy", None, [_ptr]),
    ("mrt_device_manager_device_count", _CHECKED, [_ptr, _P(_size)]),
    ("mrt_device_manager_ipu_hardware_version", _CHECKED, [_ptr, _P(_i64)]),
    ("mrt_device_manager_get_device", _CHECKED, [_ptr, _i64, _OPTS, _ptr, ctypes.c_bool, _P(_ptr)]),
    ("mrt_device_manager_create_ipu_model_device", _CHECKED, [_ptr, _i64, _i64, _i64, _P(_ptr)]),
    ("mrt_device_manager_create_small_ipu_model_device", _CHECKED, [_ptr, _i64, _i64, _P(_ptr)]),
    ("mrt_device_destroy", None, [_ptr]),
    ("mrt_device_ipu_version", _CHECKED, [_ptr, _P(_i64)]),
    ("mrt_device_id", _CHECKED, [_ptr, _P(_i64)]),
    ("mrt_device_num_ipus", _CHECKED, [_ptr, _P(_i64)]),
    # Targets and graphs.
    ("mrt_target_init_sized", _CHECKED, [_str, _u32, _P(_Target), _size]),
    ("mrt_graph_create", _CHECKED, [_P(_Target), _u32, _P(_ptr)]),
    ("mrt_graph_destroy", None, [_ptr]),
    ("mrt_graph_get_target", _CHECKED, [_ptr, _P(_Target)]),
    ("mrt_graph_replication_factor", _CHECKED, [_ptr, _P(_u32)]),
    ("mrt_graph_add_variable", _CHECKED, [_ptr, _i32, _SHAPE, _size, _str, _P(_u64)]),
    ("mrt_graph_add_constant", _CHECKED, [_ptr, _i32, _SHAPE, _size, _ptr, _u64, _str, _P(_u64)]),
    ("mrt_graph_add_constant_filled", _CHECKED,
     [_ptr, _i32, _SHAPE, _size, ctypes.c_double, _str, _P(_u64)]),
    ("mrt_graph_tensor_info", _CHECKED, [_ptr, _u64, _P(_TensorInfo)]),
    ("mrt_graph_slice", _CHECKED, [_ptr, _u64, _u64, _u64, _u32, _P(_u64)]),
    ("mrt_graph_index", _CHECKED, [_ptr, _u64, _u64, _P(_u64)]),
    ("mrt_graph_reshape", _CHECKED, [_ptr, _u64, _SHAPE, _size, _P(_u64)]),
    ("mrt_graph_flatten", _CHECKED, [_ptr, _u64, _P(_u64)]),
    ("mrt_graph_transpose", _CHECKED, [_ptr, _u64, _P(_u64)]),
    ("mrt_graph_concat", _CHECKED, [_ptr, _SHAPE, _size, _u32, _P(_u64)]),
    ("mrt_graph_set_tile_mapping", _CHECKED, [_ptr, _u64, _u32]),
    ("mrt_graph_map_linearly", _CHECKED, [_ptr, _u64, _u64, _u32, _u32]),
    ("mrt_graph_tile_mapping", _CHECKED, [_ptr, _u64, _P(_TileInterval), _size, _P(_size)]),
    ("mrt_graph_add_compute_set", _CHECKED, [_ptr, _str, _P(_u64)]),
    ("mrt_graph_add_vertex", _CHECKED, [_ptr, _u64, _str, _u32, _P(_u64)]),
    ("mrt_graph_connect", _CHECKED, [_ptr, _u64, _str, _u64]),
    ("mrt_graph_set_vertex_attribute", _CHECKED, [_ptr, _u64, _str, _P(ctypes.c_double), _size]),
    ("mrt_codelet_count", _size, []),
    ("mrt_codelet_get_info", _CHECKED, [_size, _P(_CodeletInfo)]),
    ("mrt_codelet_field", _CHECKED, [_size, _size, _P(_str), _P(_i32)]),
    ("mrt_codelet_attribute", _CHECKED,
     [_size, _size, _P(_str), _P(_P(ctypes.c_double)), _P(_size)]),
    ("mrt_graph_add_host_to_device_fifo", _CHECKED, [_ptr, _str, _i32, _u64, _P(_u64)]),
    ("mrt_graph_add_device_to_host_fifo", _CHECKED, [_ptr, _str, _i32, _u64, _P(_u64)]),
    ("mrt_graph_create_host_write", _CHECKED, [_ptr, _str, _u64]),
    ("mrt_graph_create_host_read", _CHECKED, [_ptr, _str, _u64]),
    ("mrt_graph_add_remote_buffer", _CHECKED, [_ptr, _str, _i32, _u64, _u64, _P(_u64)]),
    ("mrt_graph_add_function", _CHECKED, [_ptr, _u64, _P(_u64)]),
    # Programs.
    ("mrt_program_sequence", _CHECKED, [_ptr, _SHAPE, _size, _str, _P(_u64)]),
    ("mrt_program_sequence_add", _CHECKED, [_ptr, _u64, _u64]),
    ("mrt_program_execute", _CHECKED, [_ptr, _u64, _str, _P(_u64)]),
    ("mrt_program_copy", _CHECKED, [_ptr, _u64, _u64, _str, _P(_u64)]),
    ("mrt_program_copy_from_stream", _CHECKED, [_ptr, _u64, _u64, _str, _P(_u64)]),
    ("mrt_program_copy_to_stream", _CHECKED, [_ptr, _u64, _u64, _str, _P(_u64)]),
    ("mrt_program_copy_from_remote_buffer", _CHECKED, [_ptr, _u64, _u64, _u64, _u64, _str, _P(_u64)]),
    ("mrt_program_copy_to_remote_buffer", _CHECKED, [_ptr, _u64, _u64, _u64, _u64, _str, _P(_u64)]),
    ("mrt_program_repeat", _CHECKED, [_ptr, _u64, _u64, _str, _P(_u64)]),
    ("mrt_program_repeat_while", _CHECKED, [_ptr, _u64, _u64, _u64, ctypes.c_bool, _str, _P(_u64)]),
    ("mrt_program_if", _CHECKED, [_ptr, _u64, _u64, _u64, _str, _P(_u64)]),
    ("mrt_program_switch", _CHECKED, [_ptr, _u64, _u64, _str, _P(_u64)]),
    ("mrt_program_switch_add_case", _CHECKED, [_ptr, _u64, _i32, _u64]),
    ("mrt_program_sync", _CHECKED, [_ptr, _i32, _str, _P(_u64)]),
    ("mrt_program_call", _CHECKED, [_ptr, _u64, _str, _P(_u64)]),
    ("mrt_program_write_undef", _CHECKED, [_ptr, _u64, _str, _P(_u64)]),
    ("mrt_program_print_tensor", _CHECKED, [_ptr, _str, _u64, _P(_u64)]),
    # Ops.
    ("mrt_ops_create_tensor", _CHECKED, [_ptr, _i32, _SHAPE, _size, _str, _u32, _u32, _P(_u64)]),
    ("mrt_ops_unary", _CHECKED, [_ptr, _u64, _str, _u64, _i32, _str, _P(_u64)]),
    ("mrt_ops_binary", _CHECKED, [_ptr, _u64, _str, _u64, _u64, _str, _P(_u64)]),
    ("mrt_ops_binary_in_place", _CHECKED, [_ptr, _u64, _str, _u64, _u64]),
    ("mrt_ops_fill", _CHECKED, [_ptr, _u64, _u64, ctypes.c_double]),
    ("mrt_ops_matmul", _CHECKED, [_ptr, _u64, _u64, _u64, _i32, _str, _u32, _u32, _P(_u64)]),
    ("mrt_ops_create_matmul_input", _CHECKED,
     [_ptr, _i32, _i32, _SHAPE, _SHAPE, _str, _u32, _u32, _P(_u64)]),
    ("mrt_ops_reduce", _CHECKED, [_ptr, _u64, _str, _u64, _SHAPE, _size, _str, _u32, _u32, _P(_u64)]),
    ("mrt_ops_softmax", _CHECKED, [_ptr, _u64, _u64, _str, _u32, _u32, _P(_u64)]),
    ("mrt_ops_argmax", _CHECKED, [_ptr, _u64, _u64, _str, _u32, _u32, _P(_u64)]),
    # Compiling, executables.
    ("mrt_graph_compile", _CHECKED,
     [_ptr, _SHAPE, _size, _OPTS, _PROGRESS_FN, _ptr, _FREE_FN, _P(_ptr)]),
    ("mrt_executable_destroy", None, [_ptr]),
    ("mrt_executable_serialize", _CHECKED, [_ptr, _P(_ptr), _P(_u64)]),
    ("mrt_executable_deserialize", _CHECKED, [_ptr, _u64, _P(_ptr)]),
    ("mrt_model_get_executable", _CHECKED, [_ptr, _P(_ptr)]),
    ("mrt_executable_get_info", _CHECKED, [_ptr, _P(_ExecutableInfo)]),
    ("mrt_executable_get_target", _CHECKED, [_ptr, _P(_Target)]),
    ("mrt_executable_memory_per_tile", _CHECKED, [_ptr, _P(_SHAPE), _P(_size)]),
    ("mrt_executable_step", _CHECKED, [_ptr, _size, _P(_StepInfo)]),
    ("mrt_executable_program_name", _CHECKED, [_ptr, _u32, _P(_str)]),
    ("mrt_executable_handle", _CHECKED, [_ptr, _i32, _size, _P(_HandleInfo)]),
    # Engines.
    ("mrt_engine_create", _CHECKED, [_ptr, _OPTS, _P(_ptr)]),
    ("mrt_engine_destroy", None, [_ptr]),
    ("mrt_engine_load", _CHECKED, [_ptr, _ptr]),
    ("mrt_engine_run", _CHECKED, [_ptr, _u32]),
    ("mrt_engine_run_replica", _CHECKED, [_ptr, _u32, _u32]),
    ("mrt_engine_stop", _CHECKED, [_ptr]),
    ("mrt_engine_connect_stream", _CHECKED, [_ptr, _str, _u32, _STREAM_FN, _ptr, _FREE_FN]),
    ("mrt_engine_connect_stream_to_buffer", _CHECKED, [_ptr, _str, _u32, _ptr, _u64]),
    ("mrt_engine_write_tensor", _CHECKED, [_ptr, _str, _ptr, _u64, _u32]),
    ("mrt_engine_read_tensor", _CHECKED, [_ptr, _str, _ptr, _u64, _u32]),
    ("mrt_engine_copy_to_remote_buffer", _CHECKED, [_ptr, _str, _ptr, _u64, _u64, _u32]),
    ("mrt_engine_copy_from_remote_buffer", _CHECKED, [_ptr, _str, _ptr, _u64, _u64, _u32]),
    ("mrt_engine_set_print_callback", _CHECKED, [_ptr, _PRINT_FN, _ptr, _FREE_FN]),
    ("mrt_engine_device_cycles", _CHECKED, [_ptr, _u32, _P(_u64)]),
    ("mrt_engine_insert_simulated_error", _CHECKED, [_ptr, _i32, _u32, _u32]),
    ("mrt_engine_erase_simulated_error", _CHECKED, [_ptr, _u32, _u32]),
    ("mrt_engine_clear_simulated_errors", _CHECKED, [_ptr]),
    ("mrt_engine_set_profiling", _CHECKED, [_ptr, ctypes.c_bool]),
    ("mrt_engine_write_profile", _CHECKED, [_ptr, _i32, _str]),
    ("mrt_engine_profile_text", _CHECKED, [_ptr, _i32, ctypes.c_char_p, _size, _P(_size)]),
    # Writing models.
    ("mrt_model_builder_create", _CHECKED, [_str, _ptr, _P(_ptr)]),
    ("mrt_model_builder_destroy", None, [_ptr]),
    ("mrt_model_builder_set_inference", _CHECKED, [_ptr, ctypes.c_bool]),
    ("mrt_model_builder_set_option", _CHECKED, [_ptr, _i32, _str, _str]),
    ("mrt_model_builder_set_seed_handle", _CHECKED, [_ptr, _str]),
    ("mrt_model_builder_set_program_name", _CHECKED, [_ptr, _u64, _str]),
    ("mrt_model_builder_set_program_flow", _CHECKED, [_ptr, _i32, _SHAPE, _size]),
    ("mrt_anchor_config_init_sized", _CHECKED, [_P(_AnchorConfig), _size]),
    ("mrt_model_builder_add_anchor", _CHECKED, [_ptr, _P(_AnchorConfig)]),
    ("mrt_model_builder_add_tensor_data", _CHECKED, [_ptr, _str, _i32, _P(_i64), _size, _ptr, _u64]),
    ("mrt_model_builder_add_feed_data", _CHECKED,
     [_ptr, _str, _i32, _P(_i64), _size, _ptr, _u64, _u64]),
    ("mrt_model_builder_build", _CHECKED, [_ptr, _P(_ptr)]),
    ("mrt_model_write", _CHECKED, [_ptr, _str]),
    ("mrt_model_write_split", _CHECKED, [_ptr, _str, _str]),
    ("mrt_model_write_to_memory", _CHECKED, [_ptr, _ptr, _size, _P(_size)]),
    ("mrt_model_load_from_memory", _CHECKED, [_ptr, _size, _P(_ptr)]),
    # Importing ONNX models.
    ("mrt_onnx_options_init_sized", _CHECKED, [_P(_OnnxOptions), _size]),
    ("mrt_onnx_compile_file", _CHECKED, [_str, _P(_OnnxOptions), _P(_ptr)]),
    ("mrt_onnx_compile_memory", _CHECKED, [_ptr, _size, _P(_OnnxOptions), _P(_ptr)]),
]:
    _lib[_name_] = _declare(_name_, _restype, *_argtypes)
del _name_, _restype, _argtypes


def _out_id(function, *arguments):
    """Calls a graph function whose last parameter is an mrt_X *out id."""
    out = _u64()
    _lib[function](*arguments, ctypes.byref(out))
    return out.value


# -- devices ----------------------------------------------------------------

class Device(_Closable):
    """One attached (or IPU Model) device, from a DeviceManager."""
    _kind = "Device"

    def __init__(self, pointer):
        self._handle = _Handle(pointer, _lib["mrt_device_destroy"])

    def close(self) -> None:
        """Releases this reference; an engine loaded on it keeps it."""
        handle = getattr(self, "_handle", None)
        if handle is not None:
            handle.release()

    def _int(self, function):
        out = _i64()
        _lib[function](self._pointer(), ctypes.byref(out))
        return out.value

    @property
    def id(self) -> int:
        return self._int("mrt_device_id")

    @property
    def ipu_version(self) -> int:
        return self._int("mrt_device_ipu_version")

    @property
    def num_ipus(self) -> int:
        return self._int("mrt_device_num_ipus")


class DeviceManager(_Closable):
    """The simulated system (MRT_HWSIM_IPUS); hands out Devices."""
    _kind = "DeviceManager"

    def __init__(self):
        out = _ptr()
        _lib["mrt_device_manager_create"](ctypes.byref(out))
        self._handle = _Handle(out.value, _lib["mrt_device_manager_destroy"])

    def close(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None:
            handle.release()

    def device_count(self) -> int:
        out = _size()
        _lib["mrt_device_manager_device_count"](self._pointer(), ctypes.byref(out))
        return out.value

    def ipu_hardware_version(self) -> int:
        out = _i64()
        _lib["mrt_device_manager_ipu_hardware_version"](self._pointer(), ctypes.byref(out))
        return out.value

    def get_device(self, num_ipus: int = 1, options: dict = None,
                   requires_remote_buffers: bool = False) -> Device:
        """Attaches the first free device of num_ipus IPUs (no waiting)."""
        out = _ptr()
        _lib["mrt_device_manager_get_device"](self._pointer(), num_ipus, _options_argument(options),
                                              None, requires_remote_buffers, ctypes.byref(out))
        return Device(out.value)

    def create_ipu_model_device(self, num_ipus: int = 1, ipu_version: int = 2,
                                tiles_per_ipu: int = 0) -> Device:
        """An IPU Model device (tiles_per_ipu 0: the architecture's 1472)."""
        out = _ptr()
        _lib["mrt_device_manager_create_ipu_model_device"](self._pointer(), num_ipus, ipu_version,
                                                           tiles_per_ipu, ctypes.byref(out))
        return Device(out.value)

    def create_small_ipu_model_device(self, num_ipus: int = 1, ipu_version: int = 2) -> Device:
        """An IPU Model device of 4 tiles per IPU (Target("ipu-model-small"))."""
        out = _ptr()
        _lib["mrt_device_manager_create_small_ipu_model_device"](self._pointer(), num_ipus,
                                                                 ipu_version, ctypes.byref(out))
        return Device(out.value)


# -- targets ----------------------------------------------------------------

class Target:
    """A system a graph is built for and its cost-model rates (mrt_target):
    Target("gc200"), Target("ipu-model-small", num_ipus=2). Every field of
    mrt_target is an attribute, readable and writable ("what if" targets)."""

    _FIELDS = tuple(name for name, _ in _Target._fields_ if name != "struct_size")

    def __init__(self, system: str = "gc200", num_ipus: int = 1):
        struct = _Target()
        _lib["mrt_target_init_sized"](system.encode(), num_ipus, ctypes.byref(struct), ctypes.sizeof(struct))
        object.__setattr__(self, "_struct", struct)
        object.__setattr__(self, "_name_bytes", struct.name)

    @classmethod
    def _from_struct(cls, struct):
        target = object.__new__(cls)
        object.__setattr__(target, "_struct", struct)
        object.__setattr__(target, "_name_bytes", struct.name)
        return target

    def __getattr__(self, field):
        if field in Target._FIELDS:
            value = getattr(self._struct, field)
            return value.decode() if field == "name" and value is not None else value
        raise AttributeError(f"Target has no field {field!r}")

    def __setattr__(self, field, value):
        if field not in Target._FIELDS:
            raise AttributeError(f"Target has no field {field!r}; fields: {', '.join(Target._FIELDS)}")
        if field == "name":
            value = value.encode()
            object.__setattr__(self, "_name_bytes", value)  # the struct borrows it
        setattr(self._struct, field, value)

    def as_dict(self) -> dict:
        return {field: getattr(self, field) for field in Target._FIELDS}

    def __repr__(self):
        return f"Target({self.name!r}, num_ipus={self.num_ipus}, tiles_per_ipu={self.tiles_per_ipu})"


# -- codelets ---------------------------------------------------------------

Codelet = namedtuple("Codelet", "name description fields attributes")
Codelet.__doc__ = ("A built-in codelet: fields maps name -> FieldDirection, attributes "
                   "maps name -> tuple of default values.")


def codelets() -> dict:
    """The built-in codelet library: a dict name -> Codelet."""
    result = {}
    for index in range(_lib["mrt_codelet_count"]()):
        info = _CodeletInfo(struct_size=ctypes.sizeof(_CodeletInfo))
        _lib["mrt_codelet_get_info"](index, ctypes.byref(info))
        fields, attributes = {}, {}
        for field in range(info.num_fields):
            name, direction = _str(), _i32()
            _lib["mrt_codelet_field"](index, field, ctypes.byref(name), ctypes.byref(direction))
            fields[name.value.decode()] = FieldDirection(direction.value)
        for attribute in range(info.num_attributes):
            name, defaults, count = _str(), _P(ctypes.c_double)(), _size()
            _lib["mrt_codelet_attribute"](index, attribute, ctypes.byref(name), ctypes.byref(defaults),
                                          ctypes.byref(count))
            attributes[name.value.decode()] = tuple(defaults[i] for i in range(count.value))
        result[info.name.decode()] = Codelet(info.name.decode(), info.description.decode(),
                                             fields, attributes)
    return result


# -- graphs -----------------------------------------------------------------

TensorInfo = namedtuple("TensorInfo", "dtype data_type shape num_elements num_bytes "
                        "is_contiguous is_constant")
TileInterval = namedtuple("TileInterval", "begin end tile")


@_PROGRESS_FN
def _progress_trampoline(step, total, user_data):
    with _InCallback():
        try:
            _held[user_data](step, total)
        except BaseException as exception:
            _report("the compile progress callback", exception)


class Graph(_Closable):
    """A graph of one replica: Graph(Target("gc200"), replication_factor=1)
    (target may also be a system name, or None for one GC200).

    Element types (dtype parameters) are DataType values or numpy dtypes.
    Methods return ids (ints): tensors, compute sets, vertices, streams,
    remote buffers, functions, programs. Program constructors take an
    optional debug `name`. The ops helpers (create_tensor, unary, binary,
    binary_in_place, fill, matmul, create_matmul_input, reduce, softmax,
    argmax) append to a Sequence program and return new, mapped tensors."""
    _kind = "Graph"

    def __init__(self, target=None, replication_factor: int = 1):
        if isinstance(target, str):
            target = Target(target)
        struct = None if target is None else ctypes.byref(target._struct)
        out = _ptr()
        _lib["mrt_graph_create"](struct, replication_factor, ctypes.byref(out))
        self._handle = _Handle(out.value, _lib["mrt_graph_destroy"])

    def close(self) -> None:
        """Frees the graph (executables compiled from it do not need it)."""
        handle = getattr(self, "_handle", None)
        if handle is not None:
            handle.release()

    def _id(self, function, *arguments):
        return _out_id(function, self._pointer(), *arguments)

    def target(self) -> Target:
        struct = _Target(struct_size=ctypes.sizeof(_Target))
        _lib["mrt_graph_get_target"](self._pointer(), ctypes.byref(struct))
        return Target._from_struct(struct)

    def replication_factor(self) -> int:
        out = _u32()
        _lib["mrt_graph_replication_factor"](self._pointer(), ctypes.byref(out))
        return out.value

    # Tensors.
    def add_variable(self, dtype, shape, name: str = None) -> Tensor:
        dims, rank = _u64_array(shape)
        return self._id("mrt_graph_add_variable", _data_type(dtype), dims, rank, _name(name))

    def add_constant(self, array, dtype=None, name: str = None) -> Tensor:
        """A constant holding a numpy array (its shape and bytes). With
        dtype given, the array's dtype must be that type's."""
        array = _contiguous(np.asarray(array) if not isinstance(array, np.ndarray) else array,
                            f"constant '{name or ''}'")
        if dtype is None:
            data_type = _data_type(array.dtype)
        else:
            data_type = _data_type(dtype)
            if array.dtype != _dtype(data_type) or data_type not in _DTYPES:
                raise MrtError(Status.INVALID_ARGUMENT,
                               f"constant '{name or ''}': expected dtype {_dtype(data_type)} for "
                               f"{_type_name(data_type)}, got {array.dtype}")
        dims, rank = _u64_array(array.shape)
        return self._id("mrt_graph_add_constant", data_type, dims, rank, array.ctypes.data,
                        array.nbytes, _name(name))

    def add_constant_filled(self, dtype, shape, value: float, name: str = None) -> Tensor:
        dims, rank = _u64_array(shape)
        return self._id("mrt_graph_add_constant_filled", _data_type(dtype), dims, rank, value,
                        _name(name))

    def tensor_info(self, tensor: Tensor) -> TensorInfo:
        info = _TensorInfo(struct_size=ctypes.sizeof(_TensorInfo))
        _lib["mrt_graph_tensor_info"](self._pointer(), tensor, ctypes.byref(info))
        shape = tuple(info.shape[i] for i in range(info.rank)) if info.rank else ()
        return TensorInfo(_dtype(info.data_type), DataType(info.data_type), shape,
                          info.num_elements, info.num_bytes, info.is_contiguous, info.is_constant)

    def slice(self, tensor: Tensor, begin: int, end: int, dim: int = 0) -> Tensor:
        return self._id("mrt_graph_slice", tensor, begin, end, dim)

    def index(self, tensor: Tensor, index: int) -> Tensor:
        return self._id("mrt_graph_index", tensor, index)

    def reshape(self, tensor: Tensor, shape) -> Tensor:
        dims, rank = _u64_array(shape)
        return self._id("mrt_graph_reshape", tensor, dims, rank)

    def flatten(self, tensor: Tensor) -> Tensor:
        return self._id("mrt_graph_flatten", tensor)

    def transpose(self, tensor: Tensor) -> Tensor:
        return self._id("mrt_graph_transpose", tensor)

    def concat(self, tensors, dim: int = 0) -> Tensor:
        ids, count = _u64_array(tensors)
        return self._id("mrt_graph_concat", ids, count, dim)

    # Tile mapping.
    def set_tile_mapping(self, tensor: Tensor, tile: int) -> None:
        _lib["mrt_graph_set_tile_mapping"](self._pointer(), tensor, tile)

    def map_linearly(self, tensor: Tensor, grain_size: int = 1, first_tile: int = 0,
                     num_tiles: int = 0) -> None:
        _lib["mrt_graph_map_linearly"](self._pointer(), tensor, grain_size, first_tile, num_tiles)

    def tile_mapping(self, tensor: Tensor) -> list:
        """The mapping as TileInterval(begin, end, tile) runs of flat elements."""
        pointer, count = self._pointer(), _size()
        _lib["mrt_graph_tile_mapping"](pointer, tensor, None, 0, ctypes.byref(count))
        intervals = (_TileInterval * max(count.value, 1))()
        _lib["mrt_graph_tile_mapping"](pointer, tensor, intervals, count.value, ctypes.byref(count))
        return [TileInterval(i.begin, i.end, i.tile) for i in intervals[:count.value]]

    # Compute sets and vertices.
    def add_compute_set(self, name: str = None) -> ComputeSet:
        return self._id("mrt_graph_add_compute_set", _name(name))

    def add_vertex(self, compute_set: ComputeSet, codelet: str, tile: int = 0,
                   connections: dict = None, attributes: dict = None) -> Vertex:
        """A vertex of a built-in codelet on `tile`, its fields connected as
        connections says ({field: tensor}) and attributes set ({name: value
        or values})."""
        vertex = self._id("mrt_graph_add_vertex", compute_set, codelet.encode(), tile)
        for field, tensor in (connections or {}).items():
            self.connect(vertex, field, tensor)
        for attribute, values in (attributes or {}).items():
            self.set_vertex_attribute(vertex, attribute, values)
        return vertex

    def connect(self, vertex: Vertex, field: str, tensor: Tensor) -> None:
        _lib["mrt_graph_connect"](self._pointer(), vertex, field.encode(), tensor)

    def set_vertex_attribute(self, vertex: Vertex, attribute: str, values) -> None:
        """values: a number or a sequence of numbers (empty: the default)."""
        values = [float(values)] if np.isscalar(values) else [float(v) for v in values]
        array = (ctypes.c_double * max(len(values), 1))(*values)
        _lib["mrt_graph_set_vertex_attribute"](self._pointer(), vertex, attribute.encode(), array,
                                               len(values))

    # Host communication, remote buffers, functions.
    def add_host_to_device_fifo(self, handle: str, dtype, num_elements: int) -> Stream:
        return self._id("mrt_graph_add_host_to_device_fifo", handle.encode(), _data_type(dtype),
                        num_elements)

    def add_device_to_host_fifo(self, handle: str, dtype, num_elements: int) -> Stream:
        return self._id("mrt_graph_add_device_to_host_fifo", handle.encode(), _data_type(dtype),
                        num_elements)

    def create_host_write(self, handle: str, tensor: Tensor) -> None:
        _lib["mrt_graph_create_host_write"](self._pointer(), handle.encode(), tensor)

    def create_host_read(self, handle: str, tensor: Tensor) -> None:
        _lib["mrt_graph_create_host_read"](self._pointer(), handle.encode(), tensor)

    def add_remote_buffer(self, handle: str, dtype, num_elements: int,
                          repeats: int = 1) -> RemoteBuffer:
        return self._id("mrt_graph_add_remote_buffer", handle.encode(), _data_type(dtype),
                        num_elements, repeats)

    def add_function(self, body: Program) -> Function:
        return self._id("mrt_graph_add_function", body)

    # Programs.
    def sequence(self, *programs: Program, name: str = None) -> Program:
        ids, count = _u64_array(programs)
        return self._id("mrt_program_sequence", ids, count, _name(name))

    def sequence_add(self, sequence: Program, *programs: Program) -> None:
        for program in programs:
            _lib["mrt_program_sequence_add"](self._pointer(), sequence, program)

    def execute(self, compute_set: ComputeSet, name: str = None) -> Program:
        return self._id("mrt_program_execute", compute_set, _name(name))

    def copy(self, source: Tensor, destination: Tensor, name: str = None) -> Program:
        return self._id("mrt_program_copy", source, destination, _name(name))

    def copy_from_stream(self, stream: Stream, destination: Tensor, name: str = None) -> Program:
        return self._id("mrt_program_copy_from_stream", stream, destination, _name(name))

    def copy_to_stream(self, source: Tensor, stream: Stream, name: str = None) -> Program:
        return self._id("mrt_program_copy_to_stream", source, stream, _name(name))

    def copy_from_remote_buffer(self, buffer: RemoteBuffer, destination: Tensor, slot: int = 0,
                                slot_tensor: Tensor = 0, name: str = None) -> Program:
        return self._id("mrt_program_copy_from_remote_buffer", buffer, destination, slot,
                        slot_tensor, _name(name))

    def copy_to_remote_buffer(self, source: Tensor, buffer: RemoteBuffer, slot: int = 0,
                              slot_tensor: Tensor = 0, name: str = None) -> Program:
        return self._id("mrt_program_copy_to_remote_buffer", source, buffer, slot, slot_tensor,
                        _name(name))

    def repeat(self, count: int, body: Program, name: str = None) -> Program:
        return self._id("mrt_program_repeat", count, body, _name(name))

    def repeat_while(self, condition: Program, predicate: Tensor, body: Program,
                     while_true: bool = True, name: str = None) -> Program:
        return self._id("mrt_program_repeat_while", condition, predicate, body, while_true,
                        _name(name))

    def if_(self, predicate: Tensor, then_body: Program, else_body: Program = 0,
            name: str = None) -> Program:
        return self._id("mrt_program_if", predicate, then_body, else_body, _name(name))

    def switch(self, control: Tensor, cases: dict = None, default_body: Program = 0,
               name: str = None) -> Program:
        """A Switch on a scalar S32/U32 tensor; cases maps value -> body."""
        program = self._id("mrt_program_switch", control, default_body, _name(name))
        for value, body in (cases or {}).items():
            self.switch_add_case(program, value, body)
        return program

    def switch_add_case(self, switch: Program, value: int, body: Program) -> None:
        _lib["mrt_program_switch_add_case"](self._pointer(), switch, value, body)

    def sync(self, sync_type: int = SyncType.INTERNAL, name: str = None) -> Program:
        return self._id("mrt_program_sync", int(sync_type), _name(name))

    def call(self, function: Function, name: str = None) -> Program:
        return self._id("mrt_program_call", function, _name(name))

    def write_undef(self, tensor: Tensor, name: str = None) -> Program:
        return self._id("mrt_program_write_undef", tensor, _name(name))

    def print_tensor(self, title: str, tensor: Tensor) -> Program:
        return self._id("mrt_program_print_tensor", title.encode(), tensor)

    # Ops (PopLibs-like): tiles [first_tile, first_tile + num_tiles), 0 = to the last.
    def create_tensor(self, dtype, shape, name: str = None, first_tile: int = 0,
                      num_tiles: int = 0) -> Tensor:
        dims, rank = _u64_array(shape)
        return self._id("mrt_ops_create_tensor", _data_type(dtype), dims, rank, _name(name),
                        first_tile, num_tiles)

    def unary(self, sequence: Program, codelet: str, tensor: Tensor, out_dtype=None,
              name: str = None) -> Tensor:
        out_type = -1 if out_dtype is None else _data_type(out_dtype)
        return self._id("mrt_ops_unary", sequence, codelet.encode(), tensor, out_type, _name(name))

    def binary(self, sequence: Program, codelet: str, a: Tensor, b: Tensor,
               name: str = None) -> Tensor:
        return self._id("mrt_ops_binary", sequence, codelet.encode(), a, b, _name(name))

    def binary_in_place(self, sequence: Program, codelet: str, a: Tensor, b: Tensor) -> None:
        _lib["mrt_ops_binary_in_place"](self._pointer(), sequence, codelet.encode(), a, b)

    def fill(self, sequence: Program, tensor: Tensor, value: float) -> None:
        _lib["mrt_ops_fill"](self._pointer(), sequence, tensor, value)

    def matmul(self, sequence: Program, a: Tensor, b: Tensor, out_dtype=None, name: str = None,
               first_tile: int = 0, num_tiles: int = 0) -> Tensor:
        out_type = -1 if out_dtype is None else _data_type(out_dtype)
        return self._id("mrt_ops_matmul", sequence, a, b, out_type, _name(name), first_tile,
                        num_tiles)

    def create_matmul_input(self, operand: int, dtype, a_shape, b_shape, name: str = None,
                            first_tile: int = 0, num_tiles: int = 0) -> Tensor:
        """A variable laid out for `operand` (MatmulOperand.LHS/RHS) of the
        [M,K] x [K,N] product matmul() over the same tiles computes."""
        if len(a_shape) != 2 or len(b_shape) != 2:
            raise MrtError(Status.INVALID_ARGUMENT,
                           f"create_matmul_input: a_shape and b_shape must have 2 dimensions, got "
                           f"{list(a_shape)} and {list(b_shape)}")
        a_dims, _ = _u64_array(a_shape)
        b_dims, _ = _u64_array(b_shape)
        return self._id("mrt_ops_create_matmul_input", int(operand), _data_type(dtype), a_dims,
                        b_dims, _name(name), first_tile, num_tiles)

    def reduce(self, sequence: Program, codelet: str, tensor: Tensor, axes=(), name: str = None,
               first_tile: int = 0, num_tiles: int = 0) -> Tensor:
        """codelet ReduceSum/Max/Min/Mean over `axes` (empty: all)."""
        ids, count = _u64_array(axes)
        return self._id("mrt_ops_reduce", sequence, codelet.encode(), tensor, ids, count,
                        _name(name), first_tile, num_tiles)

    def softmax(self, sequence: Program, tensor: Tensor, name: str = None, first_tile: int = 0,
                num_tiles: int = 0) -> Tensor:
        return self._id("mrt_ops_softmax", sequence, tensor, _name(name), first_tile, num_tiles)

    def argmax(self, sequence: Program, tensor: Tensor, name: str = None, first_tile: int = 0,
               num_tiles: int = 0) -> Tensor:
        return self._id("mrt_ops_argmax", sequence, tensor, _name(name), first_tile, num_tiles)

    # Compiling.
    def compile(self, programs, options: dict = None, progress=None) -> "Executable":
        """Compiles the graph: programs[i] is program i of the executable.
        options: engine options (dict); progress(step, total_steps) is called
        on this thread. A graph compiles once (then it is frozen)."""
        ids, count = _u64_array(programs)
        out = _ptr()
        if progress is None:
            _lib["mrt_graph_compile"](self._pointer(), ids, count, _options_argument(options),
                                      _PROGRESS_FN(), None, _FREE_FN(), ctypes.byref(out))
        else:
            if not callable(progress):
                raise MrtError(Status.INVALID_ARGUMENT,
                               f"progress callback: {progress!r} is not callable")
            _lib["mrt_graph_compile"](self._pointer(), ids, count, _options_argument(options),
                                      _progress_trampoline, _hold(progress), _release_held,
                                      ctypes.byref(out))
        return Executable(out.value)


def _type_name(data_type):
    try:
        return DataType(data_type).name
    except ValueError:
        return str(data_type)


# -- executables ------------------------------------------------------------

ExecutableInfo = namedtuple("ExecutableInfo", "hash replication_factor num_ipus num_programs "
                            "num_tiles num_streams num_remote_buffers num_host_reads "
                            "num_host_writes num_steps total_memory_bytes max_tile_memory_bytes "
                            "max_memory_tile bytes_per_tile")
StepInfo = namedtuple("StepInfo", "kind name modelled_cycles")
HandleInfo = namedtuple("HandleInfo", "handle kind dtype num_elements repeats")


class Executable(_Closable):
    """A compiled graph (Graph.compile, Executable.deserialize(bytes),
    Executable.from_model(model)). Immutable; any thread."""
    _kind = "Executable"

    def __init__(self, pointer):
        self._handle = _Handle(pointer, _lib["mrt_executable_destroy"])

    def close(self) -> None:
        """Drops this object's reference (memory_per_tile views keep it)."""
        self._handle = None

    @classmethod
    def deserialize(cls, data: bytes) -> "Executable":
        data = bytes(data)
        out = _ptr()
        _lib["mrt_executable_deserialize"](data, len(data), ctypes.byref(out))
        return cls(out.value)

    @classmethod
    def from_model(cls, model: "Model") -> "Executable":
        out = _ptr()
        _lib["mrt_model_get_executable"](model._pointer(), ctypes.byref(out))
        return cls(out.value)

    def serialize(self) -> bytes:
        data, size = _ptr(), _u64()
        _lib["mrt_executable_serialize"](self._pointer(), ctypes.byref(data), ctypes.byref(size))
        return ctypes.string_at(data.value, size.value) if size.value else b""

    def info(self) -> ExecutableInfo:
        info = _ExecutableInfo(struct_size=ctypes.sizeof(_ExecutableInfo))
        _lib["mrt_executable_get_info"](self._pointer(), ctypes.byref(info))
        return ExecutableInfo(*(getattr(info, f) for f in ExecutableInfo._fields))

    def target(self) -> Target:
        struct = _Target(struct_size=ctypes.sizeof(_Target))
        _lib["mrt_executable_get_target"](self._pointer(), ctypes.byref(struct))
        return Target._from_struct(struct)

    def memory_per_tile(self) -> np.ndarray:
        """Bytes used on each tile of one replica: a read-only uint64 view."""
        data, count = _SHAPE(), _size()
        _lib["mrt_executable_memory_per_tile"](self._pointer(), ctypes.byref(data),
                                               ctypes.byref(count))
        address = ctypes.cast(data, _ptr).value
        return _borrowed_array(address, count.value * 8, np.dtype(np.uint64), None, self._handle)

    def steps(self) -> list:
        pointer = self._pointer()
        result = []
        for index in range(self.info().num_steps):
            step = _StepInfo(struct_size=ctypes.sizeof(_StepInfo))
            _lib["mrt_executable_step"](pointer, index, ctypes.byref(step))
            result.append(StepInfo(step.kind.decode(), (step.name or b"").decode(),
                                   step.modelled_cycles))
        return result

    def program_name(self, program: int) -> str:
        out = _str()
        _lib["mrt_executable_program_name"](self._pointer(), program, ctypes.byref(out))
        return (out.value or b"").decode()

    def handles(self) -> dict:
        """Every stream, remote buffer and host read/write: handle -> HandleInfo."""
        pointer, info = self._pointer(), self.info()
        result = {}
        for kind, count in ((HandleKind.HOST_TO_DEVICE, info.num_streams),
                            (HandleKind.REMOTE_BUFFER, info.num_remote_buffers),
                            (HandleKind.HOST_WRITE, info.num_host_writes),
                            (HandleKind.HOST_READ, info.num_host_reads)):
            for index in range(count):
                h = _HandleInfo(struct_size=ctypes.sizeof(_HandleInfo))
                _lib["mrt_executable_handle"](pointer, kind, index, ctypes.byref(h))
                name = h.handle.decode()
                result[name] = HandleInfo(name, HandleKind(h.kind), _dtype(h.data_type),
                                          h.num_elements, h.repeats)
        return result


# -- engines ----------------------------------------------------------------

class _StreamEntry:
    def __init__(self, function, dtype):
        self.function = function
        self.dtype = dtype


@_STREAM_FN
def _stream_trampoline(data, size, replica, user_data):
    with _InCallback():
        try:
            entry = _held[user_data]
            buffer = (ctypes.c_char * size).from_address(data) if size else bytearray()
            array = np.frombuffer(buffer, dtype=np.uint8)
            if entry.dtype.itemsize and size % entry.dtype.itemsize == 0:
                array = array.view(entry.dtype)
            entry.function(array, replica)
        except BaseException as exception:
            _report("a stream callback", exception)


@_PRINT_FN
def _print_trampoline(line, user_data):
    with _InCallback():
        try:
            _held[user_data](line.decode("utf-8", "replace"))
        except BaseException as exception:
            _report("the print callback", exception)


_destroy_engine = _destroyer("mrt_engine_destroy", "mrt-engine-destroy")


_open_engines = weakref.WeakSet()


class Engine(_Closable):
    """An executable loaded on a device and run (Poplar's Engine):
    Engine(executable, options={"debug.instrument": "true"}). One thread
    drives it at a time; stop() may be called from any thread."""
    _kind = "Engine"

    def __init__(self, executable: Executable, options: dict = None):
        out = _ptr()
        _lib["mrt_engine_create"](executable._pointer(), _options_argument(options),
                                  ctypes.byref(out))
        self._handle = _Handle(out.value, _destroy_engine)
        self._handles = executable.handles()
        self._buffers = []  # arrays connected with connect_stream_to_buffer
        _open_engines.add(self)

    def close(self) -> None:
        """Stops a run in progress, waits for it and frees the engine."""
        _release_tracked(self, "_open_engines")
        self._buffers = []

    def load(self, device: Device) -> None:
        _lib["mrt_engine_load"](self._pointer(), device._pointer())

    def run(self, program: int = 0, replica: int = None) -> None:
        """Runs program index `program` on every replica (or one)."""
        if replica is None:
            _lib["mrt_engine_run"](self._pointer(), program)
        else:
            _lib["mrt_engine_run_replica"](self._pointer(), program, replica)

    def run_replica(self, program: int, replica: int) -> None:
        _lib["mrt_engine_run_replica"](self._pointer(), program, replica)

    def stop(self) -> None:
        _lib["mrt_engine_stop"](self._pointer())

    def _dtype_of(self, handle):
        info = self._handles.get(handle)
        return info.dtype if info is not None else np.dtype(np.uint8)

    def connect_stream(self, handle: str, function, replica: int = ALL_REPLICAS) -> None:
        """Connects a FIFO to function(array, replica): array is a writable
        numpy view of the transfer, of the stream's dtype (fill it for a
        host-to-device stream, read it for device-to-host), valid only
        during the call. Called on the thread running the replica."""
        if not callable(function):
            raise MrtError(Status.INVALID_ARGUMENT, f"stream callback: {function!r} is not callable")
        _lib["mrt_engine_connect_stream"](self._pointer(), handle.encode(), replica,
                                          _stream_trampoline,
                                          _hold(_StreamEntry(function, self._dtype_of(handle))),
                                          _release_held)

    def connect_stream_to_buffer(self, handle: str, array: np.ndarray,
                                 replica: int = ALL_REPLICAS) -> None:
        """Connects a FIFO to a circular buffer (a whole number of
        transfers): the array, used without copies and kept alive by the
        engine until close()."""
        _contiguous(array, f"stream '{handle}' buffer", writable=True)
        _lib["mrt_engine_connect_stream_to_buffer"](self._pointer(), handle.encode(), replica,
                                                    array.ctypes.data, array.nbytes)
        self._buffers.append(array)

    def _checked(self, handle, array, writable, what):
        _contiguous(array, f"{what} '{handle}'", writable)
        info = self._handles.get(handle)
        if info is not None and array.dtype != info.dtype:
            raise MrtError(Status.INVALID_ARGUMENT,
                           f"{what} '{handle}': expected dtype {info.dtype}, got {array.dtype}")
        return array

    def _new(self, handle):
        info = self._handles.get(handle)
        if info is None:
            raise MrtError(Status.NOT_FOUND, f"the executable has no handle '{handle}'; it has "
                           f"{', '.join(sorted(self._handles)) or 'none'}")
        return np.empty(info.num_elements, info.dtype)

    def write_tensor(self, handle: str, array: np.ndarray, replica: int = ALL_REPLICAS) -> None:
        """Writes a host-write handle's tensor (mrt_graph_create_host_write)."""
        self._checked(handle, array, False, "write_tensor")
        _lib["mrt_engine_write_tensor"](self._pointer(), handle.encode(), array.ctypes.data,
                                        array.nbytes, replica)

    def read_tensor(self, handle: str, out: np.ndarray = None, replica: int = 0) -> np.ndarray:
        """Reads a host-read handle's tensor into `out` (or a new flat array)."""
        out = self._new(handle) if out is None else out
        self._checked(handle, out, True, "read_tensor")
        _lib["mrt_engine_read_tensor"](self._pointer(), handle.encode(), out.ctypes.data,
                                       out.nbytes, replica)
        return out

    def copy_to_remote_buffer(self, handle: str, array: np.ndarray, slot: int = 0,
                              replica: int = 0) -> None:
        self._checked(handle, array, False, "copy_to_remote_buffer")
        _lib["mrt_engine_copy_to_remote_buffer"](self._pointer(), handle.encode(), array.ctypes.data,
                                                 array.nbytes, slot, replica)

    def copy_from_remote_buffer(self, handle: str, slot: int = 0, out: np.ndarray = None,
                                replica: int = 0) -> np.ndarray:
        out = self._new(handle) if out is None else out
        self._checked(handle, out, True, "copy_from_remote_buffer")
        _lib["mrt_engine_copy_from_remote_buffer"](self._pointer(), handle.encode(),
                                                   out.ctypes.data, out.nbytes, slot, replica)
        return out

    def set_print_callback(self, function) -> None:
        """PrintTensor lines go to function(line: str); None: to stdout."""
        if function is None:
            _lib["mrt_engine_set_print_callback"](self._pointer(), _PRINT_FN(), None, _FREE_FN())
            return
        if not callable(function):
            raise MrtError(Status.INVALID_ARGUMENT, f"print callback: {function!r} is not callable")
        _lib["mrt_engine_set_print_callback"](self._pointer(), _print_trampoline, _hold(function),
                                              _release_held)

    def device_cycles(self, replica: int = 0) -> int:
        out = _u64()
        _lib["mrt_engine_device_cycles"](self._pointer(), replica, ctypes.byref(out))
        return out.value

    def insert_simulated_error(self, error: int, step: int, tile: int = 0) -> None:
        _lib["mrt_engine_insert_simulated_error"](self._pointer(), int(error), step, tile)

    def erase_simulated_error(self, step: int, tile: int = 0) -> None:
        _lib["mrt_engine_erase_simulated_error"](self._pointer(), step, tile)

    def clear_simulated_errors(self) -> None:
        _lib["mrt_engine_clear_simulated_errors"](self._pointer())

    def set_profiling(self, enabled: bool = True) -> None:
        _lib["mrt_engine_set_profiling"](self._pointer(), enabled)

    def write_profile(self, path, format: int = ProfileFormat.SUMMARY) -> None:
        _lib["mrt_engine_write_profile"](self._pointer(), int(format), os.fsencode(path))

    def profile_text(self, format: int = ProfileFormat.SUMMARY) -> str:
        pointer, length = self._pointer(), _size()
        _lib["mrt_engine_profile_text"](pointer, int(format), None, 0, ctypes.byref(length))
        buffer = ctypes.create_string_buffer(length.value + 1)
        _lib["mrt_engine_profile_text"](pointer, int(format), buffer, len(buffer),
                                        ctypes.byref(length))
        return buffer.value.decode("utf-8", "replace")


# -- writing models ---------------------------------------------------------

class ModelBuilder(_Closable):
    """Makes a Model from an Executable: ModelBuilder("name", executable),
    then set_program_flow, add_anchor, add_tensor_data, ..., build()."""
    _kind = "ModelBuilder"

    def __init__(self, name: str, executable: Executable):
        out = _ptr()
        _lib["mrt_model_builder_create"](name.encode(), executable._pointer(), ctypes.byref(out))
        self._handle = _Handle(out.value, _lib["mrt_model_builder_destroy"])

    def close(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None:
            handle.release()

    def set_inference(self, is_inference: bool) -> None:
        _lib["mrt_model_builder_set_inference"](self._pointer(), is_inference)

    def set_option(self, key: str, value: str, options: int = ModelOptions.ENGINE) -> None:
        _lib["mrt_model_builder_set_option"](self._pointer(), int(options), key.encode(),
                                             str(value).encode())

    def set_seed_handle(self, handle: str) -> None:
        _lib["mrt_model_builder_set_seed_handle"](self._pointer(), handle.encode())

    def set_program_name(self, program: int, name: str) -> None:
        _lib["mrt_model_builder_set_program_name"](self._pointer(), program, name.encode())

    def set_program_flow(self, phase: int, programs) -> None:
        """The program indices of phase (Phase.LOAD/MAIN/SAVE), in run order."""
        ids, count = _u64_array(programs)
        _lib["mrt_model_builder_set_program_flow"](self._pointer(), int(phase), ids, count)

    def add_anchor(self, handle: str, shape, programs, name: str = None,
                   is_per_replica: bool = False, data_source: int = DataSource.NONE) -> None:
        """An anchor naming stream or remote buffer `handle`, moved by the
        program indices `programs`."""
        config = _AnchorConfig()
        _lib["mrt_anchor_config_init_sized"](ctypes.byref(config), ctypes.sizeof(config))
        dims, rank = _i64_array(shape)
        ids, count = _u64_array(programs)
        config.name = _name(name)
        config.handle = handle.encode()
        config.shape, config.rank = dims, rank
        config.programs, config.num_programs = ids, count
        config.is_per_replica = is_per_replica
        config.data_source = int(data_source)
        _lib["mrt_model_builder_add_anchor"](self._pointer(), ctypes.byref(config))

    def add_tensor_data(self, name: str, array: np.ndarray) -> None:
        """A TensorData blob: the array's bytes, dtype and shape (copied)."""
        array = _contiguous(array, f"TensorData '{name}'")
        dims, rank = _i64_array(array.shape)
        _lib["mrt_model_builder_add_tensor_data"](self._pointer(), name.encode(),
                                                  _data_type(array.dtype), dims, rank,
                                                  array.ctypes.data, array.nbytes)

    def add_feed_data(self, name: str, array: np.ndarray) -> None:
        """A FeedData blob: array[i] is tensor i (copied)."""
        array = _contiguous(array, f"FeedData '{name}'")
        if array.ndim < 1:
            raise MrtError(Status.INVALID_ARGUMENT, f"FeedData '{name}': needs a leading dimension")
        dims, rank = _i64_array(array.shape[1:])
        _lib["mrt_model_builder_add_feed_data"](self._pointer(), name.encode(),
                                                _data_type(array.dtype), dims, rank,
                                                array.ctypes.data, array.nbytes, array.shape[0])

    def build(self) -> "Model":
        """The model, checked as a loaded file is; the builder stays usable."""
        out = _ptr()
        _lib["mrt_model_builder_build"](self._pointer(), ctypes.byref(out))
        return Model._adopt(out.value)


_PRECISIONS = {"f32": 0, "f16": 1}


def compile_onnx(model, *, target: str = "gc200", num_ipus: int = 1, replication_factor: int = 1,
                 batch_size: int = 1, input_shapes: dict = None, precision: str = "f32",
                 model_name: str = None, progress=None) -> "Model":
    """Compiles an ONNX model (a path, or the model's bytes) into a Model for
    the simulated IPU, as mrt-compile does (docs/onnx.md).

    batch_size: the value of dynamic input dimensions; input_shapes: {input
    name: shape} replacing declared shapes; precision: "f32", or "f16" to
    compute in half precision with the inputs and outputs kept;
    progress(step, total) is called on this thread. Raises MrtError:
    CORRUPT_MODEL, UNIMPLEMENTED (every unsupported node named),
    RESOURCE_EXHAUSTED, INVALID_ARGUMENT, NOT_FOUND."""
    if precision not in _PRECISIONS:
        raise MrtError(Status.INVALID_ARGUMENT,
                       f"precision {precision!r}: expected one of {sorted(_PRECISIONS)}")
    options = _OnnxOptions()
    _lib["mrt_onnx_options_init_sized"](ctypes.byref(options), ctypes.sizeof(options))
    options.target = target.encode()
    options.num_ipus = num_ipus
    options.replication_factor = replication_factor
    options.batch_size = batch_size
    options.precision = _PRECISIONS[precision]
    if model_name is not None:
        options.model_name = model_name.encode()
    shapes = list((input_shapes or {}).items())
    entries = (_OnnxInputShape * max(len(shapes), 1))()
    dims_alive = []  # the ctypes arrays entries point into
    for entry, (name, shape) in zip(entries, shapes):
        dims, rank = _i64_array(shape)
        dims_alive.append(dims)
        entry.name, entry.dims, entry.rank = name.encode(), dims, rank
    options.input_shapes = entries
    options.num_input_shapes = len(shapes)
    if progress is not None:
        if not callable(progress):
            raise MrtError(Status.INVALID_ARGUMENT, f"progress callback: {progress!r} is not callable")
        options.progress = _progress_trampoline
        options.user_data = _hold(progress)
        options.user_data_free = _release_held
    out = _ptr()
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
        _lib["mrt_onnx_compile_memory"](data, len(data), ctypes.byref(options), ctypes.byref(out))
    else:
        _lib["mrt_onnx_compile_file"](os.fsencode(model), ctypes.byref(options), ctypes.byref(out))
    return Model._adopt(out.value)


@atexit.register
def _shutdown():
    # Before the interpreter finalizes: stop device threads and take back
    # the log callback, so that the library never calls into a dead Python.
    for runner in list(_open_runners):
        runner.close()
    for engine in list(_open_engines):
        engine.close()
    try:
        set_log_callback(None)
    except MrtError:
        pass

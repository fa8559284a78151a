"""ModelRunner: serving inference requests (mrt_model_runner_*).

Arrays pass without copies: execute() hands the library pointers to the
caller's numpy arrays, whose dtype and shape are checked against the
model's description first (with batching_dim, that dimension may have any
positive size), and outputs are written into arrays the caller provides
(or new ones).
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping, Sequence, TypedDict

import numpy as np

from . import _structs as s
from ._arrays import borrowed_array, check_tensor, contiguous, dtype_of, encoded, shape_tuple
from ._callbacks import checked_callable, guarded, held, hold, release_held
from ._handles import Closable, Handle, joining_destroyer, open_objects
from ._native import C, out_value
from .devices import Device, wait_config
from .device_time import DeviceTime, read_device_time
from .errors import InvalidArgumentError, Status
from .futures import Future
from .models import Model, PathLike, create_for
from .types import BATCHING_DISABLED, SimulatedError, TensorType, duration_ns

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from Python 3.11


@dataclass(frozen=True)
class DataDesc:
    """An input or output of a runner (mrt_data_desc): its shape and size
    are those of one model batch."""
    name: str
    size_in_bytes: int
    shape: tuple
    dtype: np.dtype
    popef_contains_tensor_data: bool


@dataclass(frozen=True)
class RequestTimes:
    """Phases of requests in microseconds (counts for statistics_count)."""
    request_us: float
    read_preparation_us: float
    read_queue_us: float
    computation_us: float


Arrays = Mapping[str, np.ndarray]


@s.FLUSH_FN
def _flush_trampoline(tensor_id, user_data):
    with guarded("the runner's flush callback"):
        held(user_data)(tensor_id.decode())


class FlushSelection:
    """The queues a timeout flush pads, chosen by flush_select_callback
    (mrt_flush_selection): valid only during that call. Nothing added
    means every queue; once anything is added, only the added queues are
    padded. A name that is no queue of the runner is logged by the library
    and every queue padded instead."""

    def __init__(self, pointer: int):
        self._selection = pointer

    def _add(self, direction: TensorType, name: str) -> None:
        if self._selection is None:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                       "FlushSelection is valid only during flush_select_callback")
        if not isinstance(name, str):
            raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                       f"FlushSelection: queue name {name!r} is not a str")
        C.mrt_flush_selection_add(self._selection, int(direction), name.encode())

    def add_input(self, name: str) -> None:
        """Pads the input queue of anchor `name`."""
        self._add(TensorType.INPUT, name)

    def add_output(self, name: str) -> None:
        """Pads the output queue of anchor `name`."""
        self._add(TensorType.OUTPUT, name)


@s.FLUSH_SELECT_FN
def _flush_select_trampoline(tensor_id, selection, user_data):
    with guarded("the runner's flush_select_callback"):
        chosen = FlushSelection(selection)
        try:
            held(user_data)(tensor_id.decode(), chosen)
        finally:
            chosen._selection = None  # the library's selection ends with the call


def _seconds(nanoseconds: int) -> float | None:
    return None if nanoseconds < 0 else nanoseconds / 1e9


def _tensor_views(arrays: Mapping[str, np.ndarray]):
    """A C array of mrt_tensor_view over already checked arrays."""
    views = (s.TensorView * max(len(arrays), 1))()
    for view, (name, array) in zip(views, arrays.items()):
        view.name, view.data, view.size_bytes = name.encode(), array.ctypes.data, array.nbytes
    return views


class TensorMemory(Closable):
    """Outputs the library allocated (execute_alloc): memory["probs"] is a
    read-only numpy view (no copy) that stays valid after close()."""
    _kind = "TensorMemory"
    _views_share_handle = True

    def __init__(self, pointer: int, descs: Mapping[str, DataDesc]):
        self._handle = Handle(pointer, C.mrt_tensor_memory_destroy)
        self._descs = descs

    def __len__(self) -> int:
        return out_value(C.mrt_tensor_memory_count, self._pointer(), out_type=s.c_size)

    def names(self) -> list[str]:
        view, names = s.TensorView(), []
        for index in range(len(self)):
            C.mrt_tensor_memory_get(self._pointer(), index, ctypes.byref(view))
            names.append(view.name.decode())
        return names

    def __getitem__(self, name: str) -> np.ndarray:
        view = s.TensorView()
        C.mrt_tensor_memory_find(self._pointer(), name.encode(), ctypes.byref(view))
        desc = self._descs.get(name)
        dtype = desc.dtype if desc is not None else np.dtype(np.uint8)
        shape = None
        if desc is not None and desc.shape and desc.size_in_bytes:
            # A whole number of batches (batching_dim) keeps the trailing dims.
            batches = view.size_bytes * desc.shape[0] // desc.size_in_bytes
            shape = (batches,) + tuple(desc.shape[1:])
        return borrowed_array(view.data, view.size_bytes, dtype, shape, self._handle)

    def as_dict(self) -> dict[str, np.ndarray]:
        return {name: self[name] for name in self.names()}


class RunnerOptions(TypedDict, total=False):
    """The keyword options of ModelRunner (see there)."""
    replication_factor: int | None
    thread_safe: bool | None
    run_save_programs: bool | None
    check_package_hash: bool | None
    validate_io_params: bool | None
    batching_dim: int | None
    auto_reset: bool | None
    max_look_ahead: int | None
    ring_buffer_size_multiplier: int | None
    flush_on_waiting_outputs: bool | None
    is_batch_size_timeout_enabled: bool | None
    request_tracepoints_buffer_size: int | None
    timeout: float | None
    batch_size_timeout: float | None
    data_parallel_timeout: float | None
    frozen_inputs: Mapping[str, np.ndarray]
    save_programs_outputs: Mapping[int, Mapping[str, np.ndarray]]
    devices: Sequence[Device | None]
    device_wait: float | None
    device_poll_interval: float | None
    flush_callback: Callable[[str], None]
    flush_select_callback: Callable[[str, FlushSelection], None]
    model_name: str | None


class ModelRunner(Closable):
    """Serves inference requests on a model (a Model, or PopEF path(s)).

    Options (RunnerOptions; not given or None: the library's default):
      replication_factor, thread_safe (execute from many threads at once),
      run_save_programs, check_package_hash, validate_io_params,
      batching_dim (requests of any number of samples along that dimension),
      auto_reset, max_look_ahead, ring_buffer_size_multiplier,
      flush_on_waiting_outputs, is_batch_size_timeout_enabled,
      request_tracepoints_buffer_size;
      durations in seconds, None meaning forever / never (not given: the
      library's default): timeout, batch_size_timeout, data_parallel_timeout;
      batching_dim None disables batching;
      frozen_inputs {name: array} (copied at creation),
      save_programs_outputs {replica: {name: array}} (written at close; each
      array of the anchor's dtype and shape),
      devices [Device or None per replica], device_wait / device_poll_interval
      (seconds, as DeviceManager.get_device's wait), and
      flush_callback(tensor_id) called on a device thread before dummy data
      is flushed, or instead flush_select_callback(tensor_id, selection),
      which also chooses the queues padded (FlushSelection); at most one;
      model_name: which model of fused PopEF files to serve (None: the
      files' only model; given a Model, None or that model's own name).
    """
    _kind = "ModelRunner"

    _SCALARS = ("replication_factor", "thread_safe", "run_save_programs", "check_package_hash",
                "validate_io_params", "batching_dim", "auto_reset", "max_look_ahead",
                "ring_buffer_size_multiplier", "flush_on_waiting_outputs",
                "is_batch_size_timeout_enabled", "request_tracepoints_buffer_size")
    _DURATIONS = {"timeout": "timeout_ns", "batch_size_timeout": "batch_size_timeout_ns",
                  "data_parallel_timeout": "data_parallel_timeout_ns"}
    _OTHERS = ("frozen_inputs", "save_programs_outputs", "devices", "device_wait",
               "device_poll_interval", "flush_callback", "flush_select_callback", "model_name")

    def __init__(self, model: Model | PathLike | Sequence[PathLike],
                 **options: Unpack[RunnerOptions]):
        known = self._SCALARS + tuple(self._DURATIONS) + self._OTHERS
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                       f"ModelRunner: unknown option(s) {', '.join(unknown)}; "
                                       f"known: {', '.join(known)}")
        config = s.RunnerConfig()
        # init_sized writes the defaults of the fields this package knows and
        # no byte beyond them, whatever the library's version.
        C.mrt_model_runner_config_init_sized(ctypes.byref(config), ctypes.sizeof(config))
        loaded = None
        if options.get("save_programs_outputs") and not isinstance(model, Model):
            # The save outputs are checked against the model's anchors.
            model = loaded = Model(model, executable=options.get("model_name"))
        try:
            keep = self._fill_config(config, options, model)  # what config points into
            pointer = create_for(model, C.mrt_model_runner_create,
                                 C.mrt_model_runner_create_from_files, ctypes.byref(config))
        finally:
            if loaded is not None:
                loaded.close()  # the runner keeps its own reference

        def destroy(runner_pointer, keep_alive=keep):
            # The destroy writes the save outputs, wherever it runs: this
            # function (held by the handle, or the thread running it) keeps
            # them alive until then.
            C.mrt_model_runner_destroy(runner_pointer)

        self._handle = Handle(pointer, joining_destroyer(destroy, "libmrt-runner-destroy"))
        # The runner's own: the config's, else the one the model records.
        self._batching_dim = self.config()["batching_dim"]
        self.execute_inputs = self._descs(C.mrt_model_runner_execute_inputs)
        self.execute_outputs = self._descs(C.mrt_model_runner_execute_outputs)
        self.model_inputs = self._descs(C.mrt_model_runner_model_inputs)
        self.model_outputs = self._descs(C.mrt_model_runner_model_outputs)
        open_objects.add(self)

    @classmethod
    def _fill_config(cls, config: s.RunnerConfig, options: dict, model) -> dict:
        keep = {}
        for key in cls._SCALARS:
            value = options.get(key)
            if key == "batching_dim" and key in options and value is None:
                value = BATCHING_DISABLED
            if value is not None:
                setattr(config, key, value)
        for key, field in cls._DURATIONS.items():
            if key in options:
                setattr(config, field, duration_ns(options[key], key))
        frozen = options.get("frozen_inputs")
        if frozen:
            checked = {name: contiguous(array, f"frozen input '{name}'")
                       for name, array in frozen.items()}
            keep["frozen"] = (checked, _tensor_views(checked))
            config.frozen_inputs, config.num_frozen_inputs = keep["frozen"][1], len(checked)
        save = options.get("save_programs_outputs")
        if save:
            replicas = (s.ReplicaOutputs * len(save))()
            arrays = []
            anchors = {anchor.name: anchor for anchor in model.anchors()}
            for entry, (replica, outputs) in zip(replicas, save.items()):
                for name, array in outputs.items():
                    what, anchor = f"save output '{name}'", anchors.get(name)
                    if anchor is None:  # the library refuses it, naming what it expects
                        contiguous(array, what, writable=True)
                    else:
                        check_tensor(array, what, anchor.dtype, anchor.shape, writable=True)
                views = _tensor_views(outputs)
                arrays.append((outputs, views))
                entry.replica_id, entry.outputs, entry.num_outputs = replica, views, len(outputs)
            keep["save"] = (replicas, arrays)
            config.save_programs_outputs, config.num_save_programs_outputs = replicas, len(save)
        config.model_name = encoded(options.get("model_name"))
        devices = options.get("devices")
        if devices:
            pointers = (s.c_ptr * len(devices))(*(None if d is None else d._pointer() for d in devices))
            keep["devices"] = pointers
            config.replica_devices, config.num_replica_devices = pointers, len(devices)
        wait = wait_config(options.get("device_wait", 0), options.get("device_poll_interval"))
        if wait is not None:
            keep["wait"] = wait
            config.device_wait_config = ctypes.pointer(wait)
        flush, select = options.get("flush_callback"), options.get("flush_select_callback")
        if flush is not None and select is not None:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                       "ModelRunner: flush_callback and flush_select_callback are "
                                       "both set; set at most one")
        if flush is not None:
            checked_callable(flush, "flush_callback")
            config.flush_callback, config.flush_user_data = _flush_trampoline, hold(flush)
            config.flush_user_data_free = release_held
        if select is not None:
            checked_callable(select, "flush_select_callback")
            config.flush_select_callback, config.flush_user_data = (_flush_select_trampoline,
                                                                    hold(select))
            config.flush_user_data_free = release_held
        return keep

    def _descs(self, function) -> dict[str, DataDesc]:
        descs, count = s.P(s.DataDesc)(), s.c_size()
        function(self._pointer(), ctypes.byref(descs), ctypes.byref(count))
        result = {}
        for i in range(count.value):
            d = descs[i]
            name = d.name.decode()
            result[name] = DataDesc(name, d.size_in_bytes, shape_tuple(d.shape, d.rank),
                                    dtype_of(d.data_type), d.popef_contains_tensor_data)
        return result

    # -- requests ------------------------------------------------------------

    def _checked(self, tensors: Arrays, descs: Mapping[str, DataDesc], direction: str,
                 writable: bool) -> dict[str, np.ndarray]:
        if not isinstance(tensors, Mapping):
            raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                       f"{direction}s: expected a dict of name -> numpy array, "
                                       f"got {type(tensors).__name__}")
        checked = {}
        for name, array in tensors.items():
            if not isinstance(name, str):
                raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                           f"{direction} name {name!r} is not a str")
            desc = descs.get(name)
            if desc is None:
                # The library refuses unknown names itself, naming those it expects.
                checked[name] = contiguous(array, f"{direction} '{name}'", writable)
            else:
                checked[name] = check_tensor(array, f"{direction} '{name}'", desc.dtype,
                                             desc.shape, writable, self._batching_dim)
        return checked

    def _new_outputs(self, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        batch = None
        if self._batching_dim is not None and inputs:
            batch = next(iter(inputs.values())).shape[self._batching_dim]
        outputs = {}
        for d in self.execute_outputs.values():
            shape = list(d.shape)
            if batch is not None and self._batching_dim < len(shape):
                shape[self._batching_dim] = batch
            outputs[d.name] = np.empty(shape, d.dtype)
        return outputs

    def _request(self, inputs: Arrays, outputs: Arrays | None):
        self._pointer()
        checked_in = self._checked(inputs, self.model_inputs, "input", False)
        if outputs is None:
            outputs = self._new_outputs(checked_in)
        checked_out = self._checked(outputs, self.execute_outputs, "output", True)
        return checked_in, checked_out

    def execute(self, inputs: Arrays, outputs: Arrays | None = None,
                replica: int = 0) -> dict[str, np.ndarray]:
        """Runs one request on `replica` and returns the outputs once they
        are written: into `outputs` (arrays the caller provides) or new
        arrays."""
        checked_in, checked_out = self._request(inputs, outputs)
        C.mrt_model_runner_execute(self._pointer(), _tensor_views(checked_in), len(checked_in),
                                   _tensor_views(checked_out), len(checked_out), replica)
        return checked_out

    def execute_async(self, inputs: Arrays, outputs: Arrays | None = None,
                      replica: int = 0) -> Future:
        """Queues one request; the Future's result is the outputs dict. The
        arrays are kept alive until the request is done; do not touch them
        before then. `await runner.execute_async(...)` works in asyncio."""
        checked_in, checked_out = self._request(inputs, outputs)
        in_views, out_views = _tensor_views(checked_in), _tensor_views(checked_out)
        pointer = out_value(C.mrt_model_runner_execute_async, self._pointer(), in_views,
                            len(checked_in), out_views, len(checked_out), replica)
        return Future(pointer, checked_out, (checked_in, in_views, out_views))

    def execute_alloc(self, inputs: Arrays, replica: int = 0) -> TensorMemory:
        """Runs one request with outputs in memory the library allocates."""
        checked_in = self._checked(inputs, self.model_inputs, "input", False)
        pointer = out_value(C.mrt_model_runner_execute_alloc, self._pointer(),
                            _tensor_views(checked_in), len(checked_in), replica)
        return TensorMemory(pointer, self.execute_outputs)

    def execute_async_alloc(self, inputs: Arrays, replica: int = 0) -> Future:
        """As execute_async, with library-allocated outputs: the Future's
        result is a TensorMemory."""
        checked_in = self._checked(inputs, self.model_inputs, "input", False)
        in_views = _tensor_views(checked_in)
        future, memory = s.c_ptr(), s.c_ptr()
        C.mrt_model_runner_execute_async_alloc(self._pointer(), in_views, len(checked_in), replica,
                                               ctypes.byref(future), ctypes.byref(memory))
        return Future(future.value, TensorMemory(memory.value, self.execute_outputs),
                      (checked_in, in_views))

    # -- description, statistics, faults ---------------------------------------

    def model(self) -> Model:
        """The runner's model (a new reference)."""
        return Model._adopt(out_value(C.mrt_model_runner_model, self._pointer()))

    @property
    def num_replicas(self) -> int:
        """The replicas served (replica ids 0 .. num_replicas - 1):
        replication_factor copies x the model's own replication factor."""
        return out_value(C.mrt_model_runner_num_replicas, self._pointer(), out_type=s.c_u32)

    def device_time(self, replica: int = 0) -> DeviceTime:
        """The modelled time on the target of `replica` (0 ..
        num_replicas - 1): the cycles its device (its own lane, for a model
        compiled with replication) has run since it was last loaded (the
        runner's creation, or a reset after a device error), Load and every
        Main run included, and the device's clock (DeviceTime.seconds).
        `runner.device_time() - before` is the modelled time of the requests
        served in between. InvalidArgumentError naming the replica and the
        runner's replicas for one out of range. Any thread."""
        return read_device_time(C.mrt_model_runner_device_cycles, self._pointer(), replica)

    def device_cycles(self, replica: int = 0) -> int:
        """device_time(replica).cycles: as Engine.device_cycles."""
        return self.device_time(replica).cycles

    def config(self) -> dict:
        """The scalar options the runner runs with (durations in seconds,
        None for forever / never)."""
        config = s.RunnerConfig()
        C.mrt_model_runner_config_init_sized(ctypes.byref(config), ctypes.sizeof(config))
        C.mrt_model_runner_get_config(self._pointer(), ctypes.byref(config))
        result = {key: getattr(config, key) for key in self._SCALARS}
        if result["batching_dim"] == BATCHING_DISABLED:
            result["batching_dim"] = None
        result.update({key: _seconds(getattr(config, field))
                       for key, field in self._DURATIONS.items()})
        return result

    def _times(self, function, *arguments) -> RequestTimes:
        times = s.sized(s.RequestTimes)
        function(self._pointer(), *arguments, ctypes.byref(times))
        return RequestTimes(times.request_us, times.read_preparation_us, times.read_queue_us,
                            times.computation_us)

    def time_trace(self, replica: int = 0, index: int = -1) -> RequestTimes:
        """The phases of a recent request of `replica`: index -1 the last,
        else among the kept traces (0 = oldest)."""
        return self._times(C.mrt_model_runner_time_trace, replica, index)

    def statistics_percentile(self, quantile: float, replica: int = 0) -> RequestTimes:
        return self._times(C.mrt_model_runner_statistics_percentile, quantile, replica)

    def statistics_mean(self, replica: int = 0) -> RequestTimes:
        return self._times(C.mrt_model_runner_statistics_mean, replica)

    def statistics_count(self, replica: int = 0) -> RequestTimes:
        """How many requests each phase has seen, ever."""
        return self._times(C.mrt_model_runner_statistics_count, replica)

    def insert_simulated_error(self, step_name: str,
                               error: SimulatedError = SimulatedError.TILE_EXCEPTION,
                               replica: int = 0) -> None:
        """Makes the simulated device of `replica` fail once at the program
        step `step_name` of its next Main run; for tests."""
        C.mrt_model_runner_insert_simulated_error(self._pointer(), int(error), step_name.encode(),
                                                  replica)

    def close(self) -> None:
        """Destroys the runner: pending requests complete with CANCELLED.
        From inside a library callback (a Future's done callback) the
        destruction runs on a thread of its own once the callback returns."""
        super().close()

"""Models loaded from PopEF files, bytes or a ModelBuilder (mrt_model_*)."""
from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Union

import numpy as np

from . import _structs as s
from ._arrays import borrowed_array, copied_bytes, dtype_of, options_argument, shape_tuple
from ._handles import Closable, Handle
from ._native import C, out_value
from .errors import MrtError
from .types import BATCHING_DISABLED, DataSource, ModelOptions, Phase, TensorType

if TYPE_CHECKING:
    from .executables import Executable

PathLike = Union[str, bytes, os.PathLike]


@dataclass(frozen=True)
class ModelInfo:
    """mrt_model_info."""
    executable: str
    replication_factor: int
    num_ipus: int
    ipu_version: int
    is_inference: bool
    seed_handle: str
    package_hash: str
    num_anchors: int
    num_programs: int
    num_engine_options: int
    num_device_options: int
    num_tensor_data: int
    num_feed_data: int
    # For a model of a fused file (fuse_models): the name of the executable
    # the models share; "" for a model with an executable of its own.
    shared_executable: str = ""


@dataclass(frozen=True)
class AnchorInfo:
    """One anchor (mrt_anchor_info): a tensor crossing the host/device boundary."""
    name: str
    handle: str
    dtype: np.dtype
    shape: tuple
    size_in_bytes: int
    programs: tuple
    is_per_replica: bool
    tensor_type: TensorType
    data_source: DataSource
    remote_buffer: str | None
    remote_buffer_repeats: int
    # For the anchor a handler factory is given: the replica its callback
    # will serve (a replicated model's factory is asked once per replica).
    replica: int = 0

    @property
    def is_input(self) -> bool:
        return self.tensor_type == TensorType.INPUT


def anchor_from_struct(a: s.AnchorInfo) -> AnchorInfo:
    return AnchorInfo(a.name.decode(), a.handle.decode(), dtype_of(a.data_type),
                      shape_tuple(a.shape, a.rank), a.size_in_bytes,
                      shape_tuple(a.programs, a.num_programs), a.is_per_replica,
                      TensorType(a.tensor_type), DataSource(a.data_source),
                      a.remote_buffer.decode() if a.remote_buffer else None,
                      a.remote_buffer_repeats, _appended(a, "replica", 0))


def _appended(struct, field: str, default):
    """struct.field if the library filled it (a library older than the
    field sets a smaller struct_size), default otherwise."""
    end = getattr(type(struct), field).offset + getattr(type(struct), field).size
    return getattr(struct, field) if struct.struct_size >= end else default


def paths_argument(paths: PathLike | Iterable[PathLike]):
    """A C array of file names from one path or several."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    names = [os.fsencode(p) for p in paths]
    return (ctypes.c_char_p * max(len(names), 1))(*names), len(names)


def create_for(model: "Model | PathLike | Iterable[PathLike]", with_model, with_files,
               *arguments) -> int:
    """with_model(model, *arguments, &out) for a Model, else
    with_files(paths, count, *arguments, &out) (the runner and session
    constructors take either)."""
    if isinstance(model, Model):
        return out_value(with_model, model._pointer(), *arguments)
    paths, count = paths_argument(model)
    return out_value(with_files, paths, count, *arguments)


class Model(Closable):
    """A model: Model("mlp.popef"), Model(["a.popef", "b.popef"]),
    Model(paths, executable="name") for one of several, Model.from_bytes().

    Immutable: any thread may use it. Views it returns (tensor_data,
    feed_data) keep its memory alive on their own, and runners and sessions
    keep what they need, so close() never leaves anything dangling."""
    _kind = "Model"
    _views_share_handle = True

    def __init__(self, paths: PathLike | Iterable[PathLike], executable: str | None = None):
        array, count = paths_argument(paths)
        if executable is None:
            pointer = out_value(C.mrt_model_load, array, count)
        else:
            pointer = out_value(C.mrt_model_load_named, array, count, executable.encode())
        self._handle = Handle(pointer, C.mrt_model_destroy)

    @classmethod
    def _adopt(cls, pointer: int) -> "Model":
        model = object.__new__(cls)
        model._handle = Handle(pointer, C.mrt_model_destroy)
        return model

    @classmethod
    def from_bytes(cls, data: bytes) -> "Model":
        """A model from the bytes of a PopEF file (copied, checked as files are)."""
        data = bytes(data)
        return cls._adopt(out_value(C.mrt_model_load_from_memory, data, len(data)))

    def write(self, path: PathLike) -> None:
        """Writes the model as one PopEF file (created or truncated)."""
        C.mrt_model_write(self._pointer(), os.fsencode(path))

    def write_split(self, model_path: PathLike, data_path: PathLike) -> None:
        """Writes metadata and executable to model_path and the data blobs
        to data_path; Model([model_path, data_path]) reads them back."""
        C.mrt_model_write_split(self._pointer(), os.fsencode(model_path), os.fsencode(data_path))

    def to_bytes(self) -> bytes:
        """The bytes write() writes to a file."""
        pointer, size = self._pointer(), s.c_size()
        C.mrt_model_write_to_memory(pointer, None, 0, ctypes.byref(size))
        buffer = ctypes.create_string_buffer(max(size.value, 1))
        C.mrt_model_write_to_memory(pointer, buffer, size.value, ctypes.byref(size))
        return buffer.raw[:size.value]

    def executable(self) -> "Executable":
        """The model's executable (deserialized and verified)."""
        from .executables import Executable
        return Executable.from_model(self)

    def executable_bytes(self) -> bytes:
        """The serialized executable (mrt_model_executable), copied."""
        return copied_bytes(C.mrt_model_executable, self._pointer())

    def info(self) -> ModelInfo:
        info = s.sized(s.ModelInfo)
        C.mrt_model_get_info(self._pointer(), ctypes.byref(info))
        return ModelInfo(info.executable.decode(), info.replication_factor, info.num_ipus,
                         info.ipu_version, info.is_inference, (info.seed_handle or b"").decode(),
                         (info.package_hash or b"").decode(), info.num_anchors, info.num_programs,
                         info.num_engine_options, info.num_device_options, info.num_tensor_data,
                         info.num_feed_data,
                         (_appended(info, "shared_executable", None) or b"").decode())

    def anchors(self) -> list[AnchorInfo]:
        pointer = self._pointer()
        result = []
        for index in range(self.info().num_anchors):
            anchor = s.sized(s.AnchorInfo)
            C.mrt_model_anchor(pointer, index, ctypes.byref(anchor))
            result.append(anchor_from_struct(anchor))
        return result

    def anchor(self, name: str) -> AnchorInfo:
        """The anchor named `name` (NotFoundError if none)."""
        anchor = s.sized(s.AnchorInfo)
        C.mrt_model_anchor_by_name(self._pointer(), name.encode(), ctypes.byref(anchor))
        return anchor_from_struct(anchor)

    def anchor_by_handle(self, handle: str) -> AnchorInfo:
        anchor = s.sized(s.AnchorInfo)
        C.mrt_model_anchor_by_handle(self._pointer(), handle.encode(), ctypes.byref(anchor))
        return anchor_from_struct(anchor)

    def options(self, which: ModelOptions = ModelOptions.ENGINE) -> dict[str, str]:
        """The engine (or device) options the model carries, key -> value."""
        info = self.info()
        count = info.num_engine_options if which == ModelOptions.ENGINE else info.num_device_options
        result = {}
        for index in range(count):
            key, value = s.c_str(), s.c_str()
            C.mrt_model_option(self._pointer(), int(which), index, ctypes.byref(key),
                               ctypes.byref(value))
            result[key.value.decode()] = value.value.decode()
        return result

    def with_engine_options(self, options: "dict[str, object] | Iterable[tuple[str, object]]"
                            ) -> "Model":
        """A new Model: this one with engine options set over its own,
        replacing the values of the same keys (blobs are shared, not
        copied; this model is unchanged), for overrides of one run such as
        profiling: {"autoReport.all": "true", "autoReport.directory": DIR}.
        options: a dict or (key, value) pairs, values str (bool as
        "true"/"false", numbers as str()); none: a copy. InvalidArgumentError
        naming the option for an unknown name, a malformed value or a key
        given twice. Any thread."""
        return Model._adopt(out_value(C.mrt_model_with_engine_options, self._pointer(),
                                      options_argument(options, "with_engine_options")))

    def program_flow(self, phase: Phase) -> list[int]:
        """The program indices of `phase`, in run order."""
        programs, count = s.P(s.c_u64)(), s.c_size()
        C.mrt_model_program_flow(self._pointer(), int(phase), ctypes.byref(programs),
                                 ctypes.byref(count))
        return list(shape_tuple(programs, count.value))

    def programs(self) -> dict[int, str]:
        """The programs map: index -> name."""
        result = {}
        for index in range(self.info().num_programs):
            program, name = s.c_u64(), s.c_str()
            C.mrt_model_program(self._pointer(), index, ctypes.byref(program), ctypes.byref(name))
            result[program.value] = (name.value or b"").decode()
        return result

    @property
    def batching_dim(self) -> int | None:
        """The dimension a ModelRunner batches requests along when its
        config leaves batching_dim unset (recorded by compile_onnx's
        batching_dim), or None if the model records none."""
        dim = out_value(C.mrt_model_batching_dim, self._pointer(), out_type=s.c_u32)
        return None if dim == BATCHING_DISABLED else dim

    def _blob_type(self, name: str):
        try:
            anchor = self.anchor(name)
            return anchor.dtype, anchor.shape
        except MrtError:
            return np.dtype(np.uint8), None

    def tensor_data(self, name: str) -> np.ndarray:
        """The TensorData blob `name` as a read-only numpy view of the
        memory-mapped file (no copy), with its anchor's dtype and shape."""
        data, size = s.c_ptr(), s.c_u64()
        C.mrt_model_tensor_data(self._pointer(), name.encode(), ctypes.byref(data), ctypes.byref(size))
        dtype, shape = self._blob_type(name)
        return borrowed_array(data.value, size.value, dtype, shape, self._handle)

    def feed_data(self, name: str) -> np.ndarray:
        """The FeedData blob `name`: a read-only view of its tensors stacked
        along a new first dimension (no copy)."""
        data, size, count = s.c_ptr(), s.c_u64(), s.c_u64()
        C.mrt_model_feed_data(self._pointer(), name.encode(), ctypes.byref(data), ctypes.byref(size),
                              ctypes.byref(count))
        dtype, shape = self._blob_type(name)
        shape = None if shape is None else (count.value,) + tuple(shape)
        return borrowed_array(data.value, size.value, dtype, shape, self._handle)

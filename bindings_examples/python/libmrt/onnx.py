"""Importing ONNX models (mrt_onnx_*; docs/onnx.md)."""
from __future__ import annotations

import ctypes
import os
from typing import Callable, Mapping, Sequence

import numpy as np

from . import _structs as s
from ._arrays import contiguous, data_type_of, dtype_of, i64_array
from ._callbacks import checked_callable, hold, progress_trampoline, release_held, surfacing
from ._native import C, out_value
from .errors import InvalidArgumentError, Status
from .graph import Target
from .models import Model
from .types import DTypeLike

_PRECISIONS = {"f32": 0, "f16": 1}


def compile_onnx(model: str | bytes | os.PathLike, *, target: str | Target = "gc200",
                 num_ipus: int = 1, replication_factor: int = 1, batch_size: int = 1,
                 input_shapes: Mapping[str, Sequence[int]] | None = None, precision: str = "f32",
                 model_name: str | None = None, batching_dim: int | None = None,
                 progress: Callable[[int, int], None] | None = None,
                 num_io_tiles: int = 0) -> Model:
    """Compiles an ONNX model (a path, or the model's bytes) into a Model for
    the simulated IPU, as mrt-compile does (docs/onnx.md).

    target: a system name or a Target (custom rates); batch_size: the value
    of dynamic input dimensions; input_shapes: {input name: shape}
    replacing declared shapes; precision: "f32", or "f16" to compute in
    half precision with the inputs and outputs kept; batching_dim: the
    dimension of every input and output recorded in the model as the one a
    ModelRunner batches requests along (None: none); progress(step, total)
    is called on this thread (an exception it raises is re-raised here);
    num_io_tiles: tiles of each IPU that only stream (the engine option
    exchange.numIOTiles, recorded in the model): operators run on the
    others and prefetched inputs land there while they compute
    (docs/hwsim.md "Overlapped I/O"); below the target's tiles per IPU.
    Raises CorruptModelError, UnimplementedError (every unsupported node
    named), ResourceExhaustedError, InvalidArgumentError, NotFoundError."""
    if precision not in _PRECISIONS:
        raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                       f"precision {precision!r}: expected one of {sorted(_PRECISIONS)}")
    options = s.OnnxOptions()
    C.mrt_onnx_options_init_sized(ctypes.byref(options), ctypes.sizeof(options))
    if isinstance(target, Target):
        options.custom_target = ctypes.pointer(target._struct)
    else:
        options.target = target.encode()
    options.num_ipus = num_ipus
    options.replication_factor = replication_factor
    options.batch_size = batch_size
    options.precision = _PRECISIONS[precision]
    if model_name is not None:
        options.model_name = model_name.encode()
    if batching_dim is not None:
        options.batching_dim = batching_dim
    options.num_io_tiles = num_io_tiles
    shapes = list((input_shapes or {}).items())
    entries = (s.OnnxInputShape * max(len(shapes), 1))()
    dims_alive = []  # the ctypes arrays entries point into
    for entry, (name, shape) in zip(entries, shapes):
        dims, rank = i64_array(shape)
        dims_alive.append(dims)
        entry.name, entry.dims, entry.rank = name.encode(), dims, rank
    options.input_shapes = entries
    options.num_input_shapes = len(shapes)
    if progress is not None:
        checked_callable(progress, "progress callback")
        options.progress = progress_trampoline
        options.user_data = hold(progress)
        options.user_data_free = release_held
    with surfacing():
        if isinstance(model, (bytes, bytearray, memoryview)):
            data = bytes(model)
            pointer = out_value(C.mrt_onnx_compile_memory, data, len(data), ctypes.byref(options))
        else:
            pointer = out_value(C.mrt_onnx_compile_file, os.fsencode(model), ctypes.byref(options))
    return Model._adopt(pointer)


def read_onnx_tensor_file(path: str | os.PathLike, dtype: DTypeLike | None = None,
                          shape: Sequence[int] | None = None, *,
                          out: np.ndarray | None = None) -> np.ndarray:
    """Reads the ONNX TensorProto file at path (the test_data_set_N/input_M.pb
    files ONNX models ship with) as a tensor of `dtype` and `shape` (a new
    array), or into `out` (a C-contiguous writable array, filled in place and
    returned): the input of a compiled model fed with the data it ships
    with: anchor = model.anchor("x"); read_onnx_tensor_file(p, anchor.dtype,
    anchor.shape).

    The file's element type must be the one the compiler gives the device
    (INT64 fills int32, UINT64 uint32, DOUBLE float32: the simulated IPU has
    no 64-bit types) and it must hold as many elements, in any shape.
    Raises NotFoundError ("no such file"), InvalidArgumentError for a path
    that is not a regular file, a file that is not a TensorProto, another
    element type or count (naming the file's and the tensor's), an INT64
    value beyond int32; `out` is then unchanged. Any thread."""
    if out is None:
        if dtype is None or shape is None:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                       "read_onnx_tensor_file: give dtype and shape, or out")
        data_type = data_type_of(dtype)
        array = np.empty(tuple(int(d) for d in shape), dtype_of(data_type))
    else:
        array = contiguous(out, "read_onnx_tensor_file: out", writable=True)
        data_type = data_type_of(array.dtype)
        if dtype is not None and data_type_of(dtype) != data_type:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                       f"read_onnx_tensor_file: out is {array.dtype}, dtype is "
                                       f"{np.dtype(dtype_of(data_type_of(dtype)))}")
        if shape is not None and tuple(shape) != array.shape:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                       f"read_onnx_tensor_file: out has shape {array.shape}, "
                                       f"shape is {tuple(shape)}")
    C.mrt_onnx_read_tensor_file(os.fsencode(path), data_type,
                                array.ctypes.data, array.nbytes)
    return array

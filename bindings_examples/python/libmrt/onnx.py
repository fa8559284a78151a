"""Importing ONNX models (mrt_onnx_*; docs/onnx.md)."""
from __future__ import annotations

import ctypes
import os
from typing import Callable, Mapping, Sequence

from . import _structs as s
from ._arrays import i64_array
from ._callbacks import checked_callable, hold, progress_trampoline, release_held, surfacing
from ._native import C, out_value
from .errors import InvalidArgumentError, Status
from .graph import Target
from .models import Model

_PRECISIONS = {"f32": 0, "f16": 1}


def compile_onnx(model: str | bytes | os.PathLike, *, target: str | Target = "gc200",
                 num_ipus: int = 1, replication_factor: int = 1, batch_size: int = 1,
                 input_shapes: Mapping[str, Sequence[int]] | None = None, precision: str = "f32",
                 model_name: str | None = None, batching_dim: int | None = None,
                 progress: Callable[[int, int], None] | None = None) -> Model:
    """Compiles an ONNX model (a path, or the model's bytes) into a Model for
    the simulated IPU, as mrt-compile does (docs/onnx.md).

    target: a system name or a Target (custom rates); batch_size: the value
    of dynamic input dimensions; input_shapes: {input name: shape}
    replacing declared shapes; precision: "f32", or "f16" to compute in
    half precision with the inputs and outputs kept; batching_dim: the
    dimension of every input and output recorded in the model as the one a
    ModelRunner batches requests along (None: none); progress(step, total)
    is called on this thread (an exception it raises is re-raised here).
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

"""Building models: targets, the codelet library and graphs (mrt_target_*,
mrt_graph_*, mrt_program_*, mrt_ops_*, mrt_codelet_*; docs/graph.md).

Graph objects (tensors, compute sets, vertices, streams, remote buffers,
functions, programs) are the library's 64-bit ids as plain ints owned by
their graph; a wrong or stale id raises InvalidArgumentError from the
library. build_model.py beside this package is the complete example.
"""
from __future__ import annotations

import ctypes
from collections import namedtuple
from typing import Callable, Sequence

import numpy as np

from . import _structs as s
from ._arrays import (contiguous, data_type_of, dtype_of, encoded, options_argument, type_name,
                      u64_array)
from ._callbacks import (NO_FREE, checked_callable, hold, progress_trampoline, release_held,
                         surfacing)
from ._handles import Closable, Handle
from ._native import C, out_value
from .errors import InvalidArgumentError, Status
from .types import DataType, DTypeLike, FieldDirection, SyncType

Tensor = int
ComputeSet = int
Vertex = int
Stream = int
RemoteBuffer = int
Function = int
Program = int


class Target:
    """A system a graph is built for and its cost-model rates (mrt_target):
    Target("gc200"), Target("ipu-model-small", num_ipus=2). Every field of
    mrt_target is an attribute, readable and writable ("what if" targets)."""

    _FIELDS = tuple(name for name, _ in s.Target._fields_ if name != "struct_size")

    def __init__(self, system: str = "gc200", num_ipus: int = 1):
        struct = s.Target()
        C.mrt_target_init_sized(system.encode(), num_ipus, ctypes.byref(struct), ctypes.sizeof(struct))
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
    for index in range(C.mrt_codelet_count()):
        info = s.sized(s.CodeletInfo)
        C.mrt_codelet_get_info(index, ctypes.byref(info))
        fields, attributes = {}, {}
        for field in range(info.num_fields):
            name, direction = s.c_str(), s.c_i32()
            C.mrt_codelet_field(index, field, ctypes.byref(name), ctypes.byref(direction))
            fields[name.value.decode()] = FieldDirection(direction.value)
        for attribute in range(info.num_attributes):
            name, defaults, count = s.c_str(), s.P(ctypes.c_double)(), s.c_size()
            C.mrt_codelet_attribute(index, attribute, ctypes.byref(name), ctypes.byref(defaults),
                                          ctypes.byref(count))
            attributes[name.value.decode()] = tuple(defaults[i] for i in range(count.value))
        result[info.name.decode()] = Codelet(info.name.decode(), info.description.decode(),
                                             fields, attributes)
    return result


# -- graphs -----------------------------------------------------------------

TensorInfo = namedtuple("TensorInfo", "dtype data_type shape num_elements num_bytes "
                        "is_contiguous is_constant")
TileInterval = namedtuple("TileInterval", "begin end tile")


class Graph(Closable):
    """A graph of one replica: Graph(Target("gc200"), replication_factor=1)
    (target may also be a system name, or None for one GC200).

    Element types (dtype parameters) are DataType values or numpy dtypes.
    Methods return ids (ints): tensors, compute sets, vertices, streams,
    remote buffers, functions, programs. Program constructors take an
    optional debug `name`. The ops helpers (create_tensor, unary, binary,
    binary_in_place, fill, matmul, matmul_preloaded_rhs, create_matmul_input,
    reduce, softmax, argmax) append to a Sequence program and return new, mapped tensors."""
    _kind = "Graph"

    def __init__(self, target: Target | str | None = None, replication_factor: int = 1):
        if isinstance(target, str):
            target = Target(target)
        struct = None if target is None else ctypes.byref(target._struct)
        self._handle = Handle(out_value(C.mrt_graph_create, struct, replication_factor),
                              C.mrt_graph_destroy)

    def _id(self, function, *arguments) -> int:
        return out_value(function, self._pointer(), *arguments, out_type=s.c_u64)

    def target(self) -> Target:
        struct = s.sized(s.Target)
        C.mrt_graph_get_target(self._pointer(), ctypes.byref(struct))
        return Target._from_struct(struct)

    def replication_factor(self) -> int:
        out = s.c_u32()
        C.mrt_graph_replication_factor(self._pointer(), ctypes.byref(out))
        return out.value

    # Tensors.
    def add_variable(self, dtype: DTypeLike, shape: Sequence[int], name: str | None = None) -> Tensor:
        dims, rank = u64_array(shape)
        return self._id(C.mrt_graph_add_variable, data_type_of(dtype), dims, rank, encoded(name))

    def add_constant(self, array: np.ndarray, dtype: DTypeLike | None = None,
                     name: str | None = None) -> Tensor:
        """A constant holding a numpy array (its shape and bytes). With
        dtype given, the array's dtype must be that type's."""
        array = contiguous(np.asarray(array) if not isinstance(array, np.ndarray) else array,
                            f"constant '{name or ''}'")
        if dtype is None:
            data_type = data_type_of(array.dtype)
        else:
            data_type = data_type_of(dtype)
            if array.dtype != dtype_of(data_type) or data_type not in DataType._value2member_map_:
                raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                               f"constant '{name or ''}': expected dtype {dtype_of(data_type)} for "
                               f"{type_name(data_type)}, got {array.dtype}")
        dims, rank = u64_array(array.shape)
        return self._id(C.mrt_graph_add_constant, data_type, dims, rank, array.ctypes.data,
                        array.nbytes, encoded(name))

    def add_constant_filled(self, dtype: DTypeLike, shape: Sequence[int], value: float,
                            name: str | None = None) -> Tensor:
        dims, rank = u64_array(shape)
        return self._id(C.mrt_graph_add_constant_filled, data_type_of(dtype), dims, rank, value,
                        encoded(name))

    def tensor_info(self, tensor: Tensor) -> TensorInfo:
        info = s.sized(s.TensorInfo)
        C.mrt_graph_tensor_info(self._pointer(), tensor, ctypes.byref(info))
        shape = tuple(info.shape[i] for i in range(info.rank)) if info.rank else ()
        return TensorInfo(dtype_of(info.data_type), DataType(info.data_type), shape,
                          info.num_elements, info.num_bytes, info.is_contiguous, info.is_constant)

    def slice(self, tensor: Tensor, begin: int, end: int, dim: int = 0) -> Tensor:
        return self._id(C.mrt_graph_slice, tensor, begin, end, dim)

    def index(self, tensor: Tensor, index: int) -> Tensor:
        return self._id(C.mrt_graph_index, tensor, index)

    def reshape(self, tensor: Tensor, shape: Sequence[int]) -> Tensor:
        dims, rank = u64_array(shape)
        return self._id(C.mrt_graph_reshape, tensor, dims, rank)

    def flatten(self, tensor: Tensor) -> Tensor:
        return self._id(C.mrt_graph_flatten, tensor)

    def transpose(self, tensor: Tensor) -> Tensor:
        return self._id(C.mrt_graph_transpose, tensor)

    def concat(self, tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
        ids, count = u64_array(tensors)
        return self._id(C.mrt_graph_concat, ids, count, dim)

    # Tile mapping.
    def set_tile_mapping(self, tensor: Tensor, tile: int) -> None:
        C.mrt_graph_set_tile_mapping(self._pointer(), tensor, tile)

    def map_linearly(self, tensor: Tensor, grain_size: int = 1, first_tile: int = 0,
                     num_tiles: int = 0) -> None:
        C.mrt_graph_map_linearly(self._pointer(), tensor, grain_size, first_tile, num_tiles)

    def tile_mapping(self, tensor: Tensor) -> list:
        """The mapping as TileInterval(begin, end, tile) runs of flat elements."""
        pointer, count = self._pointer(), s.c_size()
        C.mrt_graph_tile_mapping(pointer, tensor, None, 0, ctypes.byref(count))
        intervals = (s.TileInterval * max(count.value, 1))()
        C.mrt_graph_tile_mapping(pointer, tensor, intervals, count.value, ctypes.byref(count))
        return [TileInterval(i.begin, i.end, i.tile) for i in intervals[:count.value]]

    # Compute sets and vertices.
    def add_compute_set(self, name: str | None = None) -> ComputeSet:
        return self._id(C.mrt_graph_add_compute_set, encoded(name))

    def add_vertex(self, compute_set: ComputeSet, codelet: str, tile: int = 0,
                   connections: dict | None = None, attributes: dict | None = None) -> Vertex:
        """A vertex of a built-in codelet on `tile`, its fields connected as
        connections says ({field: tensor}) and attributes set ({name: value
        or values})."""
        vertex = self._id(C.mrt_graph_add_vertex, compute_set, codelet.encode(), tile)
        for field, tensor in (connections or {}).items():
            self.connect(vertex, field, tensor)
        for attribute, values in (attributes or {}).items():
            self.set_vertex_attribute(vertex, attribute, values)
        return vertex

    def connect(self, vertex: Vertex, field: str, tensor: Tensor) -> None:
        C.mrt_graph_connect(self._pointer(), vertex, field.encode(), tensor)

    def set_vertex_attribute(self, vertex: Vertex, attribute: str,
                             values: float | Sequence[float]) -> None:
        """values: a number or a sequence of numbers (empty: the default)."""
        values = [float(values)] if np.isscalar(values) else [float(v) for v in values]
        array = (ctypes.c_double * max(len(values), 1))(*values)
        C.mrt_graph_set_vertex_attribute(self._pointer(), vertex, attribute.encode(), array,
                                               len(values))

    # Host communication, remote buffers, functions.
    def add_host_to_device_fifo(self, handle: str, dtype: DTypeLike, num_elements: int) -> Stream:
        return self._id(C.mrt_graph_add_host_to_device_fifo, handle.encode(), data_type_of(dtype),
                        num_elements)

    def add_device_to_host_fifo(self, handle: str, dtype: DTypeLike, num_elements: int) -> Stream:
        return self._id(C.mrt_graph_add_device_to_host_fifo, handle.encode(), data_type_of(dtype),
                        num_elements)

    def create_host_write(self, handle: str, tensor: Tensor) -> None:
        C.mrt_graph_create_host_write(self._pointer(), handle.encode(), tensor)

    def create_host_read(self, handle: str, tensor: Tensor) -> None:
        C.mrt_graph_create_host_read(self._pointer(), handle.encode(), tensor)

    def add_remote_buffer(self, handle: str, dtype: DTypeLike, num_elements: int,
                          repeats: int = 1) -> RemoteBuffer:
        return self._id(C.mrt_graph_add_remote_buffer, handle.encode(), data_type_of(dtype),
                        num_elements, repeats)

    def add_function(self, body: Program) -> Function:
        return self._id(C.mrt_graph_add_function, body)

    # Programs.
    def sequence(self, *programs: Program, name: str | None = None) -> Program:
        ids, count = u64_array(programs)
        return self._id(C.mrt_program_sequence, ids, count, encoded(name))

    def sequence_add(self, sequence: Program, *programs: Program) -> None:
        for program in programs:
            C.mrt_program_sequence_add(self._pointer(), sequence, program)

    def execute(self, compute_set: ComputeSet, name: str | None = None) -> Program:
        return self._id(C.mrt_program_execute, compute_set, encoded(name))

    def copy(self, source: Tensor, destination: Tensor, name: str | None = None) -> Program:
        return self._id(C.mrt_program_copy, source, destination, encoded(name))

    def copy_from_stream(self, stream: Stream, destination: Tensor, name: str | None = None) -> Program:
        return self._id(C.mrt_program_copy_from_stream, stream, destination, encoded(name))

    def copy_to_stream(self, source: Tensor, stream: Stream, name: str | None = None) -> Program:
        return self._id(C.mrt_program_copy_to_stream, source, stream, encoded(name))

    def copy_from_remote_buffer(self, buffer: RemoteBuffer, destination: Tensor, slot: int = 0,
                                slot_tensor: Tensor = 0, name: str | None = None) -> Program:
        return self._id(C.mrt_program_copy_from_remote_buffer, buffer, destination, slot,
                        slot_tensor, encoded(name))

    def copy_to_remote_buffer(self, source: Tensor, buffer: RemoteBuffer, slot: int = 0,
                              slot_tensor: Tensor = 0, name: str | None = None) -> Program:
        return self._id(C.mrt_program_copy_to_remote_buffer, source, buffer, slot, slot_tensor,
                        encoded(name))

    def repeat(self, count: int, body: Program, name: str | None = None) -> Program:
        return self._id(C.mrt_program_repeat, count, body, encoded(name))

    def repeat_while(self, condition: Program, predicate: Tensor, body: Program,
                     while_true: bool = True, name: str | None = None) -> Program:
        return self._id(C.mrt_program_repeat_while, condition, predicate, body, while_true,
                        encoded(name))

    def if_(self, predicate: Tensor, then_body: Program, else_body: Program = 0,
            name: str | None = None) -> Program:
        return self._id(C.mrt_program_if, predicate, then_body, else_body, encoded(name))

    def switch(self, control: Tensor, cases: dict | None = None, default_body: Program = 0,
               name: str | None = None) -> Program:
        """A Switch on a scalar S32/U32 tensor; cases maps value -> body."""
        program = self._id(C.mrt_program_switch, control, default_body, encoded(name))
        for value, body in (cases or {}).items():
            self.switch_add_case(program, value, body)
        return program

    def switch_add_case(self, switch: Program, value: int, body: Program) -> None:
        C.mrt_program_switch_add_case(self._pointer(), switch, value, body)

    def sync(self, sync_type: int = SyncType.INTERNAL, name: str | None = None) -> Program:
        return self._id(C.mrt_program_sync, int(sync_type), encoded(name))

    def call(self, function: Function, name: str | None = None) -> Program:
        return self._id(C.mrt_program_call, function, encoded(name))

    def write_undef(self, tensor: Tensor, name: str | None = None) -> Program:
        return self._id(C.mrt_program_write_undef, tensor, encoded(name))

    def print_tensor(self, title: str, tensor: Tensor) -> Program:
        return self._id(C.mrt_program_print_tensor, title.encode(), tensor)

    # Ops (PopLibs-like): tiles [first_tile, first_tile + num_tiles), 0 = to the last.
    def create_tensor(self, dtype: DTypeLike, shape: Sequence[int], name: str | None = None,
                      first_tile: int = 0,
                      num_tiles: int = 0) -> Tensor:
        dims, rank = u64_array(shape)
        return self._id(C.mrt_ops_create_tensor, data_type_of(dtype), dims, rank, encoded(name),
                        first_tile, num_tiles)

    def unary(self, sequence: Program, codelet: str, tensor: Tensor, out_dtype: DTypeLike | None = None,
              name: str | None = None) -> Tensor:
        out_type = -1 if out_dtype is None else data_type_of(out_dtype)
        return self._id(C.mrt_ops_unary, sequence, codelet.encode(), tensor, out_type, encoded(name))

    def binary(self, sequence: Program, codelet: str, a: Tensor, b: Tensor,
               name: str | None = None) -> Tensor:
        return self._id(C.mrt_ops_binary, sequence, codelet.encode(), a, b, encoded(name))

    def binary_in_place(self, sequence: Program, codelet: str, a: Tensor, b: Tensor) -> None:
        C.mrt_ops_binary_in_place(self._pointer(), sequence, codelet.encode(), a, b)

    def fill(self, sequence: Program, tensor: Tensor, value: float) -> None:
        C.mrt_ops_fill(self._pointer(), sequence, tensor, value)

    def matmul(self, sequence: Program, a: Tensor, b: Tensor, out_dtype: DTypeLike | None = None,
               name: str | None = None,
               first_tile: int = 0, num_tiles: int = 0) -> Tensor:
        out_type = -1 if out_dtype is None else data_type_of(out_dtype)
        return self._id(C.mrt_ops_matmul, sequence, a, b, out_type, encoded(name), first_tile,
                        num_tiles)

    def matmul_preloaded_rhs(self, sequence: Program, load_sequence: Program, a: Tensor,
                             b: Tensor, out_dtype: DTypeLike | None = None,
                             name: str | None = None, first_tile: int = 0,
                             num_tiles: int = 0) -> Tensor:
        """matmul() with b holding weights: values written only by
        load_sequence (a Sequence other than `sequence`, run before it, such
        as the model's Load program, whose writes of b are already
        appended), never by `sequence`. The copies of b to the tiles that
        multiply it are appended to load_sequence, so each run of `sequence`
        exchanges only a. Lay a and b out with create_matmul_input(
        MatmulOperand.LHS_OF_PRELOADED / RHS_PRELOADED, ...).
        InvalidArgumentError naming load_sequence when it is `sequence` or
        not a Sequence."""
        out_type = -1 if out_dtype is None else data_type_of(out_dtype)
        return self._id(C.mrt_ops_matmul_preloaded_rhs, sequence, load_sequence, a, b, out_type,
                        encoded(name), first_tile, num_tiles)

    def create_matmul_input(self, operand: int, dtype: DTypeLike, a_shape: Sequence[int],
                            b_shape: Sequence[int], name: str | None = None,
                            first_tile: int = 0, num_tiles: int = 0) -> Tensor:
        """A variable laid out for `operand` (MatmulOperand.LHS/RHS) of the
        [M,K] x [K,N] product matmul() over the same tiles computes
        (LHS_OF_PRELOADED/RHS_PRELOADED: of matmul_preloaded_rhs())."""
        if len(a_shape) != 2 or len(b_shape) != 2:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                           f"create_matmul_input: a_shape and b_shape must have 2 dimensions, got "
                           f"{list(a_shape)} and {list(b_shape)}")
        a_dims, _ = u64_array(a_shape)
        b_dims, _ = u64_array(b_shape)
        return self._id(C.mrt_ops_create_matmul_input, int(operand), data_type_of(dtype), a_dims,
                        b_dims, encoded(name), first_tile, num_tiles)

    def reduce(self, sequence: Program, codelet: str, tensor: Tensor, axes: Sequence[int] = (),
               name: str | None = None,
               first_tile: int = 0, num_tiles: int = 0) -> Tensor:
        """codelet ReduceSum/Max/Min/Mean over `axes` (empty: all)."""
        ids, count = u64_array(axes)
        return self._id(C.mrt_ops_reduce, sequence, codelet.encode(), tensor, ids, count,
                        encoded(name), first_tile, num_tiles)

    def softmax(self, sequence: Program, tensor: Tensor, name: str | None = None, first_tile: int = 0,
                num_tiles: int = 0) -> Tensor:
        return self._id(C.mrt_ops_softmax, sequence, tensor, encoded(name), first_tile, num_tiles)

    def argmax(self, sequence: Program, tensor: Tensor, name: str | None = None, first_tile: int = 0,
               num_tiles: int = 0) -> Tensor:
        return self._id(C.mrt_ops_argmax, sequence, tensor, encoded(name), first_tile, num_tiles)

    # Compiling.
    def compile(self, programs: Sequence[Program], options: dict | None = None,
                progress: Callable[[int, int], None] | None = None) -> "Executable":
        """Compiles the graph: programs[i] is program i of the executable.
        options: engine options (dict); progress(step, total_steps) is called
        on this thread (an exception it raises is re-raised here). A graph
        compiles once (then it is frozen)."""
        from .executables import Executable
        ids, count = u64_array(programs)
        callback = (s.PROGRESS_FN(), None, NO_FREE)
        if progress is not None:
            checked_callable(progress, "progress callback")
            callback = (progress_trampoline, hold(progress), release_held)
        with surfacing():
            pointer = out_value(C.mrt_graph_compile, self._pointer(), ids, count,
                                options_argument(options), *callback)
        return Executable(pointer)

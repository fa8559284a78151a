"""Compiled graphs (mrt_executable_*): what they hold and cost."""
from __future__ import annotations

import ctypes
from collections import namedtuple
from typing import TYPE_CHECKING

import numpy as np

from . import _structs as s
from ._arrays import borrowed_array, copied_bytes, dtype_of
from ._handles import Closable, Handle
from ._native import C
from .graph import Target
from .types import HandleKind

if TYPE_CHECKING:
    from .models import Model

ExecutableInfo = namedtuple("ExecutableInfo", "hash replication_factor num_ipus num_programs "
                            "num_tiles num_streams num_remote_buffers num_host_reads "
                            "num_host_writes num_steps total_memory_bytes max_tile_memory_bytes "
                            "max_memory_tile bytes_per_tile")
StepInfo = namedtuple("StepInfo", "kind name modelled_cycles")
HandleInfo = namedtuple("HandleInfo", "handle kind dtype num_elements repeats")
PipelineInfo = namedtuple("PipelineInfo", "num_stages latency_cycles interval_cycles")
PipelineInfo.__doc__ = """A program as a pipeline over the IPUs of a replica (docs/hwsim.md
"Pipelining"): num_stages (1: not a pipeline); latency_cycles of one run
alone; interval_cycles between the ends of streamed runs (the slowest
stage plus the slowest transfer; latency_cycles when not a pipeline)."""


class Executable(Closable):
    """A compiled graph (Graph.compile, Executable.deserialize(bytes),
    Executable.from_model(model)). Immutable; any thread."""
    _kind = "Executable"

    def __init__(self, pointer: int):
        self._handle = Handle(pointer, C.mrt_executable_destroy)

    _views_share_handle = True  # memory_per_tile views keep it alive

    @classmethod
    def deserialize(cls, data: bytes) -> "Executable":
        data = bytes(data)
        out = s.c_ptr()
        C.mrt_executable_deserialize(data, len(data), ctypes.byref(out))
        return cls(out.value)

    @classmethod
    def from_model(cls, model: "Model") -> "Executable":
        out = s.c_ptr()
        C.mrt_model_get_executable(model._pointer(), ctypes.byref(out))
        return cls(out.value)

    def serialize(self) -> bytes:
        return copied_bytes(C.mrt_executable_serialize, self._pointer())

    def info(self) -> ExecutableInfo:
        info = s.sized(s.ExecutableInfo)
        C.mrt_executable_get_info(self._pointer(), ctypes.byref(info))
        return ExecutableInfo(*(getattr(info, f) for f in ExecutableInfo._fields))

    def target(self) -> Target:
        struct = s.sized(s.Target)
        C.mrt_executable_get_target(self._pointer(), ctypes.byref(struct))
        return Target._from_struct(struct)

    def memory_per_tile(self) -> np.ndarray:
        """Bytes used on each tile of one replica: a read-only uint64 view."""
        data, count = s.P(s.c_u64)(), s.c_size()
        C.mrt_executable_memory_per_tile(self._pointer(), ctypes.byref(data),
                                               ctypes.byref(count))
        address = ctypes.cast(data, s.c_ptr).value
        return borrowed_array(address, count.value * 8, np.dtype(np.uint64), None, self._handle)

    def steps(self) -> list:
        pointer = self._pointer()
        result = []
        for index in range(self.info().num_steps):
            step = s.sized(s.StepInfo)
            C.mrt_executable_step(pointer, index, ctypes.byref(step))
            result.append(StepInfo(step.kind.decode(), (step.name or b"").decode(),
                                   step.modelled_cycles))
        return result

    def program_name(self, program: int) -> str:
        out = s.c_str()
        C.mrt_executable_program_name(self._pointer(), program, ctypes.byref(out))
        return (out.value or b"").decode()

    def pipeline(self, program: int) -> PipelineInfo:
        """Program `program` (< info().num_programs) as a pipeline over the
        IPUs of a replica: steps on one IPU after another, joined by copies
        between IPUs, are its stages. A ModelRunner streams requests through
        the stages of a pipelined Main program. Cycles are modelled; divide
        by target().clock_hz for seconds. InvalidArgumentError for a program
        out of range."""
        info = s.sized(s.PipelineInfo)
        C.mrt_executable_pipeline(self._pointer(), program, ctypes.byref(info))
        return PipelineInfo(info.num_stages, info.latency_cycles, info.interval_cycles)

    def handles(self) -> dict:
        """Every stream, remote buffer and host read/write: handle -> HandleInfo."""
        pointer, info = self._pointer(), self.info()
        result = {}
        for kind, count in ((HandleKind.HOST_TO_DEVICE, info.num_streams),
                            (HandleKind.REMOTE_BUFFER, info.num_remote_buffers),
                            (HandleKind.HOST_WRITE, info.num_host_writes),
                            (HandleKind.HOST_READ, info.num_host_reads)):
            for index in range(count):
                h = s.sized(s.HandleInfo)
                C.mrt_executable_handle(pointer, kind, index, ctypes.byref(h))
                name = h.handle.decode()
                result[name] = HandleInfo(name, HandleKind(h.kind), dtype_of(h.data_type),
                                          h.num_elements, h.repeats)
        return result

"""Writing models: a Model made from an Executable (mrt_model_builder_*)."""
from __future__ import annotations

import ctypes

import numpy as np

from . import _structs as s
from ._arrays import contiguous, data_type_of, encoded, i64_array, u64_array
from ._handles import Closable, Handle
from ._native import C, out_value
from .errors import InvalidArgumentError, Status
from .executables import Executable
from .models import Model
from .types import DataSource, ModelOptions

class ModelBuilder(Closable):
    """Makes a Model from an Executable: ModelBuilder("name", executable),
    then set_program_flow, add_anchor, add_tensor_data, ..., build()."""
    _kind = "ModelBuilder"

    def __init__(self, name: str, executable: Executable):
        self._handle = Handle(out_value(C.mrt_model_builder_create, name.encode(),
                                        executable._pointer()), C.mrt_model_builder_destroy)

    def set_inference(self, is_inference: bool) -> None:
        C.mrt_model_builder_set_inference(self._pointer(), is_inference)

    def set_option(self, key: str, value: str, options: int = ModelOptions.ENGINE) -> None:
        C.mrt_model_builder_set_option(self._pointer(), int(options), key.encode(),
                                             str(value).encode())

    def set_seed_handle(self, handle: str) -> None:
        C.mrt_model_builder_set_seed_handle(self._pointer(), handle.encode())

    def set_program_name(self, program: int, name: str) -> None:
        C.mrt_model_builder_set_program_name(self._pointer(), program, name.encode())

    def set_program_flow(self, phase: int, programs) -> None:
        """The program indices of phase (Phase.LOAD/MAIN/SAVE), in run order."""
        ids, count = u64_array(programs)
        C.mrt_model_builder_set_program_flow(self._pointer(), int(phase), ids, count)

    def add_anchor(self, handle: str, shape, programs, name: str | None = None,
                   is_per_replica: bool = False, data_source: int = DataSource.NONE) -> None:
        """An anchor naming stream or remote buffer `handle`, moved by the
        program indices `programs`."""
        config = s.AnchorConfig()
        C.mrt_anchor_config_init_sized(ctypes.byref(config), ctypes.sizeof(config))
        dims, rank = i64_array(shape)
        ids, count = u64_array(programs)
        config.name = encoded(name)
        config.handle = handle.encode()
        config.shape, config.rank = dims, rank
        config.programs, config.num_programs = ids, count
        config.is_per_replica = is_per_replica
        config.data_source = int(data_source)
        C.mrt_model_builder_add_anchor(self._pointer(), ctypes.byref(config))

    def add_tensor_data(self, name: str, array: np.ndarray) -> None:
        """A TensorData blob: the array's bytes, dtype and shape (copied)."""
        array = contiguous(array, f"TensorData '{name}'")
        dims, rank = i64_array(array.shape)
        C.mrt_model_builder_add_tensor_data(self._pointer(), name.encode(),
                                                  data_type_of(array.dtype), dims, rank,
                                                  array.ctypes.data, array.nbytes)

    def add_feed_data(self, name: str, array: np.ndarray) -> None:
        """A FeedData blob: array[i] is tensor i (copied)."""
        array = contiguous(array, f"FeedData '{name}'")
        if array.ndim < 1:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                       f"FeedData '{name}': needs a leading dimension")
        dims, rank = i64_array(array.shape[1:])
        C.mrt_model_builder_add_feed_data(self._pointer(), name.encode(),
                                                data_type_of(array.dtype), dims, rank,
                                                array.ctypes.data, array.nbytes, array.shape[0])

    def build(self) -> "Model":
        """The model, checked as a loaded file is; the builder stays usable."""
        return Model._adopt(out_value(C.mrt_model_builder_build, self._pointer()))

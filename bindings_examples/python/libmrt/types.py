"""The enums and constants of mrt_c.h, and the duration convention."""
from __future__ import annotations

import enum
import math
from typing import TYPE_CHECKING, Union

from .errors import InvalidArgumentError, Status

if TYPE_CHECKING:
    import numpy as np


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


class BlobType(enum.IntEnum):
    """mrt_blob_type: the kinds of PopEF blob (docs/popef.md)."""
    METADATA = 1
    EXECUTABLE = 2
    TENSOR_DATA = 3
    FEED_DATA = 4
    OPAQUE = 5


class LogLevel(enum.IntEnum):
    OFF = 0
    ERR = 1
    WARN = 2
    INFO = 3
    DEBUG = 4
    TRACE = 5


class TensorType(enum.IntEnum):
    INPUT = 0
    OUTPUT = 1
    UNKNOWN = 2


class DataSource(enum.IntEnum):
    NONE = 0
    TENSOR_DATA = 1
    FEED_DATA = 2


class Phase(enum.IntEnum):
    LOAD = 0
    MAIN = 1
    SAVE = 2


class ModelOptions(enum.IntEnum):
    ENGINE = 0
    DEVICE = 1


class LaunchPolicy(enum.IntEnum):
    IMMEDIATE = 0
    DEFERRED = 1


class PredicateKind(enum.IntEnum):
    ANCHOR_CALLBACK = 0
    POPEF_DATA_USAGE = 1


class CallbackPolicy(enum.IntEnum):
    """Results of ANCHOR_CALLBACK predicates."""
    BIND_USER_CB = 0
    BIND_EMPTY_CB = 1
    SKIP_CB = 2


class PopefDataUsage(enum.IntEnum):
    """Results of POPEF_DATA_USAGE predicates."""
    USE_POPEF_DATA_IF_ANY = 0
    USE_USER_DATA = 1


class PrebuiltPredicate(enum.IntEnum):
    PROGRAM_FLOW_LOAD = 0
    PROGRAM_FLOW_MAIN = 1
    PROGRAM_FLOW_SAVE = 2
    PROGRAM_NOT_ASSIGNED = 3
    NON_SCALAR_TYPE = 4
    PROGRAM_INDEXES = 5


class AnchorSet(enum.IntEnum):
    INPUTS = 0
    USER_INPUTS = 1
    USER_OUTPUTS = 2


class SimulatedError(enum.IntEnum):
    TILE_EXCEPTION = 0
    MEMORY_PARITY = 1
    EXCHANGE_ERROR = 2
    HOST_LINK_ERROR = 3


class MatmulOperand(enum.IntEnum):
    """Which operand of a matmul create_matmul_input lays a variable out
    for: of matmul() (LHS, RHS) or of matmul_preloaded_rhs()
    (LHS_OF_PRELOADED, RHS_PRELOADED)."""
    LHS = 0
    RHS = 1
    LHS_OF_PRELOADED = 2
    RHS_PRELOADED = 3


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


class ProfileFormat(enum.IntEnum):
    SUMMARY = 0
    INTERVALS = 1
    TRACE = 2


# An element type: a DataType (or its int), or anything numpy.dtype() takes.
DTypeLike = Union[DataType, int, "np.dtype", type, str]

ALL_REPLICAS = 0xFFFFFFFF
BATCHING_DISABLED = 0xFFFFFFFF

# mrt_c.h's duration convention: negative (MRT_TIMEOUT_FOREVER) waits
# forever / never fires, 0 does not wait, > 0 is a bound in nanoseconds.
# Bindings take durations in seconds with None for "forever".
TIMEOUT_FOREVER_NS = -1


def duration_ns(seconds: float | None, what: str) -> int:
    """The library's nanoseconds for a duration in seconds (None: forever)."""
    if seconds is None:
        return TIMEOUT_FOREVER_NS
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or \
            math.isnan(seconds) or seconds < 0:
        raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                   f"{what}: expected seconds >= 0 or None (forever), got {seconds!r}")
    return min(int(seconds * 1e9), 2**63 - 1)

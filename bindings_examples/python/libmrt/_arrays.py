"""numpy <-> library conversions: element types, checks, borrowed views."""
from __future__ import annotations

import ctypes
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .errors import InvalidArgumentError, Status
from .types import DataType

_NUMPY_TYPES = {DataType.BOOL: np.bool_, DataType.U8: np.uint8, DataType.S8: np.int8,
                DataType.U16: np.uint16, DataType.S16: np.int16, DataType.S32: np.int32,
                DataType.U32: np.uint32, DataType.S64: np.int64, DataType.U64: np.uint64,
                DataType.F16: np.float16, DataType.F32: np.float32, DataType.F64: np.float64}
_DATA_TYPES = {np.dtype(v): k for k, v in _NUMPY_TYPES.items()}


def dtype_of(data_type: int) -> np.dtype:
    """The numpy dtype of an mrt_data_type (uint8 bytes for an unknown one)."""
    return np.dtype(_NUMPY_TYPES.get(data_type, np.uint8))


def data_type_of(value: Any) -> int:
    """An mrt_data_type from a DataType/int or anything np.dtype() takes."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    try:
        return int(_DATA_TYPES[np.dtype(value)])
    except (TypeError, KeyError):
        raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                   f"no mrt data type for {value!r}") from None


def type_name(data_type: int) -> str:
    try:
        return DataType(data_type).name
    except ValueError:
        return str(data_type)


def contiguous(array: Any, what: str, writable: bool = False) -> np.ndarray:
    """array itself, checked to be a C-contiguous (and writable) ndarray:
    the library reads or writes its memory directly, without copies."""
    if not isinstance(array, np.ndarray):
        raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                   f"{what}: expected a numpy array, got {type(array).__name__}")
    if not array.flags.c_contiguous:
        raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                   f"{what}: the array must be C-contiguous (np.ascontiguousarray)")
    if writable and not array.flags.writeable:
        raise InvalidArgumentError(Status.INVALID_ARGUMENT, f"{what}: the array is read-only")
    return array


def check_tensor(array: Any, what: str, dtype: np.dtype, shape: Sequence[int],
                 writable: bool = False, free_dim: int | None = None) -> np.ndarray:
    """array checked against a model tensor: C-contiguous ndarray of exactly
    `dtype` and `shape`; free_dim, if given, may have any positive size
    (a batch dimension)."""
    contiguous(array, what, writable)
    shape = tuple(shape)
    if array.dtype != dtype:
        raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                   f"{what}: expected dtype {dtype}, got {array.dtype}")
    if free_dim is None or free_dim >= len(shape):
        shape_ok = array.shape == shape
        expected = f"shape {shape}"
    else:
        shape_ok = (array.ndim == len(shape) and array.shape[free_dim] > 0 and
                    all(a == b for i, (a, b) in enumerate(zip(array.shape, shape)) if i != free_dim))
        expected = "shape " + str(tuple("N" if i == free_dim else d for i, d in enumerate(shape)))
    if not shape_ok:
        raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                   f"{what}: expected {expected} {dtype}, got shape {array.shape}")
    return array


def borrowed_array(address: int, size: int, dtype: np.dtype, shape: Sequence[int] | None,
                   owner: Any, writable: bool = False) -> np.ndarray:
    """A numpy view of `size` bytes of library memory at address (no copy),
    of dtype and shape when they fit, keeping `owner` (whatever keeps the
    memory valid) alive as long as the view lives."""
    buffer = (ctypes.c_char * size).from_address(address) if size else bytearray()
    if size:
        buffer._libmrt_owner = owner
    array = np.frombuffer(buffer, dtype=np.uint8)
    if dtype.itemsize and size % dtype.itemsize == 0:
        array = array.view(dtype)
        if shape is not None and int(np.prod(shape, dtype=np.int64)) == array.size:
            array = array.reshape(tuple(shape))
    array.flags.writeable = writable and size > 0
    return array


def callback_array(address: int, size: int, dtype: np.dtype,
                   shape: Sequence[int] | None) -> np.ndarray:
    """A writable view of a buffer the library passes to a callback, valid
    only during the call."""
    return borrowed_array(address, size, dtype, shape, None, writable=True)


def copied_bytes(function, *arguments) -> bytes:
    """The bytes function(*arguments, &data, &size) points to, copied."""
    data, size = ctypes.c_void_p(), ctypes.c_uint64()
    function(*arguments, ctypes.byref(data), ctypes.byref(size))
    return ctypes.string_at(data.value, size.value) if size.value else b""


def u64_array(values: Iterable[int]):
    values = [int(v) for v in values]
    return (ctypes.c_uint64 * max(len(values), 1))(*values), len(values)


def i64_array(values: Iterable[int]):
    values = [int(v) for v in values]
    return (ctypes.c_int64 * max(len(values), 1))(*values), len(values)


def shape_tuple(pointer, rank: int) -> tuple[int, ...]:
    return tuple(int(pointer[i]) for i in range(rank)) if rank else ()


def options_argument(options: "Mapping[str, Any] | Iterable[tuple[str, Any]] | None",
                     what: str = "options"):
    """A NULL-terminated key/value char* array from a dict or an iterable of
    (key, value) pairs, kept in order (None or empty: NULL)."""
    if isinstance(options, (str, bytes)):
        raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                   f"{what}: expected a dict or (key, value) pairs, got a string")
    pairs = list(options.items() if isinstance(options, Mapping) else options or ())
    if not pairs:
        return None
    items = []
    for pair in pairs:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise InvalidArgumentError(Status.INVALID_ARGUMENT,
                                       f"{what}: {pair!r} is not a (key, value) pair")
        key, value = pair
        if isinstance(value, bool):
            value = "true" if value else "false"
        items += [str(key).encode(), str(value).encode()]
    return (ctypes.c_char_p * (len(items) + 1))(*items, None)


def encoded(name: str | None) -> bytes | None:
    return None if name is None else name.encode()

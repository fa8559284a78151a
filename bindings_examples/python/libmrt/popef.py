"""Inspecting PopEF files as far as they can be read (mrt_popef_listing_*),
what mrt-info shows: every blob whose framing could be followed, with its
checksums and descriptor even when they are bad, the models the files hold,
and the first problem found. A damaged, truncated or missing file does not
raise: the listing says what is wrong and where.

    listing = libmrt.list_popef(["graph.popef", "weights.popef"])
    if listing.error is not None:
        print(listing.status.name, listing.message)
    for blob in listing.blobs:
        print(blob.file, blob.index, libmrt.blob_type_name(blob.type), blob.name, blob.damaged)
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from . import _structs as s
from ._arrays import dtype_of, encoded, shape_tuple
from ._handles import Handle
from ._native import C, out_value
from .errors import MrtError, Status
from .models import Model, PathLike, paths_argument
from .types import BlobType


@dataclass(frozen=True)
class BlobInfo:
    """One listed blob (mrt_blob_info)."""
    file: int               # index of its file in the paths given
    index: int              # its position in the file, from 0
    type: BlobType | int    # an int for a kind this package does not know
    executable: str         # the model it belongs to; "" if its descriptor is unreadable
    name: str               # "" for Metadata and if its descriptor is unreadable
    offset: int             # byte offset of the blob's header in the file
    payload_size: int       # bytes after the header
    stored_checksum: int    # the payload's XXH3-64 as the header records it
    computed_checksum: int  # ... and as computed
    problem: str            # why the descriptor could not be read; "" if it could
    dtype: np.dtype | None  # TensorData, FeedData: the element type; None for other blobs
    shape: tuple            # TensorData, FeedData: the tensor's shape
    num_tensors: int        # FeedData: tensors of that shape; TensorData: 1; others: 0
    data_size: int          # bytes of its data section; 0 if the descriptor is unreadable

    @property
    def damaged(self) -> bool:
        """Whether the payload's checksum does not match the stored one."""
        return self.stored_checksum != self.computed_checksum


@dataclass(frozen=True)
class PopefFile:
    """One file of a listing: its path as given, its size (0 if it could not
    be opened) and its listed blobs, in file order."""
    path: str
    size: int
    blobs: tuple[BlobInfo, ...]


@dataclass(frozen=True)
class PopefListing:
    """What list_popef() found. `status` and `message` are the first
    problem (Status.OK and "" for sound files holding the models asked
    for); `models` are the models loaded, which the caller owns (close()
    them, or close() the listing)."""
    files: tuple[PopefFile, ...]
    status: Status
    message: str
    models: tuple[Model, ...]

    @property
    def blobs(self) -> tuple[BlobInfo, ...]:
        """Every listed blob, file by file."""
        return tuple(blob for file in self.files for blob in file.blobs)

    @property
    def error(self) -> MrtError | None:
        """The first problem as the MrtError mrt_model_load_named() would
        have raised (not raised here), or None."""
        return None if self.status == Status.OK else MrtError(self.status, self.message)

    def close(self) -> None:
        """Closes the listed models."""
        for model in self.models:
            model.close()

    def __enter__(self) -> "PopefListing":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def blob_type_name(blob_type: BlobType | int) -> str:
    """The name of a blob type as PopEF spells it ("TensorData"), or
    "Unknown" for a value that is no mrt_blob_type (mrt_blob_type_name)."""
    return C.mrt_blob_type_name(int(blob_type)).decode()


def _text(value: bytes | None) -> str:
    return (value or b"").decode("utf-8", "replace")


def _blob(listing: int, file: int, index: int) -> BlobInfo:
    info = s.sized(s.BlobInfo)
    C.mrt_popef_listing_blob(listing, file, index, ctypes.byref(info))
    try:
        blob_type: BlobType | int = BlobType(info.type)
    except ValueError:
        blob_type = info.type
    return BlobInfo(info.file, info.index, blob_type, _text(info.executable), _text(info.name),
                    info.offset, info.payload_size, info.stored_checksum, info.computed_checksum,
                    _text(info.problem), None if info.data_type < 0 else dtype_of(info.data_type),
                    shape_tuple(info.shape, info.rank), info.num_tensors, info.data_size)


def _file(listing: int, file: int) -> PopefFile:
    path, size, num_blobs = s.c_str(), s.c_u64(), s.c_size()
    C.mrt_popef_listing_file(listing, file, ctypes.byref(path), ctypes.byref(size),
                             ctypes.byref(num_blobs))
    return PopefFile(_text(path.value), size.value,
                     tuple(_blob(listing, file, index) for index in range(num_blobs.value)))


def list_popef(paths: PathLike | Iterable[PathLike], model_name: str | None = None) -> PopefListing:
    """Lists the blobs of the PopEF files `paths` (one path or several, in
    order) and, if every file's framing is sound, loads the model named
    model_name, or every model the files hold if None. Problems in the
    files do not raise: they are in the listing's status and message.
    InvalidArgumentError for no paths or an empty model_name."""
    array, count = paths_argument(paths)
    handle = Handle(out_value(C.mrt_popef_listing_create, array, count, encoded(model_name)),
                    C.mrt_popef_listing_destroy)
    try:
        listing = handle.pointer
        status, message = s.c_i32(), s.c_str()
        C.mrt_popef_listing_error(listing, ctypes.byref(status), ctypes.byref(message))
        text = _text(message.value)  # borrowed from the listing: copied now
        files = tuple(_file(listing, file) for file in range(count))
        num_models = out_value(C.mrt_popef_listing_num_models, listing, out_type=s.c_size)
        models = tuple(Model._adopt(out_value(C.mrt_popef_listing_model, listing, index))
                       for index in range(num_models))
    finally:
        handle.release()  # the models outlive it
    try:
        code: Status = Status(status.value)
    except ValueError:
        code = status.value
    return PopefListing(files, code, text, models)

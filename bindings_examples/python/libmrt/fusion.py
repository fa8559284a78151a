"""Model fusion (mrt_model_fuse; docs/popef.md "Fused models"): several
models in one PopEF file, each on its own tiles of one IPU, so runners and
sessions of them share one device and run at the same time."""
from __future__ import annotations

import ctypes
import os
from typing import Sequence

from ._native import C
from .errors import InvalidArgumentError, Status
from .models import Model, PathLike


def fuse_models(models: Sequence[Model], path: PathLike) -> None:
    """Writes one PopEF file at `path` (created or truncated) holding the
    models (two or more) with one executable, in which each model runs on
    its own tiles of one IPU. Each keeps its name, anchor names and data:
    load one with Model(path, executable=name) and serve it with a
    ModelRunner or Session; runners of different models of the file may
    share one device (the same Device in replica_devices) and run at once.

    The models must run on one IPU without replication, for the same
    target, with distinct names, none already fused: InvalidArgumentError
    names the model and value otherwise, and when the models need more
    tiles together than the IPU has (naming each model's tiles and the
    total). The models are only read; any thread. A failed write removes
    the file."""
    models = list(models)
    for index, model in enumerate(models):
        if not isinstance(model, Model):
            raise InvalidArgumentError(
                Status.INVALID_ARGUMENT,
                f"fuse_models: models[{index}] is a {type(model).__name__}, not a Model")
    pointers = (ctypes.c_void_p * max(len(models), 1))(*(m._pointer() for m in models))
    C.mrt_model_fuse(pointers, len(models), os.fsencode(path))

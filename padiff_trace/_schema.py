"""Constants of trace format v1: record kinds, phases, the index table layout.

The normative description is ``docs/trace-format.md``; this module is its code twin.
"""

from __future__ import annotations

import enum

import numpy as np

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "Kind",
    "Phase",
    "RECORD_DTYPE",
    "STAT_FIELDS",
    "DataLoc",
    "SHARD_GLOB",
]

FORMAT_NAME = "padiff-trace"
FORMAT_VERSION = 1
SHARD_GLOB = "shard-*.h5"


class Phase(enum.IntEnum):
    FORWARD = 0
    BACKWARD = 1
    OTHER = 2

    @property
    def label(self) -> str:
        return self.name.lower()


class Kind(enum.IntEnum):
    MODEL_INPUT = 0
    MODULE_INPUT = 1
    MODULE_OUTPUT = 2
    GRAD_OUTPUT = 3  # gradient of the loss w.r.t. a module output
    GRAD_INPUT = 4  # gradient of the loss w.r.t. a tensor passed into a module
    PARAM = 5
    BUFFER = 6
    PARAM_GRAD = 7
    LOSS = 8
    PROBE = 9
    OP_INPUT = 10  # op-level recording: a framework function called inside forward
    OP_OUTPUT = 11
    OP_GRAD_OUTPUT = 12  # gradient of the loss w.r.t. an op output

    @property
    def label(self) -> str:
        return self.name.lower()


class DataLoc(enum.IntEnum):
    NONE = 0  # statistics only (or not a tensor)
    BLOB = 1  # bytes [offset, offset+nbytes) of the shard's /blob dataset
    DATASET = 2  # the shard's /tensors/<seq> dataset (1-D, storage dtype)


STAT_FIELDS = ("min", "max", "mean", "std", "mean_abs", "l2", "nan", "inf")

# One row per record. String-valued columns hold indices into the shard's /strings.
RECORD_DTYPE = np.dtype(
    [
        ("seq", "<i8"),
        ("step", "<i4"),
        ("phase", "u1"),
        ("kind", "u1"),
        ("data_loc", "u1"),
        ("call", "<i8"),  # id of the module call this record belongs to, -1 if none
        ("parent", "<i8"),  # id of the enclosing module call, -1 if none
        ("call_index", "<i4"),  # nth call of this module within the step
        ("module", "<i4"),
        ("module_type", "<i4"),
        ("position", "<i4"),
        ("dtype", "<i4"),
        ("shape", "<i4"),
        ("device", "<i4"),
        ("stack", "<i4"),
        ("numel", "<i8"),
        ("offset", "<i8"),
        ("nbytes", "<i8"),
        ("stats", "<f8", (len(STAT_FIELDS),)),
    ]
)

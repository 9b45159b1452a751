"""Constants of trace format v1: record kinds, phases, the index table layout.

The normative description is ``docs/trace-format.md``; this module is its code twin.
"""

from __future__ import annotations

import enum
import re

import numpy as np

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "Kind",
    "Phase",
    "RECORD_DTYPE",
    "STAT_FIELDS",
    "DataLoc",
    "CRC_ALGORITHM",
    "CRC_CHUNK",
    "FORMAT_MINOR",
    "LOCK_NAME",
    "PART_RE",
    "SHARD_GLOB",
    "SHARD_RE",
]

FORMAT_NAME = "padiff-trace"
FORMAT_VERSION = 1
# Additions within version 1 that readers may rely on when present: 1 = recording id, CRC-32
# tables (/crc32, /crc32_index, /records and /strings checksums), root attribute checksum.
# 2 = text attributes are fixed-length UTF-8 strings, never variable-length ones (read from a
# global heap collection, which HDF5 parses unchecked).
# A shard without the attribute is 1.0 (see docs/trace-format.md, sections 9 and 10).
FORMAT_MINOR = 2
SHARD_GLOB = "shard-*.h5"  # a coarse pre-filter only: names must match SHARD_RE exactly
SHARD_RE = re.compile(r"shard-(\d{6})\.h5")  # fullmatch: shard-000042.h5
PART_RE = re.compile(r"shard-(\d{6})\.h5\.part")
LOCK_NAME = ".padiff-trace.lock"  # held by the one writer of a trace directory
CRC_CHUNK = 1 << 20  # bytes of /blob or /tensors/<seq> data per CRC-32
CRC_ALGORITHM = "crc32"  # /crc32 attr algorithm: zlib's CRC-32 (a reader refuses data under one it does not know)


class Phase(enum.IntEnum):
    """When a record was taken: forward, backward, or other (parameters, buffers)."""

    FORWARD = 0
    BACKWARD = 1
    OTHER = 2

    @property
    def label(self) -> str:
        return self.name.lower()


class Kind(enum.IntEnum):
    """What a record holds. Stored as the integer; values are never reused, new ones are
    appended (a reader skips kinds it does not know)."""

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
    RANDOM = 13  # a random draw inside forward (dropout keep-mask, rand values), for replay
    OPTIMIZER = 14  # an optimizer's per-step value (learning rate per parameter group), a number

    @property
    def label(self) -> str:
        return self.name.lower()


class DataLoc(enum.IntEnum):
    """Where a record's tensor bytes are stored in its shard."""

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

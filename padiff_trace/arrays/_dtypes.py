"""Logical dtypes (what the framework had) and storage dtypes (what HDF5 holds).

numpy has no bfloat16, so a bfloat16 tensor is stored as its raw 16-bit patterns
(``<u2``) and decoded losslessly to float32 on read (bfloat16 is the upper half of
a float32). Booleans are stored as ``u1`` (0/1). Everything is little-endian.
"""

from __future__ import annotations

import numpy as np

__all__ = ["UNCAPTURED", "STORAGE", "decode", "dtype_name", "is_number", "logical_name", "storage_dtype", "to_float64",
           "value_kind"]

# A tensor the recorder could not copy (a sparse layout, ...): recorded with its shape and no
# values, logical dtype "uncaptured:<layout>:<dtype>"; readers treat it as data-less.
UNCAPTURED = "uncaptured:"

# logical name -> storage dtype
STORAGE: dict[str, np.dtype] = {
    "bool": np.dtype("u1"),
    "uint8": np.dtype("u1"),
    "int8": np.dtype("i1"),
    "int16": np.dtype("<i2"),
    "uint16": np.dtype("<u2"),
    "int32": np.dtype("<i4"),
    "uint32": np.dtype("<u4"),
    "int64": np.dtype("<i8"),
    "uint64": np.dtype("<u8"),
    "float16": np.dtype("<f2"),
    "bfloat16": np.dtype("<u2"),
    "float32": np.dtype("<f4"),
    "float64": np.dtype("<f8"),
    "complex64": np.dtype("<c8"),
    "complex128": np.dtype("<c16"),
    # 8-bit floats: raw bit patterns, statistics not computed
    "float8_e4m3fn": np.dtype("u1"),
    "float8_e5m2": np.dtype("u1"),
}

_UNDECODED = {"float8_e4m3fn", "float8_e5m2"}
# numpy computes ``dtype.name`` in Python on every access (~8 us) and hashing a dtype costs
# ~1.5 us; the writer asks per record. The built-in dtypes are singletons, so they are looked
# up by identity first (``_NAMES`` keeps them alive, so their ids stay theirs).
_NAMES = {np.dtype(n): n for n in STORAGE if n not in _UNDECODED and n != "bfloat16"}
_NAMES_BY_ID = {id(dt): n for dt, n in _NAMES.items()}


def dtype_name(dt: np.dtype) -> str:
    """``dt.name``, fast for the dtypes a trace holds."""
    name = _NAMES_BY_ID.get(id(dt))
    if name is None:
        name = _NAMES.get(dt)
    return name if name is not None else dt.name


def is_number(logical: object) -> bool:
    """Whether a logical dtype name holds numbers (float, bfloat, complex), as opposed to ids,
    positions, masks and flags (integers, booleans)."""
    return str(logical).startswith(("float", "bfloat", "complex"))


def value_kind(logical: object) -> str:
    """What a logical dtype holds: "bool" (flags, masks), "integer" (ids, positions, counts),
    "number" (``is_number``) or "other" (uncaptured). Two tensors of different kinds are two
    representations of one thing (a 0/1 mask against booleans), never values to compare."""
    name = str(logical)
    if name == "bool":
        return "bool"
    if name.startswith(("int", "uint")):
        return "integer"
    return "number" if is_number(name) else "other"


def logical_name(arr: np.ndarray) -> str:
    """The logical dtype name of a numpy array (bfloat16 cannot come from numpy)."""
    name = dtype_name(arr.dtype)
    if name not in STORAGE:
        raise TypeError(f"unsupported array dtype {arr.dtype}")
    return name


def storage_dtype(logical: str) -> np.dtype:
    """The numpy dtype a tensor of logical dtype ``logical`` is stored as (bfloat16: uint16)."""
    try:
        return STORAGE[logical]
    except KeyError:
        raise TypeError(f"unsupported logical dtype {logical!r}; known: {sorted(STORAGE)}") from None


def to_storage(arr: np.ndarray, logical: str) -> np.ndarray:
    """A C-contiguous little-endian array of the storage dtype holding ``arr``'s bits."""
    want = storage_dtype(logical)
    if arr.dtype is want and arr.flags.c_contiguous:  # the common case, per record: no comparisons
        return arr
    if arr.dtype == np.bool_:
        arr = arr.view(np.uint8)
    if arr.dtype != want:
        if arr.dtype.itemsize != want.itemsize or arr.dtype.kind != want.kind:
            raise TypeError(f"array of dtype {arr.dtype} cannot hold logical {logical}")
        arr = arr.astype(want)  # byte order only
    return np.ascontiguousarray(arr)


def decode(stored: np.ndarray, logical: str) -> np.ndarray:
    """Storage array -> the closest numpy array of the logical dtype (bfloat16 -> float32)."""
    if logical == "bfloat16":
        return (stored.astype(np.uint32) << 16).view(np.float32)
    if logical == "bool":
        return stored.view(np.bool_)
    return stored


def to_float64(stored: np.ndarray, logical: str) -> np.ndarray | None:
    """Values as float64 (complex as complex128); None when the dtype cannot be decoded."""
    if logical in _UNDECODED:
        return None
    vals = decode(stored, logical)
    if vals.dtype.kind == "c":
        return vals.astype(np.complex128, copy=False)
    return vals.astype(np.float64, copy=False)

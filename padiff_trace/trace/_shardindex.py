"""Loading the index of one shard (root attributes, ``/records``, ``/strings``) with salvage.

Every check that can be made without reading tensor data happens here, once per shard, on
whole columns: checksums (format 1.1), string ids in range, known phase and data location,
shape x itemsize = bytes, blob ranges inside ``/blob``. A damaged ``/records`` chunk drops its
rows; a row whose data cannot be trusted stays in the index, marked (reading it raises); a
row of a kind this reader does not know is skipped, as the format says. Damage that leaves
nothing to trust (the string table, the file itself) raises ``CorruptTraceError``.
"""

from __future__ import annotations

import functools
import math
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from .._errors import CorruptTraceError
from ..arrays._dtypes import STORAGE, UNCAPTURED
from ._closed import loads, read_attr
from ._integrity import ROOT_ATTRS, Damage, attrs_crc, split_strings, unescape
from ._open import H5_ERRORS, short
from ._schema import RECORD_DTYPE, DataLoc, Kind, Phase

__all__ = ["INDEX_DTYPE", "STRING_COLUMNS", "ShardIndex", "compact", "identity", "load_shard", "narrow", "parse_shape"]

STRING_COLUMNS = ("module", "module_type", "position", "dtype", "shape", "device", "stack")
_KINDS = np.array(sorted(int(k) for k in Kind), dtype=np.uint8)
_PHASES = np.array(sorted(int(p) for p in Phase), dtype=np.uint8)
_LOCS = np.array(sorted(int(d) for d in DataLoc), dtype=np.uint8)
_BLOB, _DATASET = int(DataLoc.BLOB), int(DataLoc.DATASET)
# the opened index: a /records row without its statistics (read on demand, ``_statsread``),
# plus the row's place in its shard's /records
INDEX_DTYPE = np.dtype(
    [(n, RECORD_DTYPE.fields[n][0]) for n in (RECORD_DTYPE.names or ()) if n != "stats"]  # type: ignore[index]
    + [("frow", "<i4")]
)


def narrow(part: np.ndarray, first_row: int) -> np.ndarray:
    """``RECORD_DTYPE`` rows (file rows ``first_row``...) as ``INDEX_DTYPE`` rows."""
    out = np.empty(len(part), INDEX_DTYPE)
    for name in INDEX_DTYPE.names or ():
        if name != "frow":
            out[name] = part[name]
    out["frow"] = np.arange(first_row, first_row + len(part), dtype=np.int32)
    return out


_SMALL = 1 << 30  # an int64 column whose values are all smaller in magnitude is kept as int32: a sum of two still fits


def compact(rows: np.ndarray) -> np.ndarray:
    """``rows`` with each int64 column that holds only small values stored as int32 (sequence
    numbers, call ids, offsets and sizes of a trace under a GiB: 24 bytes a record less).
    Readers take fields by name and convert to Python ints, so the narrower type is invisible."""
    names = rows.dtype.names or ()
    fields = []
    for name in names:
        dt = rows.dtype.fields[name][0]  # type: ignore[index]
        if dt == np.int64:
            col = rows[name]
            if not len(col) or (int(col.min()) > -_SMALL and int(col.max()) < _SMALL):
                dt = np.dtype("<i4")
        fields.append((name, dt))
    narrowed = np.dtype(fields)
    if narrowed == rows.dtype:
        return rows
    out = np.empty(len(rows), narrowed)
    for name in names:
        out[name] = rows[name]
    return out


@dataclass
class ShardIndex:
    """What one shard contributes to a trace's index."""

    path: Path
    number: int
    table: np.ndarray  # INDEX_DTYPE rows (string ids local to ``strings``); unknown kinds removed
    strings: list[str]
    minor: int  # format minor version: 0 = 1.0 (no CRC-32 tables), 1 = 1.1
    recording: str | None
    meta: dict[str, Any] | None  # None when missing, malformed or failing the attribute checksum
    final: bool
    summary: dict[str, Any] | None
    last_seq: int | None
    identity: tuple[int, int, int, int]  # st_dev, st_ino, st_size, st_mtime_ns of the opened file
    bad_rows: dict[int, Damage] = field(default_factory=dict)  # row in ``table`` -> why its data is untrusted
    damage: list[Damage] = field(default_factory=list)
    skipped: int = 0  # rows of unknown kinds


def identity(f: h5py.File) -> tuple[int, int, int, int]:
    """(device, inode, size, mtime) of an open shard, from its file descriptor."""
    try:
        st = os.fstat(f.id.get_vfd_handle())
    except H5_ERRORS:
        st = os.stat(f.filename)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


_MAX_DIMS = 64  # numpy's limit: a longer shape could not be made into an array
_MAX_NUMEL = 1 << 52  # more elements than any tensor has; times any itemsize it still fits in int64 (never wraps)


@functools.lru_cache(maxsize=1 << 16)
def parse_shape(text: str) -> tuple[int, ...] | None:
    """A stored shape (JSON list of non-negative ints whose product fits in int64, at most
    numpy's 64 axes), or None when it is not one."""
    dims: Any = None
    if text[:1] == "[" and text[-1:] == "]":  # the writer's own form, "[2, 3]": without the JSON parser
        inner = text[1:-1]
        if not inner:
            return ()
        parts = inner.split(", ")
        if inner.isascii() and len(parts) <= _MAX_DIMS and all(d.isdigit() and len(d) < 20 for d in parts):
            dims = [int(d) for d in parts]
    if dims is None:
        try:
            dims = loads(text, depth=1)
        except ValueError:
            return None
    if not isinstance(dims, list) or len(dims) > _MAX_DIMS or not all(type(d) is int and d >= 0 for d in dims):
        return None
    return tuple(dims) if math.prod(dims) < _MAX_NUMEL else None


def _root_attrs(f: h5py.File, path: Path, damage: list[Damage]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key in (*ROOT_ATTRS, "attrs_crc32"):
        try:
            if key in f.attrs:
                values[key] = read_attr(f.attrs, key, path)
        except H5_ERRORS as exc:
            damage.append(Damage(path, f"attribute {key}", f"unreadable ({short(exc)})"))
    return values


def _json_object(text: Any) -> dict[str, Any] | None:
    try:  # bounded depth: meta is printed and walked later, recursively
        value = loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def load_shard(f: h5py.File, path: Path, number: int) -> ShardIndex:
    """The index of the open shard ``f``; ``CorruptTraceError`` when nothing in it can be used."""
    damage: list[Damage] = []
    attrs = _root_attrs(f, path, damage)
    # a 1.1 shard stays 1.1 even if its format_minor attribute is damaged: its tables say so
    fm = attrs.get("format_minor", 0)
    minor = int(fm) if isinstance(fm, (int, np.integer)) else 1
    try:
        has_tables = "crc32" in f
    except H5_ERRORS:
        has_tables = True  # unknown: demand the checks (they will fail and say why)
    if "attrs_crc32" in attrs or has_tables:
        minor = max(minor, 1)
    trusted = True
    if minor >= 1 and int(attrs.get("attrs_crc32", -1)) != attrs_crc(attrs):
        trusted = False
        damage.append(Damage(path, "root attributes", "fail their CRC-32: meta, final and summary of this shard not used"))
    meta = _json_object(attrs.get("meta"))
    if meta is None:
        trusted_meta = False
        damage.append(Damage(path, "attribute meta", "missing or not a JSON object"))
    else:
        trusted_meta = trusted
    recording = attrs.get("recording")
    recording = str(recording) if recording is not None else None
    if "shard" in attrs and number >= 0 and _int(attrs["shard"]) != number:
        raise CorruptTraceError(f"{path}: the file says it is shard {attrs['shard']!r}, its name says {number}")
    size = identity(f)[2]
    strings = _strings(f, path, minor, size)
    rows, _ = _records(f, path, minor, damage, size)
    blob_len = _blob_len(f, path)
    first_seq = _int(attrs.get("first_seq")) if trusted else None
    last_seq = _int(attrs.get("last_seq")) if trusted else None
    summary = _json_object(attrs.get("summary")) if trusted and "summary" in attrs else None
    idx = ShardIndex(
        path, number, rows, strings, minor, recording, meta if trusted_meta else None,
        bool(attrs.get("final", False)) and trusted, summary, last_seq, identity(f), damage=damage,
    )
    _validate(idx, blob_len, first_seq, last_seq)
    return idx


def _int(v: Any) -> int | None:
    try:
        return int(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def table(ds: h5py.Dataset, path: Path, size: int) -> np.ndarray:
    """All of an uncompressed dataset, after checking that the file can hold it (a damaged
    dataspace would otherwise ask for terabytes)."""
    need = int(np.prod(ds.shape, dtype=np.float64)) * ds.dtype.itemsize
    if need > size:
        raise CorruptTraceError(f"{path}: {ds.name} claims {need} bytes, more than the file's {size}")
    return ds[...]


def _strings(f: h5py.File, path: Path, minor: int, size: int) -> list[str]:
    try:
        if minor >= 1:  # plain bytes (format 1.1): never the variable-length heap
            ds = f["string_bytes"]
            joined = table(ds, path, size).tobytes()
            count, crc = int(ds.attrs["count"]), int(ds.attrs["crc32"])
            if zlib.crc32(joined) != crc:
                raise CorruptTraceError(f"{path}: string table fails its CRC-32 (module names, dtypes and shapes of this shard)")
            raw = split_strings(joined, count)
        else:
            raw = _vlen_strings(f["strings"], path, size)
    except H5_ERRORS as exc:
        raise CorruptTraceError(f"{path}: string table unreadable ({short(exc)})") from None
    try:
        return [unescape(s.decode("utf-8")) for s in raw]
    except ValueError as exc:  # UnicodeDecodeError is one
        raise CorruptTraceError(f"{path}: string table holds an invalid entry ({short(exc)})") from None


_VLEN_SLICE = 16  # format 1.0 strings read at a time: each entry may name any heap object of the file


def _vlen_strings(ds: h5py.Dataset, path: Path, size: int) -> list[bytes]:
    """A format 1.0 ``/strings`` table of variable-length strings. Entries can all name one large
    heap object, so they are read a few at a time and their total is held to the file's size
    (every string of a real table is stored once)."""
    n = ds.shape[0]
    if n > size:
        raise CorruptTraceError(f"{path}: string table claims {n} entries")
    out: list[bytes] = []
    total = 0
    for lo in range(0, n, _VLEN_SLICE):
        for v in ds[lo : lo + _VLEN_SLICE]:
            b = v if isinstance(v, bytes) else str(v).encode("utf-8", "surrogatepass")
            total += len(b)
            out.append(b)
        if total > size:
            raise CorruptTraceError(f"{path}: string table holds more text ({total} bytes) than the file ({size})")
    return out


def _records(f: h5py.File, path: Path, minor: int, damage: list[Damage], size: int) -> tuple[np.ndarray, int]:
    """The rows that read and pass their checksums, and how many did not."""
    try:
        ds = f["records"]
        if ds.dtype != RECORD_DTYPE or ds.ndim != 1:
            raise CorruptTraceError(f"{path}: record table has layout {ds.dtype}, expected {RECORD_DTYPE}")
        n = ds.shape[0]
        if n * RECORD_DTYPE.itemsize > size:
            raise CorruptTraceError(f"{path}: record table claims {n} rows, more than the file can hold")
        per = (ds.chunks or (max(n, 1),))[0]
        crcs = ds.attrs.get("crc32") if minor >= 1 and n else None
    except H5_ERRORS as exc:
        raise CorruptTraceError(f"{path}: record table unreadable ({short(exc)})") from None
    if minor >= 1 and n and (crcs is None or np.ndim(crcs) != 1 or len(crcs) != -(-n // per)):
        raise CorruptTraceError(f"{path}: record table checksums missing or of the wrong length")
    keep: list[np.ndarray] = []
    dropped = 0
    for k, lo in enumerate(range(0, n, per)):  # a chunk at a time: the statistics are never all in memory
        hi = min(n, lo + per)
        try:
            part = ds[lo:hi]
        except H5_ERRORS as exc:  # a chunk failing HDF5's checksum: the others are kept
            damage.append(Damage(path, f"/records rows {lo}-{hi - 1}", f"unreadable ({short(exc)})", lost=hi - lo))
            dropped += hi - lo
            continue
        if crcs is not None and zlib.crc32(part.view(np.uint8)) != int(crcs[k]):
            damage.append(Damage(path, f"/records rows {lo}-{hi - 1}", "fail their CRC-32", lost=hi - lo))
            dropped += hi - lo
            continue
        keep.append(narrow(part, lo))
    rows = np.concatenate(keep) if keep else np.zeros(0, INDEX_DTYPE)
    return rows, dropped


def _blob_len(f: h5py.File, path: Path) -> int:
    try:
        blob = f["blob"]
        if "tensors" not in f or blob.ndim != 1:
            raise KeyError("blob")
        return int(blob.shape[0])
    except H5_ERRORS as exc:
        raise CorruptTraceError(f"{path}: damaged shard ({short(exc)})") from None


def _validate(idx: ShardIndex, blob_len: int, first_seq: int | None, last_seq: int | None) -> None:
    """Whole-column checks of the rows (no per-row Python except for the ones that fail)."""
    t, path = idx.table, idx.path
    if not len(t):
        return
    drop = np.zeros(len(t), dtype=bool)
    why: dict[int, str] = {}

    def mark(mask: np.ndarray, reason: str, fatal: bool) -> None:
        for i in np.flatnonzero(mask & ~drop).tolist():
            if fatal:
                drop[i] = True
                idx.damage.append(Damage(path, f"record {int(t['seq'][i])}", reason, lost=1))
            elif i not in why:
                why[i] = reason

    ns = len(idx.strings)
    for col in STRING_COLUMNS:
        mark((t[col] < 0) | (t[col] >= ns), f"its {col} refers to a missing string", True)
    mark(~np.isin(t["phase"], _PHASES), "unknown phase", True)
    if first_seq is not None and last_seq is not None:
        mark((t["seq"] < first_seq) | (t["seq"] > last_seq), f"seq outside the shard's range {first_seq}-{last_seq}", True)
    if len(t) > 1 and not np.all(t["seq"][1:] > t["seq"][:-1]):  # the writer appends in seq order
        order = np.argsort(t["seq"], kind="stable")
        srt = t["seq"][order]
        twice = np.zeros(len(t), dtype=bool)
        same = np.flatnonzero(srt[1:] == srt[:-1])
        twice[order[same]] = twice[order[same + 1]] = True
        mark(twice, "seq appears twice in this shard", True)  # which row is the real one is unknown
    unknown = ~np.isin(t["kind"], _KINDS)  # a newer writer's kind: ignored, as the format says
    idx.skipped = int(np.count_nonzero(unknown & ~drop))
    drop |= unknown
    loc = t["data_loc"]
    mark(~np.isin(loc, _LOCS), "unknown data location", False)
    # fatal: the analyzer computes with the counts of every record it lists (sqrt, sizes)
    mark((t["numel"] < 0) | (t["nbytes"] < 0), "negative element or byte count", True)
    # per distinct dtype and shape string (ids are in range for the rows kept): itemsize, element count
    dt_col = np.where(drop, 0, t["dtype"])
    sh_col = np.where(drop, 0, t["shape"])
    isz_of = np.zeros(max(ns, 1), dtype=np.int64)
    for d in np.flatnonzero(np.bincount(dt_col, minlength=1)).tolist():
        name = idx.strings[d] if d < ns else ""
        isz_of[d] = STORAGE[name].itemsize if name in STORAGE else (0 if name.startswith(("py:", UNCAPTURED)) else -1)
    numel_of = np.zeros(max(ns, 1), dtype=np.int64)
    for sid in np.flatnonzero(np.bincount(sh_col, minlength=1)).tolist():
        dims = parse_shape(idx.strings[sid]) if sid < ns else ()
        numel_of[sid] = -1 if dims is None else math.prod(dims)
    isz = np.where(drop, 0, isz_of[dt_col])
    shape_n = np.where(drop, 0, numel_of[sh_col])
    tensor = isz != 0
    has_data = (loc == _BLOB) | (loc == _DATASET)
    mark(isz < 0, "unknown dtype", False)
    mark(tensor & (shape_n < 0), "shape is not a list of sizes", False)
    mark(tensor & (shape_n >= 0) & (shape_n != t["numel"]), "element count disagrees with the shape", False)
    mark(has_data & (isz > 0) & (t["nbytes"] != t["numel"] * isz), "byte count disagrees with shape x itemsize", False)
    mark(has_data & ~tensor, "a non-tensor with data", False)
    in_blob = (t["offset"] >= 0) & (t["offset"] + t["nbytes"] <= blob_len) & (t["offset"] <= blob_len)
    mark((loc == _BLOB) & ~in_blob, f"blob range outside /blob ({blob_len} bytes)", False)
    mark((loc == _DATASET) & ((t["offset"] < 0) | (t["offset"] > t["seq"])), "names a tensor dataset that cannot exist", False)
    keep = np.flatnonzero(~drop)
    if len(keep) != len(t):
        idx.table = t[keep]
        remap = {int(old): new for new, old in enumerate(keep.tolist())}
        why = {remap[i]: r for i, r in why.items() if i in remap}
    for i, reason in why.items():
        seq = int(idx.table["seq"][i])
        found = idx.bad_rows[i] = Damage(path, f"record {seq}", reason, seqs=(seq,))
        idx.damage.append(found)

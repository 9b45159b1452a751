"""Lazy, read-only access to a trace: a Mapping from sequence number to Record."""

from __future__ import annotations

import fnmatch
import json
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ._dtypes import decode, storage_dtype, to_float64
from ._errors import CorruptTraceError, FilterError
from ._open import attr_str, find_shards, gaps, short
from ._shardreader import ShardFiles
from ._header import Frame, stack_from_json
from ._schema import RECORD_DTYPE, SHARD_GLOB, STAT_FIELDS, DataLoc, Kind, Phase
from ._stats import CHUNK_ELEMS

__all__ = ["Record", "Trace", "open_trace"]

_RECORD_COLUMNS = (
    "seq", "step", "phase", "kind", "call", "parent", "call_index", "module", "module_type", "position",
    "dtype", "shape", "device", "numel", "data_loc",
)
_PHASES = {int(p): p for p in Phase}
_KINDS = {int(k): k for k in Kind}
_NONE, _DATASET = int(DataLoc.NONE), int(DataLoc.DATASET)


@dataclass(slots=True, eq=False)
class Record:
    """Metadata of one record; tensor data is read on demand. Read-only by convention (not
    frozen: a frozen dataclass takes 5 us to build, and listing builds one per record)."""

    trace: Trace = field(repr=False)
    row: int = field(repr=False)  # row in the trace's index
    seq: int
    step: int
    phase: Phase
    kind: Kind
    module: str
    module_type: str
    call: int
    parent: int
    call_index: int
    position: str
    dtype: str
    shape: tuple[int, ...]
    device: str
    numel: int
    has_data: bool

    @property
    def stats(self) -> dict[str, float]:
        vals = self.trace._rows["stats"][self.row]
        return {k: float(v) for k, v in zip(STAT_FIELDS, vals)}

    @property
    def stack(self) -> tuple[Frame, ...]:
        return self.trace._stack(int(self.trace._rows["stack"][self.row]))

    @property
    def is_tensor(self) -> bool:
        return not self.dtype.startswith("py:")

    @property
    def name(self) -> str:
        """``module[call_index]:position`` - a readable identifier."""
        mod = self.module or "<root>"
        return f"{mod}#{self.call_index}:{self.position}" if self.position else f"{mod}#{self.call_index}"

    def read(self) -> np.ndarray:
        """The tensor (bfloat16 decoded to float32, bool as bool), shaped."""
        return self.trace.read(self.seq)

    def iter_chunks(self, chunk_elems: int = CHUNK_ELEMS) -> Iterator[np.ndarray]:
        """Flat float64 (complex128 for complex) chunks of the tensor, in C order."""
        return self.trace.iter_chunks(self.seq, chunk_elems)


class Trace(Mapping[int, Record]):
    """A trace opened for reading. ``trace[seq]`` -> Record, iteration in sequence order."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._shard_paths, self._single = find_shards(self.path)
        self._shards = ShardFiles(self._shard_paths)
        metas: list[dict[str, Any]] = []
        rows: list[np.ndarray] = []
        shard_of: list[np.ndarray] = []
        strings: dict[str, int] = {}
        self._strings: list[str] = []
        self.final = False
        self.summary: dict[str, Any] = {}
        for i, sp in enumerate(self._shard_paths):
            f = self._shards.file(i)
            attrs = f.attrs
            try:
                table = f["records"][...]
                local = [s.decode("utf-8") if isinstance(s, bytes) else s for s in f["strings"][...]]
                if "blob" not in f or "tensors" not in f:
                    raise KeyError("blob")
            except (OSError, KeyError, ValueError) as exc:
                raise CorruptTraceError(f"{sp}: damaged shard ({short(exc)})") from None
            if table.dtype != RECORD_DTYPE:
                raise CorruptTraceError(f"{sp}: record table has layout {table.dtype}, expected {RECORD_DTYPE}")
            metas.append(json.loads(attr_str(attrs, "meta")))
            remap = np.array([strings.setdefault(s, len(strings)) for s in local] or [0], dtype=np.int32)
            for col in ("module", "module_type", "position", "dtype", "shape", "device", "stack"):
                if len(table) and (table[col].max() >= len(local) or table[col].min() < 0):
                    raise CorruptTraceError(f"{sp}: record table refers to missing strings")
                table[col] = remap[table[col]]
            rows.append(table)
            shard_of.append(np.full(len(table), i, dtype=np.int32))
            if bool(attrs.get("final", False)):
                self.final = True
            if "summary" in attrs:
                self.summary = json.loads(attr_str(attrs, "summary"))
        self._strings = list(strings)
        self._rows = np.concatenate(rows) if rows else np.zeros(0, RECORD_DTYPE)
        self._shard_of = np.concatenate(shard_of) if shard_of else np.zeros(0, np.int32)
        order = np.argsort(self._rows["seq"], kind="stable")
        if not np.all(order == np.arange(len(order))):
            self._rows, self._shard_of = self._rows[order], self._shard_of[order]
        self._seq_index = {int(s): i for i, s in enumerate(self._rows["seq"])} if len(self._rows) else {}
        self.meta: dict[str, Any] = metas[0] if metas else {}
        self._stack_cache: dict[int, tuple[Frame, ...]] = {}
        self._shape_cache: dict[int, tuple[int, ...]] = {}
        self._cols: list[list[Any]] | None = None
        self._dcols: tuple[list[int], ...] | None = None
        self.missing_shards = gaps(self._shard_paths) if not self._single else []

    # ------------------------------------------------------------------ mapping
    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[int]:
        return iter(int(s) for s in self._rows["seq"])

    def __getitem__(self, seq: int) -> Record:
        try:
            i = self._seq_index[int(seq)]
        except KeyError:
            raise KeyError(f"{self.path}: no record with sequence number {seq}") from None
        return self._record(i)

    def __contains__(self, seq: object) -> bool:
        return isinstance(seq, (int, np.integer)) and int(seq) in self._seq_index

    def records(self) -> Iterator[Record]:
        """All records in sequence order."""
        s = self._strings
        shapes = self._shape_cache
        for i, (seq, step, phase, kind, call, parent, cidx, module, mtype, pos, dtype, shape_id, dev, numel, loc) in (
            enumerate(zip(*self._columns()))
        ):
            shape = shapes.get(shape_id)
            if shape is None:
                shape = shapes[shape_id] = tuple(json.loads(s[shape_id]))
            yield Record(
                self, i, seq, step, _PHASES[phase], _KINDS[kind], s[module], s[mtype], call, parent, cidx,
                s[pos], s[dtype], shape, s[dev], numel, loc != 0,
            )

    @property
    def complete(self) -> bool:
        return self.final and not self.missing_shards

    @property
    def table(self) -> np.ndarray:
        """The raw index (structured array, string columns as ids into ``strings``)."""
        return self._rows

    @property
    def strings(self) -> list[str]:
        return self._strings

    def select(
        self,
        module: str | None = None,
        kind: Kind | str | Iterable[Kind | str] | None = None,
        phase: Phase | str | Iterable[Phase | str] | None = None,
        step: int | Iterable[int] | None = None,
    ) -> list[Record]:
        """Records matching all given filters; ``module`` is a glob (``encoder.*.q_proj``)."""
        mask = np.ones(len(self._rows), dtype=bool)
        if module is not None:
            ok = np.array([fnmatch.fnmatchcase(s, module) for s in self._strings] or [False])
            mask &= ok[self._rows["module"]]
        if kind is not None:
            mask &= np.isin(self._rows["kind"], [int(_enum(Kind, k)) for k in _many(kind)])
        if phase is not None:
            mask &= np.isin(self._rows["phase"], [int(_enum(Phase, p)) for p in _many(phase)])
        if step is not None:
            mask &= np.isin(self._rows["step"], [int(s) for s in _many(step)])
        return [self._record(int(i)) for i in np.flatnonzero(mask)]

    def counts(self) -> dict[str, Counter[str]]:
        kinds = Counter(Kind(int(k)).label for k in self._rows["kind"])
        phases = Counter(Phase(int(p)).label for p in self._rows["phase"])
        return {"kind": kinds, "phase": phases}

    def steps(self) -> list[int]:
        return sorted(int(s) for s in np.unique(self._rows["step"]))

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self._shard_paths)

    # ------------------------------------------------------------------ data
    def read(self, seq: int) -> np.ndarray:
        # hot path (every tensor of a comparison): plain lists, no Record built
        try:
            i = self._seq_index[int(seq)]
        except KeyError:
            raise KeyError(f"{self.path}: no record with sequence number {seq}") from None
        loc, off, numel, dtype_id, shape_id, shard = (c[i] for c in self._data_columns())
        if loc == _NONE:
            rec = self._record(i)
            raise KeyError(f"{self.path}: record {seq} ({rec.name}) holds statistics only, no tensor data")
        logical = self._strings[dtype_id]
        shape = self._shape_cache.get(shape_id)
        if shape is None:
            shape = self._shape_cache[shape_id] = tuple(json.loads(self._strings[shape_id]))
        stored = self._stored_at(i, shard, loc, off, storage_dtype(logical), 0, numel)
        return decode(stored, logical).reshape(shape)

    def iter_chunks(self, seq: int, chunk_elems: int = CHUNK_ELEMS) -> Iterator[np.ndarray]:
        rec = self[seq]
        if not rec.has_data:
            raise KeyError(f"{self.path}: record {seq} ({rec.name}) holds statistics only, no tensor data")
        for start in range(0, rec.numel, chunk_elems):
            stored = self._read_stored(rec, start, min(rec.numel, start + chunk_elems))
            vals = to_float64(stored, rec.dtype)
            if vals is None:
                raise KeyError(f"{self.path}: record {seq} has dtype {rec.dtype}, which cannot be decoded")
            yield vals

    def _read_stored(self, rec: Record, start: int, stop: int, view: bool = False) -> np.ndarray:
        """Stored elements [start, stop) of a record; ``view``: may be read-only (mapped from the file)."""
        loc, off, _, _, _, shard = (c[rec.row] for c in self._data_columns())
        return self._stored_at(rec.row, shard, loc, off, storage_dtype(rec.dtype), start, stop, view)

    def _stored_at(
        self, i: int, shard: int, loc: int, off: int, sdt: np.dtype, start: int, stop: int, view: bool = False
    ) -> np.ndarray:
        """Stored elements [start, stop) of row ``i`` (data location ``loc``, ``off`` in ``shard``)."""
        try:
            if loc == _DATASET:  # off: the owner's seq
                return self._shards.dataset_slice(shard, str(off), sdt, start, stop, self._dataset_bytes, view)
            lo = off + start * sdt.itemsize
            return self._shards.blob_bytes(shard, lo, lo + (stop - start) * sdt.itemsize).view(sdt)
        except (OSError, KeyError, ValueError) as exc:
            rec = self._record(i)
            raise CorruptTraceError(
                f"{self._shard_paths[shard]}: cannot read record {rec.seq} ({rec.name}): {short(exc)}"
            ) from None

    def _dataset_bytes(self, shard: int) -> dict[int, int]:
        """{owner seq: bytes} of the tensor datasets of one shard."""
        sel = (self._shard_of == shard) & (self._rows["data_loc"] == _DATASET)
        return dict(zip(self._rows["seq"][sel].tolist(), self._rows["nbytes"][sel].tolist()))

    def _data_columns(self) -> tuple[list[int], ...]:
        """(data_loc, offset, numel, dtype, shape, shard) as Python lists, built on first use."""
        cols = self._dcols
        if cols is None:
            r = self._rows
            cols = self._dcols = (
                r["data_loc"].tolist(), r["offset"].tolist(), r["numel"].tolist(), r["dtype"].tolist(),
                r["shape"].tolist(), self._shard_of.tolist(),
            )
        return cols

    # ------------------------------------------------------------------ internals
    def _columns(self) -> list[list[Any]]:
        cols = self._cols
        if cols is None:
            r = self._rows
            cols = self._cols = [r[c].tolist() for c in _RECORD_COLUMNS]
        return cols

    def _record(self, i: int) -> Record:
        seq, step, phase, kind, call, parent, call_index, module, mtype, pos, dtype, shape_id, dev, numel, loc = (
            c[i] for c in self._columns()
        )
        s = self._strings
        shape = self._shape_cache.get(shape_id)
        if shape is None:
            shape = self._shape_cache[shape_id] = tuple(json.loads(s[shape_id]))
        return Record(
            self, i, seq, step, _PHASES[phase], _KINDS[kind], s[module], s[mtype], call, parent, call_index,
            s[pos], s[dtype], shape, s[dev], numel, loc != 0,
        )

    def _stack(self, sid: int) -> tuple[Frame, ...]:
        st = self._stack_cache.get(sid)
        if st is None:
            st = self._stack_cache[sid] = stack_from_json(self._strings[sid])
        return st

    def close(self) -> None:
        self._shards.close()

    def __enter__(self) -> Trace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "complete" if self.complete else "incomplete"
        return f"<Trace {self.path} {self.meta.get('framework', '?')} {len(self)} records, {state}>"


def open_trace(path: str | os.PathLike[str]) -> Trace:
    """Open a trace directory (or a single shard file) for reading."""
    return Trace(path)


def is_trace(path: str | os.PathLike[str]) -> bool:
    p = Path(path)
    return p.is_dir() and any(p.glob(SHARD_GLOB))


# ---------------------------------------------------------------------- helpers
def _many(x: Any) -> list[Any]:
    if isinstance(x, (str, int, Kind, Phase)):
        return [x]
    return list(x)


def _enum(cls: Any, v: Any) -> Any:
    if isinstance(v, str):
        try:
            return cls[v.upper()]
        except KeyError:
            names = ", ".join(m.label for m in cls)
            raise FilterError(f"unknown {cls.__name__.lower()} {v!r}; one of: {names}") from None
    return cls(v)

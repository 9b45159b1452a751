"""Lazy, read-only access to a trace: a Mapping from sequence number to Record."""

from __future__ import annotations

import fnmatch
import json
import os
from collections import Counter, OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from ._dtypes import decode, storage_dtype, to_float64
from ._errors import CorruptTraceError, FilterError
from ._open import attr_str, find_shards, gaps, open_shard, short
from ._records import Frame, stack_from_json
from ._schema import RECORD_DTYPE, SHARD_GLOB, STAT_FIELDS, DataLoc, Kind, Phase
from ._stats import CHUNK_ELEMS

__all__ = ["Record", "Trace", "open_trace"]

_MAX_OPEN = 32
_PAGE = 4 << 20  # blob bytes read and cached at a time
_MAX_PAGES = 64  # 256 MiB of cached blob pages at most
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
        self._files: OrderedDict[int, h5py.File] = OrderedDict()
        self._shard_paths, self._single = find_shards(self.path)
        metas: list[dict[str, Any]] = []
        rows: list[np.ndarray] = []
        shard_of: list[np.ndarray] = []
        strings: dict[str, int] = {}
        self._strings: list[str] = []
        self.final = False
        self.summary: dict[str, Any] = {}
        for i, sp in enumerate(self._shard_paths):
            f = self._file(i)
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
        self._indexed: set[int] = set()  # shards whose /tensor_offsets were loaded
        self._offsets: dict[tuple[int, str], int | None] = {}  # (shard, dataset) -> file offset, None: read via h5py
        self._pages: OrderedDict[tuple[int, int], np.ndarray] = OrderedDict()
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

    def _read_stored(self, rec: Record, start: int, stop: int) -> np.ndarray:
        loc, off, _, _, _, shard = (c[rec.row] for c in self._data_columns())
        return self._stored_at(rec.row, shard, loc, off, storage_dtype(rec.dtype), start, stop)

    def _stored_at(self, i: int, shard: int, loc: int, off: int, sdt: np.dtype, start: int, stop: int) -> np.ndarray:
        """Stored elements [start, stop) of row ``i`` (data location ``loc``, ``off`` in ``shard``)."""
        f = self._file(shard)
        try:
            if loc == _DATASET:  # off: the owner's seq
                return self._dataset_slice(shard, f, str(off), sdt, start, stop)
            lo = off + start * sdt.itemsize
            return self._blob_bytes(shard, f, lo, lo + (stop - start) * sdt.itemsize).view(sdt)
        except (OSError, KeyError, ValueError) as exc:
            rec = self._record(i)
            raise CorruptTraceError(
                f"{self._shard_paths[shard]}: cannot read record {rec.seq} ({rec.name}): {short(exc)}"
            ) from None

    def _dataset_slice(self, shard: int, f: h5py.File, name: str, sdt: np.dtype, start: int, stop: int) -> np.ndarray:
        """Elements [start, stop) of a tensor dataset. A contiguous, unfiltered dataset (what the
        writer makes unless compression is on) is read with ``os.preadv`` at its file offset:
        no HDF5 overhead, and the GIL is released (the analyzer measures while it reads)."""
        key = (shard, name)
        if shard not in self._indexed:
            self._load_offsets(shard, f)
        offset = self._offsets.get(key, -1)
        if offset == -1:
            ds = f["tensors"][name]
            plist = ds.id.get_create_plist()
            plain = plist.get_layout() == h5py.h5d.CONTIGUOUS and plist.get_nfilters() == 0 and ds.dtype == sdt
            offset = self._offsets[key] = ds.id.get_offset() if plain else None
        if offset is not None:
            try:
                fd = f.id.get_vfd_handle()  # the sec2 driver's file descriptor
            except (ValueError, TypeError, RuntimeError):
                offset = self._offsets[key] = None
        if offset is None:
            return f["tensors"][name][start:stop]
        out = np.empty(stop - start, dtype=sdt)
        view = memoryview(out).cast("B")
        pos, done = offset + start * sdt.itemsize, 0
        while done < len(view):
            got = os.preadv(fd, [view[done:]], pos + done)
            if got <= 0:
                raise OSError(f"file ends inside dataset /tensors/{name}")
            done += got
        return out

    def _load_offsets(self, shard: int, f: h5py.File) -> None:
        """The writer's ``/tensor_offsets`` index (absent in older shards): where each contiguous
        tensor dataset's bytes start, so a read needs no HDF5 metadata lookup. Entries that
        would reach past the end of the file are ignored (the lookup then checks them)."""
        self._indexed.add(shard)
        if "tensor_offsets" not in f:
            return
        table = f["tensor_offsets"][...]
        if table.ndim != 2 or table.shape[1:] != (2,):
            return
        size = self._shard_paths[shard].stat().st_size
        sel = (self._shard_of == shard) & (self._rows["data_loc"] == _DATASET)
        nbytes = dict(zip(self._rows["seq"][sel].tolist(), self._rows["nbytes"][sel].tolist()))
        for seq, off in table.tolist():
            nb = nbytes.get(seq)
            if nb is not None and 0 < off and off + nb <= size:
                self._offsets[(shard, str(seq))] = off

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

    def _blob_bytes(self, shard: int, f: h5py.File, lo: int, hi: int) -> np.ndarray:
        """Bytes [lo, hi) of a shard's blob, through a small LRU cache of aligned pages."""
        if hi - lo > _PAGE // 2:
            return f["blob"][lo:hi]
        p0, p1 = lo // _PAGE, (hi - 1) // _PAGE if hi > lo else lo // _PAGE
        parts = []
        for p in range(p0, p1 + 1):
            key = (shard, p)
            page = self._pages.get(key)
            if page is None:
                page = self._pages[key] = f["blob"][p * _PAGE : (p + 1) * _PAGE]
                if len(self._pages) > _MAX_PAGES:
                    self._pages.popitem(last=False)
            else:
                self._pages.move_to_end(key)
            parts.append(page)
        base = p0 * _PAGE
        data = parts[0] if len(parts) == 1 else np.concatenate(parts)
        return data[lo - base : hi - base].copy()

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

    def _file(self, i: int) -> h5py.File:
        f = self._files.get(i)
        if f is not None:
            self._files.move_to_end(i)
            return f
        path = self._shard_paths[i]
        f = open_shard(path)
        self._files[i] = f
        if len(self._files) > _MAX_OPEN:
            _, old = self._files.popitem(last=False)
            old.close()
        return f

    def close(self) -> None:
        self._pages.clear()
        for f in self._files.values():
            f.close()
        self._files.clear()

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

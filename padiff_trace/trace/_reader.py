"""Lazy, read-only access to a trace: a Mapping from sequence number to Record.

Opening salvages: a shard that cannot be read, or belongs to another recording, is reported
in ``Trace.damage`` and the others are read; a record whose row or data fails a check stays
in the mapping and reading it raises ``DamagedRecordError``. ``open_trace`` raises only when
nothing is usable (or with ``strict=True`` on any damage).
"""

from __future__ import annotations

import fnmatch
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import CorruptTraceError, FilterError, NotATraceError, UnsupportedVersionError
from ..arrays._dtypes import decode, storage_dtype, to_float64
from ..arrays._stats import CHUNK_ELEMS
from ._header import Frame, stack_from_json
from ._integrity import Damage
from ._merge import merge
from ._open import H5_ERRORS, find_shards, gaps, short
from ._record import Record, SeqIndex
from ._schema import STAT_FIELDS, DataLoc, Kind, Phase
from ._shardindex import ShardIndex, load_shard, parse_shape
from ._shardreader import ShardFiles
from ._statsread import READ_FAILURES, StatsReader
from ._tracedir import lock_holder, shard_number
from ._verify import TraceIntegrity

__all__ = ["Record", "Trace", "open_trace"]

_RECORD_COLUMNS = (
    "seq", "step", "phase", "kind", "call", "parent", "call_index", "module", "module_type", "position",
    "dtype", "shape", "device", "numel", "data_loc",
)
_PHASES = {int(p): p for p in Phase}
_KINDS = {int(k): k for k in Kind}
_NONE, _DATASET = int(DataLoc.NONE), int(DataLoc.DATASET)


class Trace(TraceIntegrity, Mapping[int, Record]):
    """A trace opened for reading. ``trace[seq]`` -> Record, iteration in sequence order.
    Integrity (``damage``, ``health``, ``check()``): ``TraceIntegrity`` in ``_verify.py``."""

    def __init__(self, path: str | os.PathLike[str], strict: bool = False) -> None:
        self.path = Path(path)
        paths, self._single = find_shards(self.path)
        self._shard_paths = paths  # every shard file found; rows point into this list
        self._shards = ShardFiles(paths)
        loaded: list[tuple[int, ShardIndex]] = []
        damage: list[Damage] = []
        first_error: CorruptTraceError | NotATraceError | UnsupportedVersionError | None = None
        for i, sp in enumerate(paths):
            number = shard_number(sp.name)
            try:
                loaded.append((i, load_shard(self._shards.file(i), sp, -1 if number is None else number)))
                self._shards.minor[i] = loaded[-1][1].minor
                self._shards.load_checksums(i)  # while the file is open (see there)
            except (CorruptTraceError, NotATraceError, UnsupportedVersionError, FileNotFoundError) as exc:
                first_error = first_error or exc  # type: ignore[assignment]
                damage.append(Damage(sp, "shard", _reason(exc, sp), lost=0))
            except H5_ERRORS as exc:  # HDF5 noticed damage somewhere the checks above did not look
                err = CorruptTraceError(f"{sp}: damaged shard ({short(exc)})")
                first_error = first_error or err
                damage.append(Damage(sp, "shard", _reason(err, sp), lost=0))
        if not loaded:
            assert first_error is not None
            raise first_error
        m = merge(loaded, damage, -1)
        self._shards.minor.update(m.minor)
        self._rows, self._shard_of, self._strings = m.rows, m.shard_of, m.strings
        self._damage: list[Damage] = m.damage
        self._bad: dict[int, Damage] = m.bad
        self.recording: str | None = m.recording
        self.meta: dict[str, Any] = m.meta
        self.final: bool = m.final
        self.summary: dict[str, Any] = m.summary
        self._skipped, self._lost = m.skipped, m.lost
        self._read_ok = sorted(m.minor)  # file positions merged into the index
        old_format = np.array([m.minor.get(k, 0) < 1 for k in range(len(paths))], dtype=bool)
        self._unverified = int(np.count_nonzero(old_format[self._shard_of] & (self._rows["data_loc"] == _DATASET)))
        self._checked = False
        self._seq_index = SeqIndex(self._rows["seq"])
        self._stats = StatsReader(self._shards)
        self._stack_cache: dict[int, tuple[Frame, ...]] = {}
        self._shape_cache: dict[int, tuple[int, ...]] = {}
        self._fields = {name: k for k, name in enumerate(self._rows.dtype.names or ())}
        f = self._fields
        self._data_fields = tuple(f[c] for c in ("data_loc", "offset", "numel", "dtype", "shape", "nbytes"))
        self.missing_shards = gaps(paths) if not self._single else []
        for n in self.missing_shards:
            self._damage.append(Damage(self.path / f"shard-{n:06d}.h5", "shard", "missing (shard numbers have a gap)"))
        if strict and self._damage:
            self.close()
            more = f" (and {len(self._damage) - 1} more)" if len(self._damage) > 1 else ""
            raise first_error or CorruptTraceError(f"{self._damage[0]}{more}")

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

    def row_of(self, seq: int) -> int | None:
        """The row of ``table`` holding sequence number ``seq``, or None."""
        try:
            return self._seq_index[int(seq)]
        except KeyError:
            return None

    def record_at(self, row: int) -> Record:
        """The record in row ``row`` of ``table`` (0 <= row < len(self))."""
        return self._record(row)

    def __contains__(self, seq: object) -> bool:
        return isinstance(seq, (int, np.integer)) and int(seq) in self._seq_index

    def records(self) -> Iterator[Record]:
        """All records in sequence order."""
        s = self._strings
        shapes = self._shape_cache
        for i, (seq, step, phase, kind, call, parent, cidx, module, mtype, pos, dtype, shape_id, dev, numel, loc) in (
            enumerate(self._column_rows())
        ):
            shape = shapes.get(shape_id)
            if shape is None:
                shape = shapes[shape_id] = parse_shape(s[shape_id]) or ()
            yield Record(
                self, i, seq, step, _PHASES[phase], _KINDS[kind], s[module], s[mtype], call, parent, cidx,
                s[pos], s[dtype], shape, s[dev], numel, loc != 0,
            )

    @property
    def complete(self) -> bool:
        """The recorder closed the trace cleanly and every record of it is in the index (data
        damage found by reads does not change this: see ``health``)."""
        return (
            self.final and not self.missing_shards and not self._lost
            and not any(d.what == "shard" for d in self._damage)
        )

    @property
    def writer_pid(self) -> int | None:
        """The pid of a live process writing this trace now (this host), else None."""
        return lock_holder(self.path) if not self._single else None

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

    def stats_at(self, row: int) -> np.ndarray:
        """The statistics of the record in row ``row`` (``STAT_FIELDS`` order, float64), read
        from its shard and verified again (``DamagedRecordError`` when they no longer verify)."""
        try:
            return self._stats.at(int(self._shard_of[row]), int(self._rows["frow"][row]))
        except READ_FAILURES as exc:
            seq = int(self._rows["seq"][row])
            raise self._damaged_error(row, Damage(self._shard_paths[int(self._shard_of[row])], f"record {seq}", str(exc))) from None

    def stat_column(self, name: str) -> np.ndarray:
        """One statistic of every record (float64 by row; NaN where its rows no longer read or
        verify, which is added to ``damage``). Reads the index's rows a stored chunk at a time."""
        return self.stat_columns(name)[:, 0]

    def stat_columns(self, *names: str) -> np.ndarray:
        """Several statistics of every record in one read of ``/records``: a (records, names)
        float64 matrix, NaN as in ``stat_column``."""
        fields = [STAT_FIELDS.index(n) for n in names]
        out = np.full((len(self._rows), len(fields)), np.nan)
        for rows, values in self._stats.column(self._shard_of, self._rows["frow"], fields):
            if values is None:
                where = self._shard_paths[int(self._shard_of[rows[0]])]
                self._damage.append(Damage(where, f"statistics of {len(rows)} records", "unreadable since the trace was opened"))
            else:
                out[rows] = values
        return out

    def counts(self) -> dict[str, Counter[str]]:
        kinds = Counter(Kind(int(k)).label for k in self._rows["kind"])
        phases = Counter(Phase(int(p)).label for p in self._rows["phase"])
        return {"kind": kinds, "phase": phases}

    def steps(self) -> list[int]:
        return sorted(int(s) for s in np.unique(self._rows["step"]))

    def size_bytes(self) -> int:
        total = 0
        for p in self._shard_paths:
            try:
                total += p.stat().st_size
            except OSError:
                pass
        return total

    # ------------------------------------------------------------------ data
    def read(self, seq: int) -> np.ndarray:
        # hot path (every tensor of a comparison): plain lists, no Record built
        try:
            i = self._seq_index[int(seq)]
        except KeyError:
            raise KeyError(f"{self.path}: no record with sequence number {seq}") from None
        loc, off, numel, dtype_id, shape_id, shard, nbytes = self._data_row(i)
        if self._bad and int(seq) in self._bad:
            raise self._damaged_error(i, self._bad[int(seq)])
        if loc == _NONE:
            rec = self._record(i)
            raise KeyError(f"{self.path}: record {seq} ({rec.name}) holds statistics only, no tensor data")
        logical = self._strings[dtype_id]
        shape = self._shape_cache.get(shape_id)
        if shape is None:
            shape = self._shape_cache[shape_id] = parse_shape(self._strings[shape_id]) or ()
        stored = self._stored_at(i, shard, loc, off, nbytes, storage_dtype(logical), 0, numel)
        return decode(stored, logical).reshape(shape)

    def iter_chunks(self, seq: int, chunk_elems: int = CHUNK_ELEMS) -> Iterator[np.ndarray]:
        rec = self[seq]
        if not rec.has_data:
            raise KeyError(f"{self.path}: record {seq} ({rec.name}) holds statistics only, no tensor data")
        for start in range(0, rec.numel, chunk_elems):
            stored = self.read_stored(rec, start, min(rec.numel, start + chunk_elems))
            vals = to_float64(stored, rec.dtype)
            if vals is None:
                raise KeyError(f"{self.path}: record {seq} has dtype {rec.dtype}, which cannot be decoded")
            yield vals

    def read_stored(
        self, rec: Record, start: int = 0, stop: int | None = None, *, view: bool = False,
        checks: list[Callable[[], None]] | None = None,
    ) -> np.ndarray:
        """Elements [start, stop) of a record as stored (flat; bfloat16 as its raw 16 bits,
        decode with ``padiff_trace.decode``). ``view``: the array may be read-only, mapped from
        the file, which saves a copy for large tensors. ``checks``: the bytes' CRC-32 tests may be
        left in this list, to be called before anything computed from them is used (each raises
        ``DamagedRecordError`` as a failed read would; the analyzer runs them on cached bytes)."""
        loc, off, _, _, _, shard, nbytes = self._data_row(rec.row)
        if self._bad and rec.seq in self._bad:
            raise self._damaged_error(rec.row, self._bad[rec.seq])
        end = rec.numel if stop is None else stop
        return self._stored_at(rec.row, shard, loc, off, nbytes, storage_dtype(rec.dtype), start, end, view, checks)

    def storage_key(self, rec: Record) -> tuple[int, int, int, int]:
        """Where a record's bytes live: (shard, location, offset, bytes). Records with equal
        keys hold the same bytes (the writer stores a tensor recorded twice once)."""
        row = self._rows[rec.row]
        return int(self._shard_of[rec.row]), int(row["data_loc"]), int(row["offset"]), int(row["nbytes"])

    @property
    def shard_paths(self) -> tuple[Path, ...]:
        """The shard files whose records are in this trace's index, in order."""
        return tuple(self._shard_paths[i] for i in self._read_ok)

    def _data_columns(self) -> tuple[np.ndarray, ...]:
        """(data_loc, offset, numel, dtype, shape, shard, nbytes) as columns (views where they can be)."""
        r = self._rows
        return r["data_loc"], r["offset"], r["numel"], r["dtype"], r["shape"], self._shard_of, r["nbytes"]

    def _data_row(self, i: int) -> list[int]:
        """Row ``i`` of ``_data_columns`` as Python ints (the hot path of every read; ~1 us, with
        no second copy of the columns: a stacked int64 matrix cost 56 bytes a record)."""
        row = self._rows[i].item()
        loc, off, numel, dtype, shape, nbytes = (row[k] for k in self._data_fields)
        return [loc, off, numel, dtype, shape, int(self._shard_of[i]), nbytes]

    # ------------------------------------------------------------------ internals
    def _column_rows(self, block: int = 1 << 16) -> Iterator[tuple[Any, ...]]:
        """The record columns of every row as Python values, converted a block at a time (a
        cache of them all would hold ~200 bytes per record for the trace's lifetime)."""
        r = self._rows
        for lo in range(0, len(r), block):
            part = r[lo : lo + block]
            yield from zip(*(part[c].tolist() for c in _RECORD_COLUMNS))

    def _record(self, i: int) -> Record:
        row = self._rows[i].item()
        f = self._fields
        seq, step, phase, kind, call, parent, call_index, module, mtype, pos, dtype, shape_id, dev, numel, loc = (
            row[f[c]] for c in _RECORD_COLUMNS
        )
        s = self._strings
        shape = self._shape_cache.get(shape_id)
        if shape is None:
            shape = self._shape_cache[shape_id] = parse_shape(s[shape_id]) or ()
        return Record(
            self, i, seq, step, _PHASES[phase], _KINDS[kind], s[module], s[mtype], call, parent, call_index,
            s[pos], s[dtype], shape, s[dev], numel, loc != 0,
        )

    def stack_at(self, row: int) -> tuple[Frame, ...]:
        """The call stack of the record in index row ``row`` (``Record.stack``)."""
        return self._stack(int(self._rows["stack"][row]))

    def _stack(self, sid: int) -> tuple[Frame, ...]:
        st = self._stack_cache.get(sid)
        if st is None:
            try:
                st = stack_from_json(self._strings[sid])
            except (ValueError, TypeError, IndexError, KeyError):  # a malformed stack: shown as none
                self._damage.append(Damage(self.path, f"string {sid}", "a stack that is not a list of frames"))
                st = ()
            self._stack_cache[sid] = st
        return st

    def close(self) -> None:
        self._shards.close()
        self._stats.clear()  # read again (and verified again) after a close

    def __enter__(self) -> Trace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = ("complete" if self.complete else "incomplete") + ("" if not self._damage else ", damaged")
        return f"<Trace {self.path} {self.meta.get('framework', '?')} {len(self)} records, {state}>"


def open_trace(path: str | os.PathLike[str], strict: bool = False) -> Trace:
    """Open a trace directory (or a single shard file) for reading. Damage is reported in
    ``Trace.damage`` and the rest is read; ``strict``: raise ``CorruptTraceError`` instead."""
    return Trace(path, strict)


def is_trace(path: str | os.PathLike[str]) -> bool:
    """``path`` is a directory holding at least one shard file (exact name)."""
    p = Path(path)
    return p.is_dir() and any(shard_number(c.name) is not None for c in p.iterdir())


def _reason(exc: BaseException, path: Path) -> str:
    """An exception's one-line message without the file name it starts with."""
    text = str(exc)
    prefix = f"{path}: "
    return text[len(prefix):] if text.startswith(prefix) else text


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

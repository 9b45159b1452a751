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
from ._header import Frame
from ._index import TraceIndex
from ._integrity import Damage, Health
from ._merge import merge
from ._open import H5_ERRORS, find_shards, gaps, short
from ._record import Record
from ._schema import STAT_FIELDS, DataLoc, Kind, Phase
from ._shardindex import ShardIndex, load_shard
from ._shardreader import ShardFiles
from ._statsread import READ_FAILURES, StatsReader
from ._tracedir import lock_holder, shard_number
from ._verify import TraceIntegrity

__all__ = ["Record", "Trace", "open_trace"]

_NONE = int(DataLoc.NONE)


class Trace(Mapping[int, Record]):
    """A trace opened for reading. ``trace[seq]`` -> Record, iteration in sequence order.

    Composed of its index (``TraceIndex``: the record table, rows to ``Record``), its stored
    bytes (``ShardFiles``; statistics through ``StatsReader``) and its integrity
    (``TraceIntegrity``: damage, health, verified reads, ``check()``)."""

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
        self._index = index = TraceIndex(m.rows, m.shard_of, m.strings)
        self.recording: str | None = m.recording
        self.meta: dict[str, Any] = m.meta
        self.final: bool = m.final
        self.summary: dict[str, Any] = m.summary
        self._read_ok = sorted(m.minor)  # file positions merged into the index
        old_format = np.array([m.minor.get(k, 0) < 1 for k in range(len(paths))], dtype=bool)
        unverified = int(np.count_nonzero(old_format[index.shard_of] & (index.rows["data_loc"] == int(DataLoc.DATASET))))
        missing = gaps(paths) if not self._single else []
        self._integrity = TraceIntegrity(
            self.path, self._shards, paths, index, damage=m.damage, bad=m.bad, lost=m.lost, skipped=m.skipped,
            unverified=unverified, missing_shards=missing, name_at=lambda row: self.record_at(row).name,
        )
        for n in missing:
            self._integrity.add(Damage(self.path / f"shard-{n:06d}.h5", "shard", "missing (shard numbers have a gap)"))
        self._stats = StatsReader(self._shards)
        if strict and self.damage:
            self.close()
            found = self.damage
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            raise first_error or CorruptTraceError(f"{found[0]}{more}")

    # ------------------------------------------------------------------ mapping
    def __len__(self) -> int:
        return len(self._index)

    def __iter__(self) -> Iterator[int]:
        return iter(int(s) for s in self._index.rows["seq"])

    def __getitem__(self, seq: int) -> Record:
        try:
            i = self._index.row(seq)
        except KeyError:
            raise KeyError(f"{self.path}: no record with sequence number {seq}") from None
        return self._index.record_at(self, i)

    def row_of(self, seq: int) -> int | None:
        """The row of ``table`` holding sequence number ``seq``, or None."""
        try:
            return self._index.row(seq)
        except KeyError:
            return None

    def record_at(self, row: int) -> Record:
        """The record in row ``row`` of ``table`` (0 <= row < len(self))."""
        return self._index.record_at(self, row)

    def __contains__(self, seq: object) -> bool:
        return isinstance(seq, (int, np.integer)) and int(seq) in self._index.seqs

    def records(self) -> Iterator[Record]:
        """All records in sequence order."""
        return self._index.records(self)

    @property
    def complete(self) -> bool:
        """The recorder closed the trace cleanly and every record of it is in the index (data
        damage found by reads does not change this: see ``health``)."""
        return (
            self.final and not self.missing_shards and not self._integrity.lost
            and not any(d.what == "shard" for d in self.damage)
        )

    @property
    def writer_pid(self) -> int | None:
        """The pid of a live process writing this trace now (this host), else None."""
        return lock_holder(self.path) if not self._single else None

    @property
    def table(self) -> np.ndarray:
        """The raw index (structured array, string columns as ids into ``strings``)."""
        return self._index.rows

    @property
    def strings(self) -> list[str]:
        return self._index.strings

    def select(
        self,
        module: str | None = None,
        kind: Kind | str | Iterable[Kind | str] | None = None,
        phase: Phase | str | Iterable[Phase | str] | None = None,
        step: int | Iterable[int] | None = None,
    ) -> list[Record]:
        """Records matching all given filters; ``module`` is a glob (``encoder.*.q_proj``)."""
        rows = self._index.rows
        mask = np.ones(len(rows), dtype=bool)
        if module is not None:
            ok = np.array([fnmatch.fnmatchcase(s, module) for s in self._index.strings] or [False])
            mask &= ok[rows["module"]]
        if kind is not None:
            mask &= np.isin(rows["kind"], [int(_enum(Kind, k)) for k in _many(kind)])
        if phase is not None:
            mask &= np.isin(rows["phase"], [int(_enum(Phase, p)) for p in _many(phase)])
        if step is not None:
            mask &= np.isin(rows["step"], [int(s) for s in _many(step)])
        return [self.record_at(int(i)) for i in np.flatnonzero(mask)]

    def stats_at(self, row: int) -> np.ndarray:
        """The statistics of the record in row ``row`` (``STAT_FIELDS`` order, float64), read
        from its shard and verified again (``DamagedRecordError`` when they no longer verify)."""
        index = self._index
        try:
            return self._stats.at(int(index.shard_of[row]), int(index.rows["frow"][row]))
        except READ_FAILURES as exc:
            seq = index.seq_at(row)
            where = self._shard_paths[int(index.shard_of[row])]
            raise self._integrity.damaged_error(row, Damage(where, f"record {seq}", str(exc))) from None

    def stat_column(self, name: str) -> np.ndarray:
        """One statistic of every record (float64 by row; NaN where its rows no longer read or
        verify, which is added to ``damage``). Reads the index's rows a stored chunk at a time."""
        return self.stat_columns(name)[:, 0]

    def stat_columns(self, *names: str) -> np.ndarray:
        """Several statistics of every record in one read of ``/records``: a (records, names)
        float64 matrix, NaN as in ``stat_column``."""
        index = self._index
        fields = [STAT_FIELDS.index(n) for n in names]
        out = np.full((len(index), len(fields)), np.nan)
        for rows, values in self._stats.column(index.shard_of, index.rows["frow"], fields):
            if values is None:
                where = self._shard_paths[int(index.shard_of[rows[0]])]
                self._integrity.add(Damage(where, f"statistics of {len(rows)} records", "unreadable since the trace was opened"))
            else:
                out[rows] = values
        return out

    def counts(self) -> dict[str, Counter[str]]:
        rows = self._index.rows
        kinds = Counter(Kind(int(k)).label for k in rows["kind"])
        phases = Counter(Phase(int(p)).label for p in rows["phase"])
        return {"kind": kinds, "phase": phases}

    def steps(self) -> list[int]:
        return sorted(int(s) for s in np.unique(self._index.rows["step"]))

    def size_bytes(self) -> int:
        total = 0
        for p in self._shard_paths:
            try:
                total += p.stat().st_size
            except OSError:
                pass
        return total

    # ------------------------------------------------------------------ integrity
    @property
    def damage(self) -> list[Damage]:
        """What was found damaged so far: at open (shards, rows, string tables, attributes) and
        by reads since (data failing its checksum). ``check()`` reads everything."""
        return self._integrity.damage

    @property
    def health(self) -> Health:
        """The integrity of the trace in numbers (``str()``: one line)."""
        return self._integrity.health

    @property
    def format_minor(self) -> int:
        """The lowest format minor version among the shards read (0: format 1.0, fewer checksums)."""
        return self._integrity.format_minor

    @property
    def missing_shards(self) -> list[int]:
        """Shard numbers absent from a gap in the trace's numbering."""
        return self._integrity.missing_shards

    def damage_of(self, seq: int) -> Damage | None:
        """Why record ``seq``'s data cannot be read, or None (intact as far as known)."""
        return self._integrity.damage_of(seq)

    def check(self, progress: Callable[[int], None] | None = None) -> list[Damage]:
        """Read and verify every stored byte of the trace (each stored tensor once); returns
        ``damage`` afterwards. ``progress(nbytes)`` is called as bytes are verified."""
        return self._integrity.check(progress)

    # ------------------------------------------------------------------ data
    def read(self, seq: int) -> np.ndarray:
        # hot path (every tensor of a comparison): plain lists, no Record built
        index, integrity = self._index, self._integrity
        try:
            i = index.seqs[int(seq)]
        except KeyError:
            raise KeyError(f"{self.path}: no record with sequence number {seq}") from None
        loc, off, numel, dtype_id, shape_id, shard, nbytes = index.data_row(i)
        bad = integrity.bad
        if bad and int(seq) in bad:
            raise integrity.damaged_error(i, bad[int(seq)])
        if loc == _NONE:
            raise KeyError(f"{self.path}: record {seq} ({self.record_at(i).name}) holds statistics only, no tensor data")
        logical = index.strings[dtype_id]
        stored = integrity.stored_at(i, shard, loc, off, nbytes, storage_dtype(logical), 0, numel)
        return decode(stored, logical).reshape(index.shape(shape_id))

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
        loc, off, _, _, _, shard, nbytes = self._index.data_row(rec.row)
        bad = self._integrity.bad
        if bad and rec.seq in bad:
            raise self._integrity.damaged_error(rec.row, bad[rec.seq])
        end = rec.numel if stop is None else stop
        return self._integrity.stored_at(rec.row, shard, loc, off, nbytes, storage_dtype(rec.dtype), start, end, view, checks)

    def storage_key(self, rec: Record) -> tuple[int, int, int, int]:
        """Where a record's bytes live: (shard, location, offset, bytes). Records with equal
        keys hold the same bytes (the writer stores a tensor recorded twice once)."""
        return self._index.storage_key(rec.row)

    def stack_at(self, row: int) -> tuple[Frame, ...]:
        """The call stack of the record in index row ``row`` (``Record.stack``); a malformed
        stack reads as none and is added to ``damage``."""
        st = self._index.stack(row)
        if st is None:
            sid = int(self._index.rows["stack"][row])
            self._integrity.add(Damage(self.path, f"string {sid}", "a stack that is not a list of frames"))
            return ()
        return st

    @property
    def shard_paths(self) -> tuple[Path, ...]:
        """The shard files whose records are in this trace's index, in order."""
        return tuple(self._shard_paths[i] for i in self._read_ok)

    def close(self) -> None:
        self._shards.close()
        self._stats.clear()  # read again (and verified again) after a close

    def __enter__(self) -> Trace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = ("complete" if self.complete else "incomplete") + ("" if not self.damage else ", damaged")
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

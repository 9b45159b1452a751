"""The integrity side of a ``Trace``: its damage list and health, verified reads of stored
bytes, and ``check()`` (read every stored tensor once; ``padiff-trace check``).

A ``Trace`` (``_reader.py``) holds one ``TraceIntegrity``, built from what opening found
(damaged shards and rows, lost and skipped records), and reads every stored byte through it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .._errors import CorruptTraceError, DamagedRecordError
from ..arrays._dtypes import STORAGE
from ._index import TraceIndex
from ._integrity import Damage, Health
from ._open import H5_ERRORS, short
from ._schema import DataLoc
from ._shardreader import ShardFiles

__all__ = ["TraceIntegrity"]

_PIECE = 16 << 20  # bytes read at a time by check()
_NONE, _DATASET = int(DataLoc.NONE), int(DataLoc.DATASET)


class TraceIntegrity:
    """Damage found so far, health, verified reads, full check."""

    def __init__(
        self, path: Path, shards: ShardFiles, shard_paths: list[Path], index: TraceIndex, *,
        damage: list[Damage], bad: dict[int, Damage], lost: int, skipped: int, unverified: int,
        missing_shards: list[int], name_at: Callable[[int], str],
    ) -> None:
        self.path = path
        self.missing_shards = missing_shards
        self._shards = shards
        self._shard_paths = shard_paths
        self._index = index
        self._damage = damage
        self.bad = bad  # seq -> why its data cannot be read
        self.lost = lost  # records known to have existed, not in the index
        self._skipped = skipped
        self._unverified = unverified
        self._checked = False
        self._name_at = name_at  # row -> the record's readable name, for messages

    def add(self, damage: Damage) -> None:
        """Damage found outside a data read (statistics, a malformed stack)."""
        self._damage.append(damage)

    @property
    def damage(self) -> list[Damage]:
        """What was found damaged so far: at open (shards, rows, string tables, attributes) and
        by reads since (data failing its checksum). ``check()`` reads everything."""
        return list(self._damage)

    @property
    def format_minor(self) -> int:
        """The lowest format minor version among the shards read (0: format 1.0, fewer checksums)."""
        return min(self._shards.minor.values(), default=0)

    def damage_of(self, seq: int) -> Damage | None:
        """Why record ``seq``'s data cannot be read, or None (intact as far as known)."""
        return self.bad.get(int(seq)) if self.bad else None

    @property
    def health(self) -> Health:
        """The integrity of the trace in numbers (``str()``: one line)."""
        missing = {self.path / f"shard-{n:06d}.h5" for n in self.missing_shards}
        return Health(
            shards=len(self._shard_paths),
            shards_damaged=len({d.shard for d in self._damage if d.what == "shard"} - missing),
            shards_missing=len(self.missing_shards),
            records=len(self._index.rows),
            records_damaged=len(self.bad),
            records_lost=self.lost,
            records_skipped=self._skipped,
            unverified=self._unverified,
            damage=len(self._damage),
            checked=self._checked,
            format_minor=self.format_minor,
        )

    def check(self, progress: Callable[[int], None] | None = None) -> list[Damage]:
        """Read and verify every stored byte of the trace (each stored tensor once); returns
        ``damage`` afterwards. ``progress(nbytes)`` is called as bytes are verified."""
        rows = self._index.rows
        idx = np.flatnonzero(rows["data_loc"] != _NONE)
        groups: dict[tuple[int, ...], list[int]] = {}  # records of one unchanged tensor share bytes
        keys = zip(self._index.shard_of[idx].tolist(), rows["data_loc"][idx].tolist(), rows["offset"][idx].tolist(),
                   rows["nbytes"][idx].tolist())
        for i, key in zip(idx.tolist(), keys):
            groups.setdefault(key, []).append(i)
        loc_c, off_c, dtype_c = rows["data_loc"], rows["offset"], rows["dtype"]
        for (shard, _, _, nbytes), members in groups.items():
            first = next((i for i in members if int(rows["seq"][i]) not in self.bad), None)
            sdt = STORAGE.get(self._index.strings[int(dtype_c[first])]) if first is not None else None
            if first is None or sdt is None:
                continue
            n, step = nbytes // sdt.itemsize, max(1, _PIECE // sdt.itemsize)
            try:
                for lo in range(0, n, step):
                    self.stored_at(first, shard, int(loc_c[first]), int(off_c[first]), nbytes, sdt, lo, min(n, lo + step))
                    if progress is not None:
                        progress((min(n, lo + step) - lo) * sdt.itemsize)
            except DamagedRecordError as exc:
                self._share(members, exc)
        self._checked = True
        return self.damage

    def _share(self, members: list[int], exc: DamagedRecordError) -> None:
        """Every record stored in the same bytes is damaged alike: one finding naming them all."""
        seqs = tuple(int(self._index.rows["seq"][i]) for i in members)
        old = self.bad.get(exc.seq)
        names = ", ".join(map(str, seqs[:5])) + (", ..." if len(seqs) > 5 else "")
        d = Damage(old.shard if old else self.path, f"record{'s' if len(seqs) > 1 else ''} {names}", exc.reason, seqs)
        if old is not None and old in self._damage:
            self._damage[self._damage.index(old)] = d
        else:
            self._damage.append(d)
        for s in seqs:
            self.bad[s] = d

    def stored_at(
        self, i: int, shard: int, loc: int, off: int, nbytes: int, sdt: np.dtype, start: int, stop: int,
        view: bool = False, checks: list[Callable[[], None]] | None = None,
    ) -> np.ndarray:
        """Stored elements [start, stop) of row ``i`` (data location ``loc``, ``off`` in ``shard``),
        verified; a failure marks the record damaged and raises ``DamagedRecordError``. With
        ``checks``, a tensor dataset's CRC-32 test may be appended there instead (it fails the
        same way when run; ``Trace.read_stored``)."""
        try:
            if not 0 <= start <= stop <= nbytes // sdt.itemsize:
                raise ValueError(f"elements {start}-{stop} outside the record's {nbytes} bytes")
            if loc == _DATASET:  # off: the owner's seq
                if checks is None:
                    return self._shards.dataset_slice(shard, str(off), sdt, start, stop, nbytes, view)
                later: list[Callable[[], None]] = []
                got = self._shards.dataset_slice(shard, str(off), sdt, start, stop, nbytes, view, later)
                checks.extend(functools.partial(self._check_later, i, shard, fn) for fn in later)
                return got
            lo = off + start * sdt.itemsize
            return self._shards.blob_bytes(shard, lo, lo + (stop - start) * sdt.itemsize).view(sdt)
        except (*H5_ERRORS, CorruptTraceError) as exc:
            self._shards.raise_if_changed(shard, self._what(i))  # changed under the reader: not damage
            raise self._read_failed(i, shard, exc) from None

    def _check_later(self, i: int, shard: int, check: Callable[[], None]) -> None:
        """A deferred CRC-32 test of row ``i``'s bytes: a failure is a damaged record, as on read."""
        try:
            check()
        except (*H5_ERRORS, CorruptTraceError) as exc:
            self._shards.raise_if_changed(shard, self._what(i))
            raise self._read_failed(i, shard, exc) from None

    def _what(self, i: int) -> str:
        return f"record {self._index.seq_at(i)} ({self._name_at(i)})"

    def _read_failed(self, i: int, shard: int, exc: BaseException) -> DamagedRecordError:
        """Row ``i``'s data failed a read or a check: record the damage (once) and say so."""
        seq = int(self._index.rows["seq"][i])
        d = self.bad.get(seq)
        if d is None:
            where = self._shard_paths[shard]
            reason = short(exc) if not str(exc) else str(exc).splitlines()[0].removeprefix(f"{where}: ")[:200]
            d = self.bad[seq] = Damage(where, f"record {seq}", reason, seqs=(seq,))
            self._damage.append(d)
        return self.damaged_error(i, d)

    def damaged_error(self, i: int, d: Damage) -> DamagedRecordError:
        """The error a read of row ``i`` raises, damaged as ``d`` says."""
        seq = self._index.seq_at(i)
        return DamagedRecordError(
            f"{d.shard}: record {seq} ({self._name_at(i)}) is damaged: {d.reason}", str(d.shard), seq, d.reason
        )

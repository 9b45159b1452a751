"""Record statistics read from ``/records`` when asked for, not kept in the opened index.

The eight statistics are 64 of a row's 148 bytes; an opened trace of a million records held
~64 MB of them that a comparison reads a few of. The index keeps each row's place in its
shard's ``/records`` (``frow``); statistics are read back a ``/records`` chunk at a time
(the unit of the CRC-32 the writer stored), verified again (the file may have changed since
it was opened: the shard is re-opened only if it is the same file), and a few decoded chunks
are kept. A chunk that no longer reads or verifies raises ``ValueError`` naming its rows
(``at``) or comes back as None (``column``).
"""

from __future__ import annotations

import zlib
from collections import OrderedDict
from collections.abc import Iterator

import h5py
import numpy as np

from .._errors import UserError
from ._open import H5_ERRORS, short
from ._schema import STAT_FIELDS
from ._shardreader import ShardFiles

__all__ = ["READ_FAILURES", "StatsReader"]

# what reading statistics back can raise once the trace is open: an unreadable or failing chunk
# (ValueError), the OS, a shard file gone, replaced or no longer HDF5 (UserError)
READ_FAILURES = (ValueError, OSError, UserError)
_KEEP = 8  # decoded chunks kept (4096 rows x 64 bytes each with the writer's chunking)
_NSTATS = len(STAT_FIELDS)


class StatsReader:
    """Statistics of rows of the shards of one trace, read and verified a chunk at a time."""

    def __init__(self, shards: ShardFiles) -> None:
        self._shards = shards
        self._layout: dict[int, tuple[int, np.ndarray | None]] = {}  # shard -> (rows per chunk, CRC-32s)
        self._cache: OrderedDict[tuple[int, int], np.ndarray] = OrderedDict()

    def at(self, shard: int, frow: int) -> np.ndarray:
        """The statistics (``STAT_FIELDS`` order, float64) of row ``frow`` of ``shard``."""
        per = self._per(shard)
        k = frow // per
        block = self._cache.get((shard, k))
        if block is None:
            block = self._cache[(shard, k)] = self._chunk(shard, k)
            if len(self._cache) > _KEEP:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end((shard, k))
        return block[frow - k * per]

    def column(self, shard_of: np.ndarray, frow: np.ndarray, fields: list[int]) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
        """For each stored chunk holding rows of the index: (index rows, their statistics
        ``fields`` as a (rows, fields) matrix), or (index rows, None) when the chunk no longer
        reads or verifies. Streams: nothing is cached."""
        for shard in np.unique(shard_of).tolist():
            mine = np.flatnonzero(shard_of == shard)
            try:
                per = self._per(shard)
            except READ_FAILURES:
                yield mine, None
                continue
            chunk_of = frow[mine] // per
            order = np.argsort(chunk_of, kind="stable")
            mine, chunk_of = mine[order], chunk_of[order]
            starts = np.flatnonzero(np.r_[True, chunk_of[1:] != chunk_of[:-1]]) if len(mine) else np.zeros(0, np.intp)
            for lo, hi in zip(starts.tolist(), [*starts[1:].tolist(), len(mine)]):
                rows, k = mine[lo:hi], int(chunk_of[lo])
                try:
                    block = self._chunk(shard, k)
                except READ_FAILURES:
                    yield rows, None
                    continue
                yield rows, block[(frow[rows] - k * per)[:, None], fields]

    def clear(self) -> None:
        self._cache.clear()

    def _per(self, shard: int) -> int:
        got = self._layout.get(shard)
        if got is None:
            ds = self._records(shard)
            try:
                per = int((ds.chunks or (max(ds.shape[0], 1),))[0])
                crcs = np.asarray(ds.attrs["crc32"]) if self._shards.minor.get(shard, 0) >= 1 and ds.shape[0] else None
            except H5_ERRORS as exc:
                raise ValueError(f"{self._shards.path(shard)}: /records unreadable ({short(exc)})") from None
            got = self._layout[shard] = (per, crcs)
        return got[0]

    def _records(self, shard: int) -> h5py.Dataset:
        try:
            return self._shards.file(shard)["records"]
        except H5_ERRORS as exc:
            raise ValueError(f"{self._shards.path(shard)}: /records unreadable ({short(exc)})") from None

    def _chunk(self, shard: int, k: int) -> np.ndarray:
        per = self._per(shard)
        crcs = self._layout[shard][1]
        ds = self._records(shard)
        lo = k * per
        hi = min(lo + per, ds.shape[0])
        where = f"{self._shards.path(shard)}: /records rows {lo}-{hi - 1}"
        try:
            part = ds[lo:hi]
        except H5_ERRORS as exc:
            self._shards.raise_if_changed(shard, f"/records rows {lo}-{hi - 1}")
            raise ValueError(f"{where} unreadable ({short(exc)})") from None
        if crcs is not None and (k >= len(crcs) or zlib.crc32(part.view(np.uint8)) != int(crcs[k])):
            self._shards.raise_if_changed(shard, f"/records rows {lo}-{hi - 1}")
            raise ValueError(f"{where} fail their CRC-32 (changed since the trace was opened)")
        return np.ascontiguousarray(part["stats"], dtype=np.float64).reshape(len(part), _NSTATS)

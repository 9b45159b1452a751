"""Reading tensor bytes from the shard files of one trace, verified.

Shards are opened on demand (at most ``_MAX_OPEN`` at once); a shard opened again must be the
same file (device, inode, size, mtime) or ``TraceChangedError`` is raised, as it is when a read
fails on a file that changed since it was opened (truncated in place by ``cp``). Small tensors
come from ``/blob`` through an LRU cache of aligned pages; a contiguous tensor dataset is read
at the file offset the writer indexed in ``/tensor_offsets`` with ``os.preadv`` (into
buffers reused when the caller only looks at the data, ``_readbuf``); files are never mapped, so a
shrinking file cannot kill the reader with SIGBUS. Objects read through HDF5 are checked to
stay inside the file (``_closed``) before they are read.

Format 1.1 data is verified against its CRC-32 per ``CRC_CHUNK`` before it is returned (each
chunk once: verified chunks are remembered); a read is widened to whole chunks when a chunk
it touches is not verified yet. Failures raise ``ValueError``/``OSError`` naming the bytes;
the ``Trace`` turns them into ``DamagedRecordError`` naming the record. A caller may take the
verification of a tensor read as a deferred check instead (``dataset_slice(checks=...)``),
which it must run before it uses what it computed from the bytes.
"""

from __future__ import annotations

import functools
import os
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from .._errors import CorruptTraceError, ShardChangedError, TraceChangedError, TraceNotFoundError
from ._closed import hard_dataset
from ._integrity import crc32
from ._open import H5_ERRORS, open_shard, short
from ._readbuf import ReadBuffers, lend
from ._schema import CRC_ALGORITHM
from ._shardindex import identity, table

__all__ = ["ShardFiles"]

_MAX_OPEN = 32
_PAGE = 1 << 20  # blob bytes read and cached at a time (a multiple of the CRC chunk)
_MAX_PAGES = 8  # 8 MiB of cached blob pages per trace at most (reads walk the blob nearly in order)
_U8 = np.dtype(np.uint8)
_OWN_READ = 1 << 20  # a read for the caller to keep this large lets the reused read buffers go


@dataclass(slots=True)
class _Crcs:
    """A shard's CRC-32 tables: values, {dataset name or -1 (blob): (nbytes, first, count)}."""

    values: np.ndarray
    entries: dict[int, tuple[int, int, int]]
    chunk: int


@dataclass(slots=True)
class _Tensor:
    offset: int | None  # file offset of contiguous, unfiltered data; None: read through HDF5
    nbytes: int
    first: int  # its first CRC in ``_Crcs.values``
    verified: np.ndarray | None  # per CRC chunk; None: no checksums (format 1.0)


class ShardFiles:
    """The open shard files of one trace and verified byte-level reads from them."""

    def __init__(self, paths: list[Path]) -> None:
        self._paths = paths
        self._files: OrderedDict[int, h5py.File] = OrderedDict()
        self.identities: dict[int, tuple[int, int, int, int]] = {}  # shard -> identity when first opened
        self.minor: dict[int, int] = {}  # shard -> format minor version (set by the trace)
        self._crcs: dict[int, _Crcs | CorruptTraceError | None] = {}
        self._index: dict[int, dict[int, int]] = {}  # shard -> {dataset name: file offset}
        self._tensors: dict[tuple[int, str], _Tensor] = {}
        self._pages: OrderedDict[tuple[int, int], np.ndarray] = OrderedDict()
        self._blob_ok: dict[int, np.ndarray] = {}  # shard -> verified blob chunks
        self._buffers = ReadBuffers()

    def path(self, i: int) -> Path:
        return self._paths[i]

    def file(self, i: int) -> h5py.File:
        """Shard ``i``, opened on first use; at most ``_MAX_OPEN`` stay open."""
        f = self._files.get(i)
        if f is not None:
            self._files.move_to_end(i)
            return f
        path = self._paths[i]
        try:
            f = open_shard(path)
        except TraceNotFoundError:
            if i in self.identities:
                raise TraceChangedError(f"{path}: the file was removed after the trace was opened") from None
            raise
        ident = identity(f)
        known = self.identities.setdefault(i, ident)
        if known != ident:
            f.close()
            raise TraceChangedError(
                f"{path}: the file was replaced or modified after the trace was opened "
                "(inode, size or modification time differ); open the trace again"
            )
        self._files[i] = f
        if len(self._files) > _MAX_OPEN:
            _, old = self._files.popitem(last=False)
            old.close()
        return f

    def changed(self, i: int) -> str:
        """How shard ``i`` differs from the file first opened ('' when it does not); asked after
        a read failed: a file truncated or rewritten in place is not damage of the trace."""
        known = self.identities.get(i)
        if known is None:
            return ""
        f = self._files.get(i)
        try:
            st = os.fstat(f.id.get_vfd_handle()) if f is not None else os.stat(self._paths[i])
        except (*H5_ERRORS, OSError):
            return ""
        if (st.st_dev, st.st_ino) != known[:2]:
            return "the file was replaced"
        if st.st_size != known[2]:
            return f"the file changed size from {known[2]} to {st.st_size} bytes"
        return "the file was rewritten in place" if st.st_mtime_ns != known[3] else ""

    def raise_if_changed(self, i: int, what: str) -> None:
        """``ShardChangedError`` naming ``what`` could not be read, when shard ``i`` changed."""
        how = self.changed(i)
        if how:
            raise ShardChangedError(
                f"{self._paths[i]}: {what} cannot be read: {how} after the trace was opened; "
                "open the trace again once nothing writes it"
            )

    # ------------------------------------------------------------------ checksums
    def load_checksums(self, shard: int) -> None:
        """Read shard ``shard``'s CRC-32 tables now, with its index (a failure is kept for the
        first read that needs them): read later, tables of a shard overwritten in place by
        another recording would agree with its new bytes, and those would pass as this trace's."""
        if shard not in self._crcs and self.minor.get(shard, 0) >= 1:
            self._crcs[shard] = self._load_crcs(shard)

    def crcs(self, shard: int) -> _Crcs | None:
        """The shard's CRC-32 tables (None: format 1.0, which has none)."""
        got = self._crcs.get(shard, False)
        if got is False:
            got = self._crcs[shard] = self._load_crcs(shard) if self.minor.get(shard, 0) >= 1 else None
        if isinstance(got, CorruptTraceError):
            raise got
        return got  # type: ignore[return-value]

    def _load_crcs(self, shard: int) -> _Crcs | CorruptTraceError:
        f = self.file(shard)
        size = self.identities[shard][2]
        try:
            ds = f["crc32"]
            values = table(ds, self._paths[shard], size)
            chunk = int(ds.attrs["chunk_bytes"])
            algorithm = ds.attrs.get("algorithm", CRC_ALGORITHM)
            algorithm = algorithm.decode() if isinstance(algorithm, bytes) else str(algorithm)
            algorithm = algorithm if len(algorithm) <= 40 else algorithm[:40] + "..."  # named in a message
            rows = table(f["crc32_index"], self._paths[shard], size)
        except (*H5_ERRORS, CorruptTraceError) as exc:
            return CorruptTraceError(f"checksum tables unreadable ({short(exc)})")
        if algorithm != CRC_ALGORITHM:
            return CorruptTraceError(f"checksum algorithm {algorithm!r} is unknown to this reader; upgrade padiff-trace")
        if rows.ndim != 2 or rows.shape[1] != 4 or chunk <= 0:
            return CorruptTraceError("checksum index has the wrong layout")
        entries: dict[int, tuple[int, int, int]] = {}
        for name, nbytes, first, count in rows.tolist():
            if nbytes < 0 or first < 0 or first + count > len(values) or count != -(-nbytes // chunk):
                return CorruptTraceError(f"checksum index entry for {name} is inconsistent")
            entries[name] = (nbytes, first, count)
        return _Crcs(values, entries, chunk)

    def _verify(self, c: _Crcs, first: int, raw: np.ndarray, at: int, nbytes: int, done: np.ndarray, what: str) -> None:
        """Check the whole CRC chunks of ``raw`` (object bytes from ``at``, a chunk boundary) that
        are not verified yet; mark them."""
        mv = raw.data.cast("B")
        c0 = at // c.chunk
        for j in range(c0, c0 + -(-len(mv) // c.chunk)):
            if done[j]:
                continue
            lo = j * c.chunk
            piece = mv[lo - at : min(lo + c.chunk, nbytes) - at]
            if crc32(piece) != int(c.values[first + j]):
                raise ValueError(f"{what} bytes {lo}-{lo + len(piece) - 1} fail their CRC-32")
            done[j] = True

    # ------------------------------------------------------------------ tensor datasets
    def _tensor(self, shard: int, name: str, sdt: np.dtype) -> _Tensor:
        key = (shard, name)
        t = self._tensors.get(key)
        if t is not None:
            return t
        f = self.file(shard)
        c = self.crcs(shard)
        offset = self._offsets(shard, f).get(int(name)) if c is not None else None
        ds = None
        if offset is None:  # through HDF5 (format 1.0, compressed data): checked to stay in the file
            ds = hard_dataset(f["tensors"], name, self._paths[shard], self.identities[shard][2])
            if ds.ndim != 1 or ds.dtype != sdt:
                raise ValueError(f"/tensors/{name} is {ds.dtype} {ds.shape}, the record says {sdt} (1-D)")
            plist = ds.id.get_create_plist()
            if plist.get_layout() == h5py.h5d.CONTIGUOUS and plist.get_nfilters() == 0:
                offset = ds.id.get_offset()
        if c is None:
            assert ds is not None
            t = _Tensor(offset, ds.size * sdt.itemsize, 0, None)
        else:
            entry = c.entries.get(int(name))
            if entry is None:
                raise ValueError(f"/tensors/{name} has no checksum entry")
            nbytes, first, count = entry
            if ds is not None and ds.size * sdt.itemsize != nbytes:
                raise ValueError(f"/tensors/{name} holds {ds.size * sdt.itemsize} bytes, its checksums cover {nbytes}")
            t = _Tensor(offset, nbytes, first, np.zeros(count, dtype=bool))
        self._tensors[key] = t
        return t

    def _offsets(self, shard: int, f: h5py.File) -> dict[int, int]:
        """The writer's ``/tensor_offsets`` index (absent: every read looks the dataset up)."""
        got = self._index.get(shard)
        if got is None:
            got = self._index[shard] = {}
            if "tensor_offsets" in f:  # an error (its checksum) reaches the caller
                rows = table(f["tensor_offsets"], self._paths[shard], self.identities[shard][2])
                if rows.ndim == 2 and rows.shape[1:] == (2,):
                    got.update((int(s), int(o)) for s, o in rows.tolist() if o > 0)
        return got

    def dataset_slice(
        self, shard: int, name: str, sdt: np.dtype, start: int, stop: int, nbytes: int, view: bool = False,
        checks: list[Callable[[], None]] | None = None,
    ) -> np.ndarray:
        """Elements [start, stop) of a tensor dataset holding ``nbytes`` (the record's count).
        A contiguous, unfiltered dataset (what the writer makes unless compression is on) is
        read at its file offset with ``os.preadv`` (``view``: the array may be read-only): no
        HDF5 overhead, the GIL released.

        ``checks``: the CRC-32 test of the bytes returned may be appended there instead of run
        before returning; the caller runs it before it uses anything computed from them (it
        raises ``ValueError`` as a failed read does). A caller that consumes the bytes right
        away (the analyzer's pair kernel) then reads them from memory once, and the checksum
        pass runs on the bytes the kernel just brought into the CPU cache."""
        t = self._tensor(shard, name, sdt)
        if t.nbytes != nbytes:
            raise ValueError(f"/tensors/{name} holds {t.nbytes} bytes, the record says {nbytes}")
        isz = sdt.itemsize
        b0, b1 = start * isz, stop * isz
        if not 0 <= b0 <= b1 <= t.nbytes:
            raise ValueError(f"elements {start}-{stop} are outside /tensors/{name}")
        if t.verified is None:
            return self._raw(shard, name, t, b0, b1, view).view(sdt)
        c = self.crcs(shard)
        assert c is not None
        c0, c1 = b0 // c.chunk, -(-b1 // c.chunk)
        if t.verified[c0:c1].all():
            return self._raw(shard, name, t, b0, b1, view).view(sdt)
        a0, a1 = c0 * c.chunk, min(c1 * c.chunk, t.nbytes)
        raw = self._raw(shard, name, t, a0, a1, view)
        if checks is None:
            self._verify(c, t.first, raw, a0, t.nbytes, t.verified, f"/tensors/{name}")
        else:
            checks.append(_Deferred(functools.partial(self._verify, c, t.first, raw, a0, t.nbytes, t.verified, f"/tensors/{name}")))
        return raw[b0 - a0 : b1 - a0].view(sdt)

    def _raw(self, shard: int, name: str, t: _Tensor, b0: int, b1: int, view: bool) -> np.ndarray:
        """Bytes [b0, b1) of a tensor dataset, as uint8."""
        f = self.file(shard)
        if t.offset is None:
            ds = hard_dataset(f["tensors"], name, self._paths[shard], self.identities[shard][2])
            isz = ds.dtype.itemsize
            return ds[b0 // isz : b1 // isz].view(_U8)
        try:
            fd = f.id.get_vfd_handle()  # the sec2 driver's file descriptor
        except (ValueError, TypeError, RuntimeError):
            t.offset = None
            return self._raw(shard, name, t, b0, b1, view)
        pos, n = t.offset + b0, b1 - b0
        if not view and n >= _OWN_READ:
            self._buffers.release_idle()
        out = self._buffers.take(n) if view else np.empty(n, dtype=_U8)
        buf = out.data.cast("B")
        done = 0
        while done < n:
            got = os.preadv(fd, [buf[done:]], pos + done)
            if got <= 0:  # the file ends inside the dataset: shrunk since it was opened, or damaged
                del buf
                self.raise_if_changed(shard, f"/tensors/{name}")
                raise OSError(f"file ends inside dataset /tensors/{name}")
            done += got
        del buf  # the buffer export: a read-only flag cannot be set while it lives
        return lend(out) if view else out

    # ------------------------------------------------------------------ blob
    def blob_bytes(self, shard: int, lo: int, hi: int) -> np.ndarray:
        """Bytes [lo, hi) of a shard's blob, through a small LRU cache of aligned pages."""
        f = self.file(shard)
        c = self.crcs(shard)
        if hi - lo > _PAGE // 2:
            return self._blob_exact(shard, f, c, lo, hi)
        p0, p1 = lo // _PAGE, (hi - 1) // _PAGE if hi > lo else lo // _PAGE
        parts = []
        for p in range(p0, p1 + 1):
            key = (shard, p)
            page = self._pages.get(key)
            if page is None:
                try:
                    page = f["blob"][p * _PAGE : (p + 1) * _PAGE]
                    if c is not None:
                        self._verify_blob(shard, c, page, p * _PAGE)
                except H5_ERRORS:  # a damaged chunk in the page: read only what is asked
                    return self._blob_exact(shard, f, c, lo, hi)
                self._pages[key] = page
                if len(self._pages) > _MAX_PAGES:
                    self._pages.popitem(last=False)
            else:
                self._pages.move_to_end(key)
            parts.append(page)
        base = p0 * _PAGE
        data = parts[0] if len(parts) == 1 else np.concatenate(parts)
        return data[lo - base : hi - base].copy()

    def _blob_exact(self, shard: int, f: h5py.File, c: _Crcs | None, lo: int, hi: int) -> np.ndarray:
        a0, a1 = (lo, hi) if c is None else (lo // c.chunk * c.chunk, -(-hi // c.chunk) * c.chunk)
        try:
            raw = f["blob"][a0:a1]
        except H5_ERRORS as exc:
            raise ValueError(f"/blob bytes {a0}-{a1 - 1} fail HDF5's Fletcher-32 or cannot be read ({short(exc)})") from None
        if c is None:
            return raw
        self._verify_blob(shard, c, raw, a0)
        return raw[lo - a0 : hi - a0].copy()

    def _verify_blob(self, shard: int, c: _Crcs, raw: np.ndarray, at: int) -> None:
        entry = c.entries.get(-1)
        if entry is None:
            raise ValueError("/blob has no checksum entry")
        nbytes, first, count = entry
        if len(raw) and at + len(raw) > nbytes:
            raise ValueError(f"/blob is longer than its checksums cover ({nbytes} bytes)")
        done = self._blob_ok.get(shard)
        if done is None:
            done = self._blob_ok[shard] = np.zeros(count, dtype=bool)
        self._verify(c, first, raw, at, nbytes, done, "/blob")

    def close(self) -> None:
        self._pages.clear()
        self._buffers.clear()
        for f in self._files.values():
            f.close()
        self._files.clear()


class _Deferred:
    """A deferred CRC-32 test that lets go of the bytes it tested once it ran: a caller that keeps
    the last test it called (a loop variable) does not keep the piece it read alive."""

    __slots__ = ("_check",)

    def __init__(self, check: Callable[[], None]) -> None:
        self._check: Callable[[], None] | None = check

    def __call__(self) -> None:
        check, self._check = self._check, None
        if check is not None:
            check()

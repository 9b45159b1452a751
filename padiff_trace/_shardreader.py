"""Reading tensor bytes from the shard files of one trace.

Shards are opened on demand (at most ``_MAX_OPEN`` at once). Small tensors come from
``/blob`` through an LRU cache of aligned pages; a contiguous tensor dataset is read at
the file offset the writer indexed in ``/tensor_offsets`` with ``os.preadv``, or mapped
read-only when the caller only looks at the data (the analyzer).
"""

from __future__ import annotations

import mmap
import os
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import h5py
import numpy as np

from ._open import open_shard

__all__ = ["ShardFiles"]

_MAX_OPEN = 32
_PAGE = 4 << 20  # blob bytes read and cached at a time
_MAX_PAGES = 64  # 256 MiB of cached blob pages at most
_MAP_MIN = 1 << 20  # reads of at least this many bytes map the file instead of copying it
_CAN_MAP = all(hasattr(mmap, n) for n in ("MAP_SHARED", "PROT_READ"))


class ShardFiles:
    """The open shard files of one trace and byte-level reads from them (the caller names errors)."""

    def __init__(self, paths: list[Path]) -> None:
        self._paths = paths
        self._files: OrderedDict[int, h5py.File] = OrderedDict()
        self._indexed: set[int] = set()  # shards whose /tensor_offsets were loaded
        self._offsets: dict[tuple[int, str], int | None] = {}  # (shard, dataset) -> file offset, None: via h5py
        self._pages: OrderedDict[tuple[int, int], np.ndarray] = OrderedDict()
        self._sizes: dict[int, int] = {}  # shard -> file size

    def file(self, i: int) -> h5py.File:
        """Shard ``i``, opened on first use; at most ``_MAX_OPEN`` stay open."""
        f = self._files.get(i)
        if f is not None:
            self._files.move_to_end(i)
            return f
        path = self._paths[i]
        f = open_shard(path)
        self._files[i] = f
        if len(self._files) > _MAX_OPEN:
            _, old = self._files.popitem(last=False)
            old.close()
        return f

    def dataset_slice(
        self,
        shard: int,
        name: str,
        sdt: np.dtype,
        start: int,
        stop: int,
        owners: Callable[[int], dict[int, int]],
        view: bool = False,
    ) -> np.ndarray:
        """Elements [start, stop) of a tensor dataset. A contiguous, unfiltered dataset (what the
        writer makes unless compression is on) is read at its file offset, with ``os.preadv``
        or mapped: no HDF5 overhead, and the GIL is released (the analyzer measures while it reads).
        ``owners(shard)``: {seq: bytes} of the shard's tensor datasets, to check the index.
        ``view``: a large read may return a read-only array mapped from the file."""
        f = self.file(shard)
        key = (shard, name)
        if shard not in self._indexed:
            self._load_offsets(shard, f, owners(shard))
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
        pos, nbytes = offset + start * sdt.itemsize, (stop - start) * sdt.itemsize
        if pos + nbytes > self._size(shard):
            raise OSError(f"file ends inside dataset /tensors/{name}")
        if view and nbytes >= _MAP_MIN and _CAN_MAP:
            return _mapped(fd, pos, nbytes, sdt)
        out = np.empty(stop - start, dtype=sdt)
        buf = out.data.cast("B")
        done = 0
        while done < len(buf):
            got = os.preadv(fd, [buf[done:]], pos + done)
            if got <= 0:
                raise OSError(f"file ends inside dataset /tensors/{name}")
            done += got
        return out

    def _load_offsets(self, shard: int, f: h5py.File, nbytes: dict[int, int]) -> None:
        """The writer's ``/tensor_offsets`` index (absent in older shards): where each contiguous
        tensor dataset's bytes start, so a read needs no HDF5 metadata lookup. Entries that
        would reach past the end of the file are ignored (the lookup then checks them)."""
        self._indexed.add(shard)
        if "tensor_offsets" not in f:
            return
        table = f["tensor_offsets"][...]
        if table.ndim != 2 or table.shape[1:] != (2,):
            return
        size = self._size(shard)
        for seq, off in table.tolist():
            nb = nbytes.get(seq)
            if nb is not None and 0 < off and off + nb <= size:
                self._offsets[(shard, str(seq))] = off

    def _size(self, shard: int) -> int:
        size = self._sizes.get(shard)
        if size is None:
            size = self._sizes[shard] = self._paths[shard].stat().st_size
        return size

    def blob_bytes(self, shard: int, lo: int, hi: int) -> np.ndarray:
        """Bytes [lo, hi) of a shard's blob, through a small LRU cache of aligned pages."""
        f = self.file(shard)
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

    def close(self) -> None:
        self._pages.clear()
        for f in self._files.values():
            f.close()
        self._files.clear()


def _mapped(fd: int, pos: int, nbytes: int, dtype: np.dtype) -> np.ndarray:
    """File bytes [pos, pos + nbytes) as a read-only array on the page cache's own pages: no
    copy (a compare reads and measures ~1.8x faster than with ``preadv``). Unmapped when the
    array is freed. The caller checked that the file is long enough (a mapping past its end
    would fault on access)."""
    lead = pos % mmap.ALLOCATIONGRANULARITY
    flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
    mm = mmap.mmap(fd, lead + nbytes, flags=flags, prot=mmap.PROT_READ, offset=pos - lead)
    return np.frombuffer(mm, dtype=dtype, count=nbytes // dtype.itemsize, offset=lead)

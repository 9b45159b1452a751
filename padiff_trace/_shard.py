"""One shard file of a trace: an HDF5 file written once, then renamed into place.

A shard is written under ``<name>.part`` and renamed to ``<name>`` only after
``h5py.File.close()`` returned; a reader never looks at ``.part`` files. So a
process killed at any moment leaves only complete shards behind.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from ._native import kernel
from ._schema import FORMAT_NAME, FORMAT_VERSION, RECORD_DTYPE, DataLoc

__all__ = ["ShardWriter", "shard_name", "BIG_TENSOR_BYTES"]

BIG_TENSOR_BYTES = 1 << 20  # tensors at least this large get a dataset of their own
_BLOB_CHUNK = 1 << 20  # /blob chunk (checksum unit)
_BLOB_FLUSH = 4 << 20  # pending small-tensor bytes that trigger a write to /blob
# RECORD_DTYPE with the statistics as separate fields: numpy builds it from flat tuples faster
_FLAT_ROW = np.dtype(
    [(n, RECORD_DTYPE.fields[n][0]) for n in RECORD_DTYPE.names if n != "stats"]
    + [(f"stat{i}", "<f8") for i in range(RECORD_DTYPE.fields["stats"][0].shape[0])]
)
assert _FLAT_ROW.itemsize == RECORD_DTYPE.itemsize and RECORD_DTYPE.names[-1] == "stats"


def shard_name(index: int) -> str:
    return f"shard-{index:06d}.h5"


class ShardWriter:
    """Accumulates records of one shard; small tensors are packed into one blob."""

    def __init__(self, directory: Path, index: int, meta_json: str, compression: str | None) -> None:
        self.index = index
        self.final_path = directory / shard_name(index)
        self.part_path = directory / (shard_name(index) + ".part")
        self._compression = compression
        self._file = h5py.File(self.part_path, "w")
        self._file.attrs["format"] = FORMAT_NAME
        self._file.attrs["format_version"] = FORMAT_VERSION
        self._file.attrs["meta"] = meta_json
        self._file.attrs["shard"] = index
        self._tensors = self._file.create_group("tensors")
        self.rows: list[tuple[Any, ...]] = []  # flat tuples in ``RECORD_DTYPE`` field order, the
        # statistics spread out as the last ``len(STAT_FIELDS)`` items
        self._strings: dict[str, int] = {}
        self.cache: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self._offsets: list[tuple[int, int]] = []  # (dataset name, file offset) of the pwritten tensors  # the writer's string ids per header/type
        self._pieces: list[np.ndarray] = []  # small tensors not yet in /blob
        self._pending = 0  # their bytes
        self._blob_len = 0
        self._blob: h5py.Dataset | None = None  # created once the pieces fill a few chunks
        self._fletcher = getattr(kernel(), "fletcher32", None)
        self.data_bytes = 0

    def intern(self, text: str) -> int:
        idx = self._strings.get(text)
        if idx is None:
            idx = self._strings[text] = len(self._strings)
        return idx

    @property
    def n_rows(self) -> int:
        return len(self.rows)

    def put_data(self, seq: int, stored: np.ndarray) -> tuple[DataLoc, int, int]:
        """Store a flat storage array; return (location, offset, nbytes)."""
        nbytes = stored.nbytes
        self.data_bytes += nbytes
        if nbytes >= BIG_TENSOR_BYTES:
            kwargs: dict[str, Any] = {}
            if self._compression:
                kwargs = {"compression": self._compression, "chunks": (max(1, BIG_TENSOR_BYTES // stored.itemsize),)}
                if self._compression == "gzip":
                    kwargs["compression_opts"] = 4
                kwargs["shuffle"] = True
            if kwargs:
                self._tensors.create_dataset(str(seq), data=stored.reshape(-1), **kwargs)
            else:
                self._put_contiguous(str(seq), stored.reshape(-1))
            return DataLoc.DATASET, seq, nbytes  # offset: the dataset's name (records may share it)
        offset = self._blob_len
        if nbytes:
            self._pieces.append(stored)  # the writer owns it: kept, not copied
            self._blob_len += nbytes
            self._pending += nbytes
            if self._pending >= _BLOB_FLUSH:
                self._flush_blob()
        return DataLoc.BLOB, offset, nbytes

    def _put_contiguous(self, name: str, flat: np.ndarray) -> None:
        """A contiguous dataset whose file space HDF5 allocates at creation (no fill); the bytes
        then go straight to that offset with ``os.pwrite``, which, unlike h5py's write,
        releases the GIL: the writer's statistics thread and the model run meanwhile."""
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.CONTIGUOUS)
        dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
        dcpl.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
        space = h5py.h5s.create_simple((flat.size,))
        dsid = h5py.h5d.create(self._tensors.id, name.encode(), h5py.h5t.py_create(flat.dtype), space, dcpl=dcpl)
        offset = dsid.get_offset()
        if offset is None:  # not allocated after all (should not happen): let HDF5 write it
            dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(flat))
            return
        self._offsets.append((int(name), offset))
        try:
            fd = self._file.id.get_vfd_handle()  # the sec2 driver's file descriptor
        except (ValueError, TypeError, RuntimeError):  # another HDF5 driver: let HDF5 write it
            dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(flat))
            return
        view = memoryview(np.ascontiguousarray(flat)).cast("B")
        done = 0
        while done < len(view):
            done += os.pwrite(fd, view[done:], offset + done)

    def _blob_kwargs(self, size: int) -> dict[str, Any]:
        # checksummed: a flipped byte in small-tensor data is detected on read
        kwargs: dict[str, Any] = {"chunks": (min(size, _BLOB_CHUNK),), "fletcher32": True}
        if self._compression:
            kwargs.update(compression=self._compression, shuffle=True)
        return kwargs

    def _flush_blob(self, final: bool = False) -> None:
        """Append the pending pieces to /blob: whole chunks only, unless ``final``."""
        data = np.frombuffer(b"".join(self._pieces), dtype=np.uint8)  # contiguous arrays are bytes-like
        n = data.size if final else data.size - data.size % _BLOB_CHUNK
        if self._blob is None:
            if final:  # everything fits in one write: a dataset of the exact size
                self._blob = self._file.create_dataset("blob", data=data, **self._blob_kwargs(data.size))
                self._pieces, self._pending = [], 0
                return
            self._blob = self._file.create_dataset(
                "blob", shape=(0,), maxshape=(None,), dtype=np.uint8, **self._blob_kwargs(_BLOB_CHUNK)
            )
        start = self._blob.shape[0]
        if n:
            self._blob.resize((start + n,))
            whole = n - n % _BLOB_CHUNK if self._fletcher is not None and not self._compression else 0
            for lo in range(0, whole, _BLOB_CHUNK):
                # a finished chunk: the bytes plus their Fletcher-32, exactly what HDF5's filter
                # would store (read back and verified by HDF5 as usual), ~3x faster than its write
                chunk = data[lo : lo + _BLOB_CHUNK]
                stored = b"".join((chunk, self._fletcher(chunk).to_bytes(4, "little")))
                self._blob.id.write_direct_chunk((start + lo,), stored, 0)
            if whole < n:
                self._blob[start + whole : start + n] = data[whole:n]
        rest = data[n:]
        self._pieces, self._pending = ([rest] if rest.size else []), rest.size

    @property
    def blob_bytes(self) -> int:
        return self._blob_len

    def close(self, final: bool, summary: dict[str, Any] | None = None) -> Path:
        f = self._file
        rows = np.array(self.rows, dtype=_FLAT_ROW).view(RECORD_DTYPE) if self.rows else np.zeros(0, RECORD_DTYPE)
        f.create_dataset("records", data=rows, chunks=True, maxshape=(None,), fletcher32=True)
        strings = np.array(list(self._strings), dtype=object)
        f.create_dataset("strings", data=strings, dtype=h5py.string_dtype("utf-8"))
        if self._blob is None and not self._pieces:
            f.create_dataset("blob", data=np.zeros(0, np.uint8))
        else:
            self._flush_blob(final=True)
        if self._offsets:  # an index for readers: contiguous tensor data without an HDF5 lookup each
            f.create_dataset("tensor_offsets", data=np.array(self._offsets, dtype=np.int64))
        f.attrs["final"] = bool(final)
        if self.n_rows:
            f.attrs["first_seq"] = int(rows["seq"][0])
            f.attrs["last_seq"] = int(rows["seq"][-1])
        if summary is not None:
            f.attrs["summary"] = json.dumps(summary)
        f.close()
        os.replace(self.part_path, self.final_path)
        return self.final_path

    def abort(self) -> None:
        """After a write error: close and delete the unfinished ``.part`` (frees space on a full disk)."""
        try:
            self._file.close()
        except Exception:  # noqa: BLE001 - best effort while already failing
            pass
        try:
            self.part_path.unlink()
        except OSError:
            pass

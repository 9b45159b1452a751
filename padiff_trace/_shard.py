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

from ._schema import FORMAT_NAME, FORMAT_VERSION, RECORD_DTYPE, DataLoc

__all__ = ["ShardWriter", "shard_name", "BIG_TENSOR_BYTES"]

BIG_TENSOR_BYTES = 1 << 20  # tensors at least this large get a dataset of their own


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
        self._rows: list[tuple[Any, ...]] = []
        self._strings: dict[str, int] = {}
        self._blob = bytearray()
        self.data_bytes = 0

    def intern(self, text: str) -> int:
        idx = self._strings.get(text)
        if idx is None:
            idx = self._strings[text] = len(self._strings)
        return idx

    @property
    def n_rows(self) -> int:
        return len(self._rows)

    def add_row(self, row: tuple[Any, ...]) -> None:
        """Append one record, a tuple in ``RECORD_DTYPE`` field order."""
        self._rows.append(row)

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
        offset = len(self._blob)
        if nbytes:
            self._blob += memoryview(stored.reshape(-1)).cast("B")
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
        fd = self._file.id.get_vfd_handle()
        view = memoryview(np.ascontiguousarray(flat)).cast("B")
        done = 0
        while done < len(view):
            done += os.pwrite(fd, view[done:], offset + done)

    @property
    def blob_bytes(self) -> int:
        return len(self._blob)

    def close(self, final: bool, summary: dict[str, Any] | None = None) -> Path:
        f = self._file
        rows = np.array(self._rows, dtype=RECORD_DTYPE) if self._rows else np.zeros(0, RECORD_DTYPE)
        f.create_dataset("records", data=rows, chunks=True, maxshape=(None,), fletcher32=True)
        strings = np.array(list(self._strings), dtype=object)
        f.create_dataset("strings", data=strings, dtype=h5py.string_dtype("utf-8"))
        blob = np.frombuffer(self._blob, dtype=np.uint8)
        kwargs: dict[str, Any] = {}
        if blob.size:  # checksummed: a flipped byte in small-tensor data is detected on read
            kwargs = {"chunks": (min(blob.size, 1 << 20),), "fletcher32": True}
            if self._compression:
                kwargs.update(compression=self._compression, shuffle=True)
        f.create_dataset("blob", data=blob, **kwargs)
        f.attrs["final"] = bool(final)
        if self.n_rows:
            f.attrs["first_seq"] = int(rows["seq"][0])
            f.attrs["last_seq"] = int(rows["seq"][-1])
        if summary is not None:
            f.attrs["summary"] = json.dumps(summary)
        f.close()
        self._blob = bytearray()
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

"""One shard file of a trace: an HDF5 file written once, then renamed into place.

A shard is written under ``<name>.part`` and renamed to ``<name>`` only after
``h5py.File.close()`` returned; a reader never looks at ``.part`` files. So a
process killed at any moment leaves only complete shards behind.

Every byte that can change a number or a name is checksummed (format 1.1): tensor data by
CRC-32 per ``CRC_CHUNK`` (``/crc32`` and ``/crc32_index``, computed right after each piece is
written, while it is in cache), ``/records`` per chunk, ``/strings`` as a whole, the root
attributes; HDF5's Fletcher-32 filter guards the chunked datasets as well.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
import struct
import tempfile
import weakref
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from ..arrays._native import kernel
from ._header import HeaderIds
from ._integrity import attrs_crc, crc32, crc_chunks, escape_strings
from ._schema import CRC_ALGORITHM, CRC_CHUNK, FORMAT_MINOR, FORMAT_NAME, FORMAT_VERSION, RECORD_DTYPE, DataLoc

__all__ = ["ROW", "ShardWriter", "shard_name", "BIG_TENSOR_BYTES"]

logger = logging.getLogger(__name__)

BIG_TENSOR_BYTES = 1 << 20  # tensors at least this large get a dataset of their own
_BLOB_CHUNK = CRC_CHUNK  # /blob chunk (checksum unit of HDF5's filter and of the CRC-32)
_RECORD_CHUNK = 4096  # rows per /records chunk (and per CRC-32 of the rows)
_MAX_RECORD_CRCS = 8192  # the /records crc32 attribute stays small (object header space)
# one RECORD_DTYPE row, the statistics spread out: packing a row costs ~0.6 us, a third of
# what numpy needs to build a structured array from a list of tuples
ROW = struct.Struct("<qiBBBqqiiiiiiiiqqq" + "d" * RECORD_DTYPE["stats"].shape[0])
assert ROW.size == RECORD_DTYPE.itemsize and (RECORD_DTYPE.names or ())[-1] == "stats"


def shard_name(index: int) -> str:
    return f"shard-{index:06d}.h5"


def _stored(value: Any) -> Any:
    """An attribute value as the shard stores it: text as a fixed-length UTF-8 string (format
    1.2; h5py would store a ``str`` as a variable-length string in a global heap collection,
    which HDF5 parses unchecked: a damaged one can make a reader loop forever)."""
    return np.bytes_(value.encode("utf-8")) if isinstance(value, str) else value


class ShardWriter:
    """Accumulates records of one shard; small tensors are packed into one blob."""

    def __init__(self, directory: Path, index: int, meta_json: str, compression: str | None, recording: str) -> None:
        self.index = index
        self.final_path = directory / shard_name(index)
        self.part_path = directory / (shard_name(index) + ".part")
        self._compression = compression
        self._protected: dict[str, Any] = {
            "format": FORMAT_NAME, "format_version": FORMAT_VERSION, "format_minor": FORMAT_MINOR,
            "recording": recording, "meta": meta_json, "shard": index,
        }
        self.rows = bytearray()  # packed ``ROW``s, in ``RECORD_DTYPE`` layout
        self._strings: dict[str, int] = {}
        self.header_ids: dict[tuple[str, str, str, str, int], HeaderIds] = {}  # the encoder's, per header
        self.type_ids: dict[tuple[str, tuple[int, ...]], tuple[int, int]] = {}  # (dtype, shape) string ids
        self._offsets: list[tuple[int, int]] = []  # (dataset name, file offset) of the pwritten tensors
        # small tensors are copied into the /blob chunk being filled; room for its checksum at the end
        self._chunk = bytearray(_BLOB_CHUNK + 4)
        self._chunk_view = memoryview(self._chunk)
        self._fill = 0  # bytes in the chunk
        self._blob_len = 0
        self._blob: h5py.Dataset | None = None  # created once the first chunk is full
        self._fletcher = getattr(kernel(), "fletcher32", None)
        self._blob_crcs: list[int] = []  # CRC-32 of each /blob chunk
        self._crcs: list[int] = []  # CRC-32 of the /tensors data, per CRC_CHUNK
        self._crc_rows: list[tuple[int, int, int, int]] = []  # (dataset name or -1: blob, nbytes, first, count)
        self.data_bytes = 0
        # HDF5 1.10 structures: object headers, B-trees and the superblock carry checksums, so
        # damaged file metadata raises instead of being followed (readable by HDF5 >= 1.10)
        self._file: Any = None  # h5py.File; None once closed or aborted
        self._tensors: Any = None  # its /tensors group
        self._ids: list[weakref.ref[Any]] = []  # every HDF5 object this shard made, for _leak
        try:
            self._file = self._keep(h5py.File(self.part_path, "w", libver=("v110", "v110")))
            for key in ("format", "format_version", "meta", "format_minor", "recording", "shard"):
                self._file.attrs[key] = _stored(self._protected[key])
            self._tensors = self._keep(self._file.create_group("tensors"))
        except BaseException:
            self.abort()
            raise

    def _keep(self, obj: Any) -> Any:
        """``obj`` (an h5py object, or a low-level id), its id remembered weakly for ``_leak``."""
        self._ids.append(weakref.ref(obj if isinstance(obj, h5py._objects.ObjectID) else obj.id))
        return obj

    def intern(self, text: str) -> int:
        idx = self._strings.get(text)
        if idx is None:
            idx = self._strings[text] = len(self._strings)
        return idx

    @property
    def n_rows(self) -> int:
        return len(self.rows) // ROW.size

    def table(self) -> np.ndarray:
        """The rows so far as a ``RECORD_DTYPE`` array (a view of ``rows``)."""
        return np.frombuffer(self.rows, dtype=RECORD_DTYPE)

    def tally(self) -> tuple[dict[int, int], set[int]]:
        """Records per kind and the steps seen, for the trace summary."""
        table = self.table()
        counts = np.bincount(table["kind"])
        return {k: int(n) for k, n in enumerate(counts) if n}, set(np.unique(table["step"]).tolist())

    def put_data(self, seq: int, stored: np.ndarray, crc: bool = True) -> tuple[DataLoc, int, int]:
        """Store a flat storage array; return (location, offset, nbytes). ``crc=False``: the
        caller computes a large tensor's checksums (beside the write) and hands them to
        ``add_crcs``."""
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
                flat = np.ascontiguousarray(stored.reshape(-1))
                ds = self._keep(self._tensors.create_dataset(str(seq), data=flat, fletcher32=True, **kwargs))
                ds.flush()  # its compressed chunks written now: a full disk raises here, not in a close (abort())
                self._add_crcs(seq, flat)
            else:
                self._put_contiguous(str(seq), stored.reshape(-1), crc)
            return DataLoc.DATASET, seq, nbytes  # offset: the dataset's name (records may share it)
        offset = self._blob_len
        if nbytes:
            self._blob_len = offset + nbytes
            fill = self._fill
            if fill + nbytes < _BLOB_CHUNK:  # the usual case: the bytes fit in the open chunk
                self._chunk_view[fill : fill + nbytes] = stored.data.cast("B")
                self._fill = fill + nbytes
            else:
                self._spill(stored.data.cast("B"))
        return DataLoc.BLOB, offset, nbytes

    def _spill(self, src: memoryview) -> None:
        """Copy ``src`` into the open chunk, writing each chunk it fills."""
        done = 0
        while done < len(src):
            take = min(len(src) - done, _BLOB_CHUNK - self._fill)
            self._chunk_view[self._fill : self._fill + take] = src[done : done + take]
            self._fill += take
            done += take
            if self._fill == _BLOB_CHUNK:
                self._write_chunk()

    def _put_contiguous(self, name: str, flat: np.ndarray, crc: bool) -> None:
        """A contiguous dataset whose file space HDF5 allocates at creation (no fill); the bytes
        then go straight to that offset with ``os.pwrite``, which, unlike h5py's write,
        releases the GIL: the writer's statistics thread and the model run meanwhile."""
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.CONTIGUOUS)
        dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
        dcpl.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
        space = h5py.h5s.create_simple((flat.size,))
        dsid = self._keep(h5py.h5d.create(self._tensors.id, name.encode(), h5py.h5t.py_create(flat.dtype), space, dcpl=dcpl))
        offset = dsid.get_offset()
        flat = np.ascontiguousarray(flat)
        if offset is None:  # not allocated after all (should not happen): let HDF5 write it
            dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, flat)
            if crc:
                self._add_crcs(int(name), flat)
            return
        try:
            fd = self._file.id.get_vfd_handle()  # the sec2 driver's file descriptor
        except (ValueError, TypeError, RuntimeError):  # another HDF5 driver: let HDF5 write it
            dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, flat)
            if crc:
                self._add_crcs(int(name), flat)
            return
        self._offsets.append((int(name), offset))
        view = flat.data.cast("B")
        done = 0
        while done < len(view):
            done += os.pwrite(fd, view[done:], offset + done)
        if crc:
            self._add_crcs(int(name), flat)

    def _add_crcs(self, name: int, flat: np.ndarray) -> None:
        self.add_crcs(name, flat.nbytes, crc_chunks(flat.data))

    def add_crcs(self, name: int, nbytes: int, crcs: list[int]) -> None:
        """The CRC-32 of each ``CRC_CHUNK`` of the data of ``/tensors/<name>``."""
        first = len(self._crcs)
        self._crcs.extend(crcs)
        self._crc_rows.append((name, nbytes, first, len(crcs)))

    def _blob_kwargs(self, size: int) -> dict[str, Any]:
        # checksummed: a flipped byte in small-tensor data is detected on read
        kwargs: dict[str, Any] = {"chunks": (min(size, _BLOB_CHUNK),), "fletcher32": True}
        if self._compression:
            kwargs.update(compression=self._compression, shuffle=True)
        return kwargs

    def _write_chunk(self) -> None:
        """Append the full open chunk to /blob."""
        if self._blob is None:
            self._blob = self._keep(self._file.create_dataset(
                "blob", shape=(0,), maxshape=(None,), dtype=np.uint8, **self._blob_kwargs(_BLOB_CHUNK)
            ))
        start = self._blob.shape[0]
        self._blob.resize((start + _BLOB_CHUNK,))
        if self._fletcher is not None and not self._compression:
            # the bytes plus their Fletcher-32: exactly what HDF5's filter would store (read back
            # and verified by HDF5 as usual), ~3x faster than its own write
            body = self._chunk_view[:_BLOB_CHUNK]
            self._chunk[_BLOB_CHUNK:] = self._fletcher(body).to_bytes(4, "little")
            self._blob.id.write_direct_chunk((start,), self._chunk, 0)
        else:
            self._blob[start:] = np.frombuffer(self._chunk, dtype=np.uint8, count=_BLOB_CHUNK)
        self._blob_crcs.append(crc32(self._chunk_view[:_BLOB_CHUNK]))
        self._fill = 0

    def _finish_blob(self) -> None:
        """Write the partly filled last chunk (or the whole blob, when it never filled one)."""
        rest = np.frombuffer(self._chunk, dtype=np.uint8, count=self._fill)
        if rest.size:
            self._blob_crcs.append(crc32(rest.data))
        if self._blob is None and not rest.size:
            self._blob = self._keep(self._file.create_dataset("blob", data=rest))
        elif self._blob is None:  # one dataset of the exact size
            self._blob = self._keep(self._file.create_dataset("blob", data=rest, **self._blob_kwargs(rest.size)))
        elif rest.size:
            start = self._blob.shape[0]
            self._blob.resize((start + rest.size,))
            self._blob[start:] = rest
        self._fill = 0

    @property
    def blob_bytes(self) -> int:
        return self._blob_len

    def close(self, final: bool, summary: dict[str, Any] | None = None) -> Path:
        f = self._file
        # the datasets made here stay referenced until the flush below: one dropped earlier would
        # be closed by h5py, writing its cached chunks where a full disk fails unseen (abort())
        made: list[h5py.Dataset] = []
        rows = self.table()
        per = max(min(_RECORD_CHUNK, len(rows)), -(-len(rows) // _MAX_RECORD_CRCS), 1)  # chunks are allocated whole
        made.append(self._keep(f.create_dataset("records", data=rows, chunks=(per,), maxshape=(None,), fletcher32=True)))
        if len(rows):
            made[-1].attrs["crc32"] = np.array(crc_chunks(self.rows, per * ROW.size), dtype=np.uint32)
        # names with NUL or lone surrogates are stored escaped (never lost); the table is checksummed
        stored, joined, crc = escape_strings(list(self._strings))
        made.append(self._keep(f.create_dataset("strings", data=np.array(stored, dtype=object), dtype=h5py.string_dtype("utf-8"))))
        # the same table as plain bytes: a reader never follows HDF5's heap of variable-length
        # strings (which has no checksum; a damaged one can crash HDF5)
        made.append(self._keep(f.create_dataset(
            "string_bytes", data=np.frombuffer(joined, dtype=np.uint8), chunks=(max(1, min(len(joined), 1 << 20)),),
            maxshape=(None,), fletcher32=True,
        )))
        made[-1].attrs["count"] = len(stored)
        made[-1].attrs["crc32"] = np.uint32(crc)
        self._finish_blob()
        first = len(self._crcs)
        self._crcs.extend(self._blob_crcs)
        self._crc_rows.append((-1, self._blob_len, first, len(self._blob_crcs)))
        made.append(self._keep(f.create_dataset(
            "crc32", data=np.array(self._crcs, dtype=np.uint32), chunks=(max(1, min(4096, len(self._crcs))),),
            maxshape=(None,), fletcher32=True,
        )))
        made[-1].attrs["chunk_bytes"] = CRC_CHUNK
        made[-1].attrs["algorithm"] = _stored(CRC_ALGORITHM)
        made.append(self._keep(f.create_dataset(
            "crc32_index", data=np.array(self._crc_rows, dtype=np.int64).reshape(-1, 4),
            chunks=(max(1, min(1024, len(self._crc_rows))), 4),
            maxshape=(None, 4), fletcher32=True,
        )))
        if self._offsets:  # an index for readers: contiguous tensor data without an HDF5 lookup each
            made.append(self._keep(f.create_dataset(
                "tensor_offsets", data=np.array(self._offsets, dtype=np.int64), chunks=(min(len(self._offsets), 4096), 2),
                maxshape=(None, 2), fletcher32=True,
            )))
        prot = self._protected
        prot["final"] = f.attrs["final"] = bool(final)
        if self.n_rows:
            prot["first_seq"] = f.attrs["first_seq"] = int(rows["seq"][0])
            prot["last_seq"] = f.attrs["last_seq"] = int(rows["seq"][-1])
        if summary is not None:
            prot["summary"] = json.dumps(summary)
            f.attrs["summary"] = _stored(prot["summary"])
        f.attrs["attrs_crc32"] = np.uint32(attrs_crc(prot))
        # everything the close has to write is written here: a failure (a full disk) raises
        # before any object is closed, and abort() can still close them all (see there)
        f.flush()
        self._file = self._blob = self._tensors = None
        try:
            f.close()
        except Exception:  # after a successful flush, unexpected: never close these objects again
            _leak(f, self._ids)
            raise
        os.replace(self.part_path, self.final_path)
        return self.final_path

    def abort(self) -> None:
        """After a write error: close every HDF5 object of the unfinished shard and delete its
        ``.part`` (which frees its space on a full disk). Never raises.

        HDF5 (2.0, under h5py 3.16) leaves a dataset whose close failed half-closed, and closing
        it again - the garbage collector does, at the latest when the process exits - crashes
        the process (SIGSEGV in ``H5D_close``). So nothing is closed while writing can fail:
        ``close()`` flushes first, and here HDF5's file descriptor is first pointed at a file
        where writing cannot fail (``_spare_writes``); then one ``File.close()`` closes the
        datasets and the group (also those still referenced elsewhere, e.g. by the failed call's
        traceback), then the file; then this writer's references are dropped. An object that
        still fails to close is never closed again by h5py (``_leak``; HDF5's own exit handler
        would still try - not seen in tests, where the spared writes always let it close)."""
        f = self._file
        if f is not None:  # writes are spared before any reference is dropped (a dropped dataset closes)
            try:
                if f.id.valid:
                    _spare_writes(f, self.part_path)
                    try:  # writes spared, this flush succeeds - or, after a flush that failed, it
                        f.flush()  # fails once, resetting HDF5's cache ("slist already enabled?"),
                    except Exception:  # without which the file could never be closed
                        pass
                    f.close()
            except Exception as exc:  # HDF5 refused: keep the process alive
                logger.warning("%s: HDF5 could not close the unfinished shard (%s); its objects are left open",
                               self.part_path, str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__)
                _leak(f, self._ids)
        self._file = self._blob = self._tensors = None
        with contextlib.suppress(OSError):
            self.part_path.unlink()


def _spare_writes(f: h5py.File, part: Path) -> None:
    """Let what HDF5 still writes when it closes ``f`` (metadata, cached chunks) succeed although
    the disk is full: its descriptor is pointed at a scratch file elsewhere (``_scratch_fd``;
    the ``.part`` is deleted anyway, and HDF5 does not read back while closing). If no scratch
    file can be had, the ``.part`` is truncated, which at least gives its space back."""
    try:
        fd = f.id.get_vfd_handle()  # the sec2 driver's descriptor
    except (ValueError, TypeError, RuntimeError):
        fd = None
    try:
        if isinstance(fd, int):
            scratch = _scratch_fd()
            try:
                os.dup2(scratch, fd, inheritable=False)
            finally:
                os.close(scratch)
            return
    except OSError as exc:
        logger.debug("%s: no scratch file for the close's writes: %s", part, exc)
    try:
        os.truncate(part, 0)
    except OSError as exc:
        logger.debug("%s: could not truncate: %s", part, exc)


def _scratch_fd() -> int:
    """A descriptor of an anonymous file for HDF5's last writes: in memory (Linux), else an
    unlinked temporary file in the system's temporary directory."""
    with contextlib.suppress(AttributeError, OSError):
        return os.memfd_create("padiff-trace-abort", os.MFD_CLOEXEC)
    with tempfile.TemporaryFile(prefix="padiff-trace-abort-") as tmp:
        return os.dup(tmp.fileno())


def _leak(f: h5py.File, made: list[weakref.ref[Any]]) -> None:
    """Mark the h5py objects of ``f`` as never to be closed (h5py's ``locked``): deallocating one
    would close a half-closed HDF5 object again. ``made``: the ids the shard created (a
    half-closed dataset is no longer listed by HDF5 among the file's objects); other wrappers of
    the file's open objects are found through the garbage collector. Runs only after HDF5
    refused to close a file although its writes were spared: a last resort."""
    ids = [f.id, *(x for x in (r() for r in made) if x is not None)]
    try:
        ids += h5py.h5f.get_obj_ids(f.id, h5py.h5f.OBJ_ALL | h5py.h5f.OBJ_LOCAL)
    except Exception:
        pass
    numbers = {oid.id for oid in ids}
    ids += [obj for obj in gc.get_objects() if isinstance(obj, h5py._objects.ObjectID) and obj.id in numbers]
    for oid in ids:
        oid.locked = True

"""The faults of ``fault_inject.py``: each is (description, apply to a copy of the trace).

Byte and bit flips across whole shards (every object's bytes, text found in the file, evenly
spread offsets, HDF5's own metadata), truncations, crafted rows and tables written through
h5py (with and without recomputed checksums), foreign and misnamed shard files.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from padiff_trace.trace._integrity import crc_chunks, strings_crc

__all__ = ["Fault", "crafted_faults", "file_faults", "flip_faults", "truncation_faults"]

Fault = tuple[str, Callable[[Path], None]]  # (description, apply to a copy of the trace)


def _flip(path: Path, offset: int, mask: int) -> None:
    with open(path, "r+b") as fh:
        fh.seek(offset)
        b = fh.read(1)
        if not b:
            return
        fh.seek(offset)
        fh.write(bytes([b[0] ^ mask]))


def _regions(shard: Path) -> dict[str, list[tuple[int, int]]]:
    """(offset, size) of the byte ranges of each object in a shard."""
    out: dict[str, list[tuple[int, int]]] = {}
    with h5py.File(shard, "r") as f:
        def visit(name: str, obj: Any) -> None:
            if not isinstance(obj, h5py.Dataset):
                return
            dsid = obj.id
            if obj.chunks:
                n = dsid.get_num_chunks()
                out[name] = [(int(ci.byte_offset), int(ci.size)) for ci in (dsid.get_chunk_info(i) for i in range(n))]
            elif dsid.get_offset() is not None:
                out[name] = [(int(dsid.get_offset()), int(dsid.get_storage_size()))]
        f.visititems(visit)
        needles = [s for s in f["strings"][...] if len(s) >= 3] + [b'"framework"', b'"records"']
        if "recording" in f.attrs:
            needles.append(str(f.attrs["recording"]).encode())
    raw = shard.read_bytes()
    for needle in needles:
        at = raw.find(needle)
        if at >= 0:
            out.setdefault("text", []).append((at, len(needle)))
    return out


def flip_faults(trace: Path, per_region: int, spread: int, rng: np.random.Generator) -> Iterator[Fault]:
    for shard in sorted(trace.glob("shard-*.h5")):
        size = shard.stat().st_size
        offsets: list[tuple[str, int]] = []
        regions = _regions(shard)
        for name, ranges in regions.items():
            for off, n in ranges:
                picks = {off, off + n // 2, off + n - 1} | {int(off + x) for x in rng.integers(0, max(n, 1), per_region)}
                offsets += [(name, p) for p in sorted(picks)[: per_region + 3]]
        offsets += [("anywhere", int(x)) for x in np.linspace(0, size - 1, spread).astype(int)]
        meta = _metadata_bytes(shard, regions, size)  # HDF5's own structures: headers, B-trees, heaps
        offsets += [("hdf5 metadata", int(x)) for x in meta[np.linspace(0, len(meta) - 1, min(spread, len(meta))).astype(int)]]
        for where, off in offsets:
            for mask in (1 << int(rng.integers(0, 8)), 0xFF):
                yield (f"{shard.name} {where} byte {off} ^0x{mask:02x}", lambda t, s=shard.name, o=off, m=mask: _flip(t / s, o, m))


def _metadata_bytes(shard: Path, regions: dict[str, list[tuple[int, int]]], size: int) -> np.ndarray:
    """File offsets outside every dataset's data: superblock, object headers, B-trees, heaps."""
    covered = np.zeros(size, dtype=bool)
    for name, ranges in regions.items():
        if name != "text":
            for off, n in ranges:
                covered[off : off + n] = True
    return np.flatnonzero(~covered)


def truncation_faults(trace: Path, n: int) -> Iterator[Fault]:
    for shard in sorted(trace.glob("shard-*.h5")):
        size = shard.stat().st_size
        for cut in sorted({0, 1, 8, 512, size - 1} | set(np.linspace(0, size - 1, n).astype(int).tolist())):
            def apply(t: Path, s: str = shard.name, c: int = cut) -> None:
                with open(t / s, "r+b") as fh:
                    fh.truncate(c)
            yield (f"{shard.name} truncated to {cut} of {size} bytes", apply)


def _rewrite_rows(shard: Path, change: Callable[[np.ndarray], None], fix_crc: bool) -> None:
    with h5py.File(shard, "r+") as f:
        ds = f["records"]
        rows = ds[...]
        change(rows)
        ds[...] = rows  # HDF5 recomputes its Fletcher-32
        if fix_crc:  # as a buggy writer would: every checksum consistent with the bad row
            ds.attrs["crc32"] = np.array(crc_chunks(rows.tobytes(), ds.chunks[0] * rows.dtype.itemsize), dtype=np.uint32)


def _rewrite_strings(shard: Path, change: Callable[[list[bytes]], list[bytes]], fix_crc: bool) -> None:
    """Rewrite both forms of the string table (``/strings``, ``/string_bytes``)."""
    with h5py.File(shard, "r+") as f:
        new = change(list(f["strings"][...]))
        attrs = dict(f["string_bytes"].attrs)
        del f["strings"], f["string_bytes"]
        f.create_dataset("strings", data=np.array([b.decode() for b in new], dtype=object), dtype=h5py.string_dtype())
        ds = f.create_dataset("string_bytes", data=np.frombuffer(b"\x00".join(new), dtype=np.uint8))
        ds.attrs.update(attrs)
        if fix_crc:
            ds.attrs["crc32"] = np.uint32(strings_crc(new))


def _set(col: str, value: Any, where: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], None]:
    def change(rows: np.ndarray) -> None:
        sel = np.flatnonzero(where(rows))[:1]
        rows[col][sel] = value if not callable(value) else value(rows[sel])
    return change


def crafted_faults(trace: Path) -> Iterator[Fault]:
    s1 = "shard-000001.h5"

    def blob(r: np.ndarray) -> np.ndarray:
        return r["data_loc"] == 1

    def dset(r: np.ndarray) -> np.ndarray:
        return r["data_loc"] == 2

    def anyr(r: np.ndarray) -> np.ndarray:
        return np.ones(len(r), dtype=bool)

    crafts: list[tuple[str, Callable[[np.ndarray], None]]] = [
        ("negative offset", _set("offset", -8, blob)),
        ("numel beyond its bytes", _set("numel", lambda r: r["numel"] * 4, blob)),
        ("numel and nbytes beyond the blob", lambda r: (_set("numel", 1 << 40, blob)(r), _set("nbytes", 4 << 40, blob)(r))),
        ("offset past the blob", _set("offset", 1 << 30, blob)),
        ("nbytes mismatch", _set("nbytes", lambda r: r["nbytes"] + 4, blob)),
        ("unknown kind (a newer writer's)", _set("kind", 200, anyr)),
        ("unknown phase", _set("phase", 9, anyr)),
        ("unknown data location", _set("data_loc", 7, blob)),
        ("string id out of range", _set("module", 10_000, anyr)),
        ("negative string id", _set("shape", -1, anyr)),
        ("dataset that does not exist", _set("offset", lambda r: r["seq"] - 1, dset)),
        ("negative dataset name", _set("offset", -5, dset)),
        ("dtype id pointing at a non-dtype string", _set("dtype", 0, blob)),
        ("duplicate seq", _set("seq", lambda r: r["seq"] + 1, anyr)),
    ]
    for name, change in crafts:
        for fix in (False, True):
            yield (f"{s1} crafted row: {name}{' (checksums recomputed)' if fix else ''}",
                   lambda t, c=change, x=fix: _rewrite_rows(t / s1, c, x))

    def rename(raw: list[bytes]) -> list[bytes]:
        return [b.replace(b"layers.3", b"layers.2") for b in raw]

    def reshape(raw: list[bytes]) -> list[bytes]:
        return [b.replace(b"[4, 2048]", b"[5, 2048]") for b in raw]

    def redtype(raw: list[bytes]) -> list[bytes]:
        return [b"float33" if b == b"float32" else b for b in raw]

    yield (f"{s1} /strings renamed layers.3 -> layers.2", lambda t: _rewrite_strings(t / s1, rename, False))
    yield (f"{s1} /strings shape [4, 2048] -> [5, 2048]", lambda t: _rewrite_strings(t / s1, reshape, False))
    yield (f"{s1} /strings shape changed (checksum recomputed)", lambda t: _rewrite_strings(t / s1, reshape, True))
    yield (f"{s1} /strings dtype float33 (checksum recomputed)", lambda t: _rewrite_strings(t / s1, redtype, True))

    def shift_offsets(t: Path, delta: int) -> None:
        for shard in sorted(t.glob("shard-*.h5")):
            with h5py.File(shard, "r+") as f:
                if "tensor_offsets" in f:
                    table = f["tensor_offsets"][...]
                    table[:, 1] += delta
                    f["tensor_offsets"][...] = table

    for delta in (4, -4, 1 << 20, -(1 << 40)):
        yield (f"/tensor_offsets shifted by {delta}", lambda t, d=delta: shift_offsets(t, d))

    def attr(name: str, value: Any) -> Callable[[Path], None]:
        def apply(t: Path) -> None:
            with h5py.File(t / s1, "r+") as f:
                f.attrs[name] = value
        return apply

    yield (f"{s1} meta attribute not JSON", attr("meta", "{not json"))
    yield (f"{s1} meta attribute a JSON list", attr("meta", "[1, 2]"))
    yield (f"{s1} format_version a string", attr("format_version", "one"))
    yield (f"{s1} format_minor removed-like (0)", attr("format_minor", 0))
    yield (f"{s1} final flag set", attr("final", True))
    yield (f"{s1} recording id changed", attr("recording", "0" * 32))


def file_faults(trace: Path, other: Path) -> Iterator[Fault]:
    def copy_as(src: Path, name: str) -> Callable[[Path], None]:
        return lambda t: shutil.copyfile(src, t / name)

    yield ("backup-shard-000001.h5 beside the shards", copy_as(trace / "shard-000001.h5", "backup-shard-000001.h5"))
    yield ("shard-1.h5 beside the shards", copy_as(trace / "shard-000001.h5", "shard-1.h5"))
    yield ("another recording's shard as shard-000003.h5", copy_as(other / "shard-000002.h5", "shard-000003.h5"))
    yield ("another recording's shard replacing shard-000001.h5", copy_as(other / "shard-000001.h5", "shard-000001.h5"))
    yield ("shard-000001.h5 removed", lambda t: (t / "shard-000001.h5").unlink())
    yield ("a text file named shard-000005.h5", lambda t: (t / "shard-000005.h5").write_text("not a shard\n"))

"""Hostile traces for ``fault_inject.py`` (issue 26): what a stranger's trace may hold that the
writer never makes, and a trace that changes while it is read.

Three families, each a list of ``HostileFault``:

* ``outside``   - an object of the shard made to lead outside it (external links, absolute and
                  ``../``; a soft link to an external link; external raw storage; a virtual
                  dataset; an unknown filter; links and storage naming a FIFO), for every
                  dataset of every shard. The bytes outside are the very bytes the object held,
                  so a reader that follows it returns right numbers: only refusing counts
                  (``must_detect``); "no effect" is a read outside the trace, a FIFO a hang.
* ``bounded``   - counts and sizes a crafted 1 MB trace claims (element counts, shapes, steps
                  at the ends of int64, datasets of billions of unwritten rows, attributes of
                  20 MiB, text nested 200,000 deep, numbers past float64) with every checksum
                  recomputed, as a hostile writer would: refused or read, never allocated for.
                  The harness measures each child's peak RSS growth.
* ``changing``  - a shard truncated (``cp``), or overwritten by another recording's shard
                  (``rsync --inplace``), after the trace was opened and half read: one-line
                  errors or damage, never a signal (SIGBUS), never a wrong value.

The crafting helpers are shared with ``tests/test_hostile_traces.py``.
"""

from __future__ import annotations

import os
import shutil
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from padiff_trace.trace._integrity import attrs_crc, crc_chunks

__all__ = ["HostileFault", "changing_faults", "craft_rows", "craft_string", "hostile_faults", "outside_h5", "replace_object", "set_root_attr"]

SHARD_GLOB = "shard-*.h5"


@dataclass(frozen=True)
class HostileFault:
    family: str
    text: str
    apply: Callable[[Path], None]  # to the copy of the trace, before it is opened
    during: Callable[[Path], None] | None = None  # to the copy, after it was opened and half read
    must_detect: bool = False  # "no effect" is a failure: the reader followed it outside the trace
    crafted_meta: bool = False  # record metadata read back as crafted is no failure (only tensor data is judged)


# ---------------------------------------------------------------------- crafting helpers
def outside_h5(path: Path, data: np.ndarray) -> Path:
    with h5py.File(path, "w") as f:
        f.create_dataset("d", data=data)
    return path


def replace_object(shard: Path, name: str, make_new: Callable[[h5py.File, np.ndarray], None]) -> None:
    """Remove ``name`` from the shard and put ``make_new(file, its old data)`` in its place."""
    with h5py.File(shard, "r+") as f:
        attrs = dict(f[name].attrs)
        data = f[name][...]
        del f[name]
        make_new(f, data)
        obj = f.get(name)
        if isinstance(obj, h5py.Dataset):  # its checksum attributes too, so only the object gives it away
            for k, v in attrs.items():
                obj.attrs[k] = v


def craft_rows(shard: Path, **values: tuple[int, int]) -> None:
    """Set ``column=(row, value)`` in /records and recompute its checksums, as a hostile writer would."""
    with h5py.File(shard, "r+") as f:
        ds = f["records"]
        rows = ds[...]
        for col, (row, value) in values.items():
            rows[col][row] = value
        ds[...] = rows
        ds.attrs["crc32"] = np.array(crc_chunks(rows.tobytes(), ds.chunks[0] * rows.dtype.itemsize), dtype=np.uint32)


def craft_string(shard: Path, old: str | None, new: str, *, startswith: str = "") -> None:
    """Replace one entry of the string table (``old``, or the first starting with ``startswith``)
    and recompute its checksum."""
    with h5py.File(shard, "r+") as f:
        parts = f["string_bytes"][...].tobytes().split(b"\x00")
        at = parts.index(old.encode()) if old is not None else next(
            i for i, p in enumerate(parts) if p.startswith(startswith.encode()))
        parts[at] = new.encode()
        joined = b"\x00".join(parts)
        ds = f["string_bytes"]
        ds.resize((len(joined),))
        ds[...] = np.frombuffer(joined, dtype=np.uint8)
        ds.attrs["crc32"] = np.uint32(zlib.crc32(joined))


def set_root_attr(shard: Path, key: str, value: object) -> None:
    """Set a root attribute (text as the writer stores it: fixed-length UTF-8) and recompute the
    root attribute checksum (the shard stays trusted)."""
    with h5py.File(shard, "r+") as f:
        f.attrs[key] = np.bytes_(value.encode()) if isinstance(value, str) else value
        f.attrs["attrs_crc32"] = np.uint32(attrs_crc({k: f.attrs[k] for k in f.attrs if k != "attrs_crc32"}))


# ---------------------------------------------------------------------- outside the shard
def _external_link(out: Path, relative: bool) -> Callable[[h5py.File, np.ndarray, str], None]:
    def make(f: h5py.File, data: np.ndarray, name: str) -> None:
        target = outside_h5(out / f"{_slug(name)}.h5", data)
        f[name] = h5py.ExternalLink(f"../{out.name}/{target.name}" if relative else str(target), "/d")
    return make


def _soft_then_external(out: Path) -> Callable[[h5py.File, np.ndarray, str], None]:
    def make(f: h5py.File, data: np.ndarray, name: str) -> None:
        f[f"elsewhere_{_slug(name)}"] = h5py.ExternalLink(str(outside_h5(out / f"{_slug(name)}.h5", data)), "/d")
        f[name] = h5py.SoftLink(f"/elsewhere_{_slug(name)}")
    return make


def _external_storage(out: Path, fifo: bool) -> Callable[[h5py.File, np.ndarray, str], None]:
    def make(f: h5py.File, data: np.ndarray, name: str) -> None:
        raw = out / f"{_slug(name)}.{'fifo' if fifo else 'bin'}"
        if fifo:
            os.mkfifo(raw)
        else:
            raw.write_bytes(data.tobytes())
        f.create_dataset(name, shape=data.shape, dtype=data.dtype, external=[(str(raw), 0, max(data.nbytes, 1))])
    return make


def _external_link_fifo(out: Path) -> Callable[[h5py.File, np.ndarray, str], None]:
    def make(f: h5py.File, data: np.ndarray, name: str) -> None:
        fifo = out / f"{_slug(name)}.h5"
        os.mkfifo(fifo)
        f[name] = h5py.ExternalLink(str(fifo), "/d")
    return make


def _virtual(out: Path) -> Callable[[h5py.File, np.ndarray, str], None]:
    def make(f: h5py.File, data: np.ndarray, name: str) -> None:
        src = outside_h5(out / f"{_slug(name)}.h5", data)
        layout = h5py.VirtualLayout(shape=data.shape, dtype=data.dtype)
        layout[...] = h5py.VirtualSource(str(src), "d", shape=data.shape)
        f.create_virtual_dataset(name, layout)
    return make


def _unknown_filter(out: Path) -> Callable[[h5py.File, np.ndarray, str], None]:
    def make(f: h5py.File, data: np.ndarray, name: str) -> None:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk(tuple(max(1, n) for n in data.shape) or (1,))
        dcpl.set_filter(40000, h5py.h5z.FLAG_OPTIONAL, ())  # optional: written unfiltered, read with a plugin lookup
        space = h5py.h5s.create_simple(data.shape or (1,))
        dsid = h5py.h5d.create(f.id, name.encode(), h5py.h5t.py_create(data.dtype), space, dcpl=dcpl)
        h5py.Dataset(dsid)[...] = data.reshape(data.shape or (1,))
    return make


OUTSIDE: dict[str, Callable[[Path], Callable[[h5py.File, np.ndarray, str], None]]] = {
    "external link (absolute)": lambda out: _external_link(out, False),
    "external link (../)": lambda out: _external_link(out, True),
    "soft link to an external link": _soft_then_external,
    "external raw storage": lambda out: _external_storage(out, False),
    "virtual dataset": _virtual,
    "unknown filter": _unknown_filter,
    "external raw storage on a FIFO": lambda out: _external_storage(out, True),
    "external link to a FIFO": _external_link_fifo,
}


def _slug(name: str) -> str:
    return name.replace("/", "_")


def _datasets(shard: Path) -> list[str]:
    names: list[str] = []
    with h5py.File(shard, "r") as f:
        f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
    return sorted(names)


def hostile_faults(trace: Path, quick: bool) -> Iterator[HostileFault]:
    """``outside`` and ``bounded`` faults on (a copy of) ``trace``: a multi-shard trace
    written by ``TraceWriter``."""
    shards = sorted(trace.glob(SHARD_GLOB))
    for shard in shards[:1] if quick else shards:
        for attack, factory in OUTSIDE.items():
            fifo = "FIFO" in attack
            for name in _datasets(shard):
                if fifo and name not in ("blob", "records"):  # a follower blocks: a few are enough
                    continue
                if quick and name not in ("blob", "string_bytes", "records") and not name.startswith("tensors/"):
                    continue

                def apply(t: Path, s: str = shard.name, n: str = name, f: Callable[..., object] = factory) -> None:
                    out = t.parent / "outside"
                    out.mkdir(exist_ok=True)
                    replace_object(t / s, n, lambda h, data: f(out)(h, data, n))
                    if n.startswith("tensors/"):  # else read at the offset the writer indexed, inside the file
                        with h5py.File(t / s, "r+") as h:
                            del h["tensor_offsets"]

                yield HostileFault("outside", f"{shard.name} /{name}: {attack}", apply, must_detect=True)
    yield from _bounded(shards[0].name, shards[-1].name, quick)


def _two_steps(shard: str) -> Callable[[Path], None]:
    def apply(t: Path) -> None:
        craft_rows(t / shard, step=(0, -(2**31)))
        craft_rows(t / shard, step=(1, 2**31 - 1))
    return apply


def _bounded(first: str, last: str, quick: bool) -> Iterator[HostileFault]:
    def rows(**values: tuple[int, int]) -> Callable[[Path], None]:
        return lambda t: craft_rows(t / first, **values)

    def claim_rows(dataset: str, n: int) -> Callable[[Path], None]:
        """``dataset`` grown to ``n`` entries of unwritten chunks: HDF5 would return fill values."""
        def apply(t: Path) -> None:
            with h5py.File(t / first, "r+") as f:
                old = f[dataset]
                data, attrs = old[...], dict(old.attrs)
                del f[dataset]
                shape = (n, *data.shape[1:])
                chunks = (max(1, min(len(data), 1 << 16)), *data.shape[1:])
                new = f.create_dataset(dataset, shape=shape, dtype=data.dtype, chunks=chunks, maxshape=(None, *data.shape[1:]))
                new[: len(data)] = data
                for k, v in attrs.items():
                    new.attrs[k] = v
        return apply

    def huge_attr(t: Path) -> None:
        with h5py.File(t / first, "r+") as f:
            f.attrs["meta"] = np.bytes_(b"{" + b" " * (20 << 20) + b"}")  # its size is in its type

    def stack(text: str) -> Callable[[Path], None]:
        return lambda t: craft_string(t / first, None, text, startswith="[[")

    def shape(text: str) -> Callable[[Path], None]:
        return lambda t: craft_string(t / first, None, text, startswith="[")

    cases: list[tuple[str, Callable[[Path], None]]] = [
        ("element count 10^12 on a blob record", rows(numel=(0, 10**12))),
        ("element count and bytes 4*10^9", rows(numel=(0, 10**9), nbytes=(0, 4 * 10**9))),
        ("element count -1", rows(numel=(0, -1))),
        ("element count 2^63-1", rows(numel=(1, 2**63 - 1))),
        ("step 30,000,000", rows(step=(0, 30_000_000))),
        ("steps -2^31 and 2^31-1", _two_steps(first)),
        ("shape [2^62, 4]", shape(f"[{1 << 62}, 4]")),
        ("shape nested 100,000 deep", shape("[" * 100_000 + "]" * 100_000)),
        ("stack nested 200,000 deep", stack("[" * 200_000 + "]" * 200_000)),
        ("stack line 1e400", stack('[["model.py", 1e400, "forward", "x"]]')),
        ("stack of 10^6 frames", stack("[" + ",".join(['["m.py", 1, "f", "x"]'] * 1_000_000) + "]")),
        ("meta nested 200,000 deep", lambda t: set_root_attr(t / first, "meta", '{"a": ' + "[" * 200_000 + "]" * 200_000 + "}")),
        ("meta of 20 MiB", huge_attr),
        ("last_seq 1e400", lambda t: set_root_attr(t / last, "last_seq", "1e400")),
        ("/records claiming 10^9 rows", claim_rows("records", 10**9)),
        ("/strings claiming 10^9 entries", claim_rows("strings", 10**9)),
        ("/string_bytes claiming 4*10^9 bytes", claim_rows("string_bytes", 4 * 10**9)),
        ("/crc32_index claiming 10^9 rows", claim_rows("crc32_index", 10**9)),
        ("/blob claiming 4*10^9 bytes", claim_rows("blob", 4 * 10**9)),
    ]
    if quick:
        cases = cases[::3]
    for text, apply in cases:
        yield HostileFault("bounded", f"{first}: {text}", apply, crafted_meta=True)


# ---------------------------------------------------------------------- changing under the reader
def changing_faults(trace: Path, other: Path, quick: bool) -> Iterator[HostileFault]:
    """A shard truncated at several offsets, or overwritten in place by ``other``'s shard of the
    same name, once the reader has opened the trace and read half its records."""
    def noop(t: Path) -> None:
        return None

    for shard in sorted(trace.glob(SHARD_GLOB)):
        size = shard.stat().st_size
        cuts = (0, 4096, size // 3, size // 2, size - 4096, size - 1)
        for cut in cuts[::2] if quick else cuts:
            yield HostileFault("changing", f"{shard.name} truncated to {cut} bytes while read", noop,
                               during=lambda t, s=shard.name, c=cut: os.truncate(t / s, c))
        if (other / shard.name).exists():
            def overwrite(t: Path, s: str = shard.name) -> None:
                with open(other / s, "rb") as src, open(t / s, "r+b") as dst:  # rsync --inplace: same inode
                    shutil.copyfileobj(src, dst)
                    dst.truncate()
            yield HostileFault("changing", f"{shard.name} overwritten in place by another recording's", noop,
                               during=overwrite)

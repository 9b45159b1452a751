"""Finding and opening the shard files of a trace, with one-line errors naming the file."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import h5py

from ._errors import CorruptTraceError, NotATraceError, TraceNotFoundError, UnsupportedVersionError
from ._schema import FORMAT_NAME, FORMAT_VERSION, SHARD_GLOB

__all__ = ["find_shards", "gaps", "open_shard", "attr_str", "short"]

_SHARD_RE = re.compile(r"shard-(\d+)\.h5$")


def find_shards(path: Path) -> tuple[list[Path], bool]:
    if not path.exists():
        raise TraceNotFoundError(f"{path}: no such trace")
    if path.is_file():
        return [path], True
    shards = sorted((p for p in path.iterdir() if _SHARD_RE.search(p.name)), key=_shard_no)
    if not shards:
        partial = list(path.glob(SHARD_GLOB + ".part"))
        why = "only an unfinished shard (the recorder was killed before its first flush)" if partial else "no shards"
        raise NotATraceError(f"{path}: not a padiff-trace trace ({why})")
    return shards, False


def _shard_no(p: Path) -> int:
    m = _SHARD_RE.search(p.name)
    return int(m.group(1)) if m else -1


def gaps(paths: list[Path]) -> list[int]:
    have = {_shard_no(p) for p in paths}
    return [i for i in range(max(have) + 1) if i not in have] if have else []


def open_shard(path: Path) -> h5py.File:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise TraceNotFoundError(f"{path}: cannot open: {exc.strerror}") from None
    if size == 0:
        raise CorruptTraceError(f"{path}: empty file (0 bytes)")
    if not h5py.is_hdf5(path):
        raise NotATraceError(f"{path}: not an HDF5 file, so not a padiff-trace trace")
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise CorruptTraceError(f"{path}: damaged or truncated HDF5 file ({short(exc)})") from None
    try:
        fmt = attr_str(f.attrs, "format") if "format" in f.attrs else None
    except (OSError, ValueError):
        fmt = None
    if fmt != FORMAT_NAME:
        f.close()
        raise NotATraceError(f"{path}: an HDF5 file, but not a padiff-trace trace (format attribute {fmt!r})")
    version = int(f.attrs.get("format_version", -1))
    if version > FORMAT_VERSION:
        f.close()
        raise UnsupportedVersionError(
            f"{path}: trace format version {version} is newer than this reader's {FORMAT_VERSION}; "
            "upgrade padiff-trace"
        )
    if version < 1:
        f.close()
        raise CorruptTraceError(f"{path}: invalid format version {version}")
    return f


def attr_str(attrs: Any, key: str) -> str:
    v = attrs[key]
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


def short(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__

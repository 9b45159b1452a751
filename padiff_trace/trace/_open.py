"""Finding and opening the shard files of a trace, with one-line errors naming the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import h5py

from .._errors import CorruptTraceError, NotATraceError, TraceNotFoundError, UnsupportedVersionError
from ._closed import check_format_attrs, check_shard, read_attr, regular_file
from ._schema import FORMAT_NAME, FORMAT_VERSION, PART_RE
from ._tracedir import lock_holder, shard_files, shard_number

__all__ = ["H5_ERRORS", "find_shards", "gaps", "open_shard", "attr_str", "short"]

# what h5py raises for a damaged file, depending on where HDF5 notices it
H5_ERRORS = (OSError, RuntimeError, KeyError, ValueError, TypeError, IndexError)


def find_shards(path: Path) -> tuple[list[Path], bool]:
    """The shard files of a trace (exact names ``shard-NNNNNN.h5``, by number) and whether
    ``path`` is a single shard file."""
    if not path.exists():
        raise TraceNotFoundError(f"{path}: no such trace")
    if not path.is_dir():  # a single shard: a regular file, never a FIFO or a device
        regular_file(path)
        return [path], True
    shards = shard_files(path)
    if not shards:
        writer = lock_holder(path)
        if writer is not None:  # a live recording before its first flush (the first ~2 s)
            raise NotATraceError(f"{path}: being recorded now (writer pid {writer}), nothing flushed yet; "
                                 "try again in a few seconds")
        partial = any(PART_RE.fullmatch(p.name) for p in path.iterdir())
        why = "only an unfinished shard (the recorder was killed before its first flush)" if partial else "no shards"
        raise NotATraceError(f"{path}: not a padiff-trace trace ({why})")
    return shards, False


def gaps(paths: list[Path]) -> list[int]:
    """Shard numbers below the highest one that have no file."""
    have = {n for p in paths if (n := shard_number(p.name)) is not None}
    return [i for i in range(max(have) + 1) if i not in have] if have else []


def open_shard(path: Path) -> h5py.File:
    """Shard ``path`` opened read-only, after checking that it is a regular file, a trace of a
    version this reader knows, and a closed world (``_closed.check_shard``)."""
    try:
        size = regular_file(path).st_size
    except OSError as exc:
        raise TraceNotFoundError(f"{path}: cannot open: {exc.strerror}") from None
    if size == 0:
        raise CorruptTraceError(f"{path}: empty file (0 bytes)")
    if not h5py.is_hdf5(path):
        raise NotATraceError(f"{path}: not an HDF5 file, so not a padiff-trace trace")
    try:
        f = h5py.File(path, "r")
    except H5_ERRORS as exc:
        raise CorruptTraceError(f"{path}: damaged or truncated HDF5 file ({short(exc)})") from None
    try:
        _check_trace(f, path, size)
    except BaseException:
        f.close()
        raise
    return f


def _check_trace(f: h5py.File, path: Path, size: int) -> None:
    """A padiff-trace shard of a known version whose objects stay inside the file."""
    try:
        fixed_text = check_format_attrs(f, path)
        fmt = attr_str(f.attrs, "format", path) if "format" in f.attrs else None
    except H5_ERRORS:
        fixed_text, fmt = False, None
    if fmt != FORMAT_NAME:
        shown = fmt if fmt is None or len(fmt) <= 60 else fmt[:60] + "..."
        raise NotATraceError(f"{path}: an HDF5 file, but not a padiff-trace trace (format attribute {shown!r})")
    try:
        version = int(f.attrs.get("format_version", -1))
    except H5_ERRORS:
        version = -1
    if version > FORMAT_VERSION:
        raise UnsupportedVersionError(
            f"{path}: trace format version {version} is newer than this reader's {FORMAT_VERSION}; "
            "upgrade padiff-trace"
        )
    if version < 1:
        raise CorruptTraceError(f"{path}: invalid or unreadable format version attribute")
    try:
        check_shard(f, path, size, fixed_text)
    except H5_ERRORS as exc:  # HDF5 could not even describe an object: damaged metadata
        raise CorruptTraceError(f"{path}: damaged shard ({short(exc)})") from None


def attr_str(attrs: Any, key: str, path: Path | None = None) -> str:
    """A text attribute (``path``: refused over ``_closed.ATTR_CAP`` bytes, naming the file)."""
    v = read_attr(attrs, key, path) if path is not None else attrs[key]
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


def short(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__

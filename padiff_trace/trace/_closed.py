"""A shard is a closed world: everything a reader follows lies inside the file, and everything
it allocates is backed by bytes the file holds.

HDF5 can make a file read other files: external links (to any path, ``../`` included), soft
links through them, raw data stored in other files (``external=``), virtual datasets mapping
other files' data, and filters it loads as plugins. A trace is data someone else may have
written, so a reader that followed them would read ``/etc/passwd``, hang on a FIFO, or report
outside bytes as "verified". The writer never makes any of them; here every object and
attribute the reader touches is checked from its link, creation properties, dataspace and
type (nothing read through it) when its shard is opened, and refused with one line naming the
shard and the object (``HostileTraceError``). Sizes are checked against what the file stores
before anything is allocated; text from the file is parsed with bounded depth.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import h5py

from .._errors import HostileTraceError
from ._visible import visible

__all__ = [
    "ATTR_CAP",
    "JSON_DEPTH",
    "FIXED_TEXT_MINOR",
    "check_format_attrs",
    "check_shard",
    "hard_dataset",
    "loads",
    "read_attr",
    "regular_file",
]

FIXED_TEXT_MINOR = 2  # from format 1.2 on, text attributes are fixed-length strings
ATTR_CAP = 16 << 20  # bytes: the largest attribute a reader accepts (the writer's meta is a few KiB)
JSON_DEPTH = 64  # nesting levels of JSON text from a trace (meta, summary, shapes, stacks)
_LZF = 32000  # h5py's own LZF filter, registered by h5py itself (no plugin is loaded)
# filters the writer uses -> the most one can expand stored bytes (deflate's limit is 1032:1, LZF's
# 88:1 on runs); any other filter id would make HDF5 look for a plugin library: refused
_FILTERS: Mapping[int, int] = {
    h5py.h5z.FILTER_DEFLATE: 1100, h5py.h5z.FILTER_SHUFFLE: 1, h5py.h5z.FILTER_FLETCHER32: 1, _LZF: 100,
}
_LAYOUTS = {h5py.h5d.CONTIGUOUS: "contiguous", h5py.h5d.CHUNKED: "chunked", h5py.h5d.COMPACT: "compact"}
_LINKS = {h5py.h5l.TYPE_SOFT: "a soft link", h5py.h5l.TYPE_EXTERNAL: "an external link"}
_NUMBER = frozenset({h5py.h5t.INTEGER})
_FLAG = frozenset({h5py.h5t.INTEGER, h5py.h5t.ENUM})  # h5py stores a bool as an enum
_TEXT = frozenset({h5py.h5t.STRING})
_PLAIN = frozenset({h5py.h5t.STRING, h5py.h5t.INTEGER, h5py.h5t.FLOAT, h5py.h5t.ENUM})  # read, then compared
_CLASSES = {  # HDF5 type classes, named in messages
    h5py.h5t.INTEGER: "an integer", h5py.h5t.FLOAT: "a float", h5py.h5t.STRING: "text", h5py.h5t.BITFIELD: "a bitfield",
    h5py.h5t.OPAQUE: "opaque bytes", h5py.h5t.COMPOUND: "a compound", h5py.h5t.REFERENCE: "a reference",
    h5py.h5t.ENUM: "an enum", h5py.h5t.VLEN: "a variable-length sequence", h5py.h5t.ARRAY: "an array",
}
_NOT_REGULAR = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


@dataclass(frozen=True)
class _Attr:
    """What an attribute must be: its HDF5 type classes, and whether it is one value."""

    classes: frozenset[int]
    scalar: bool = True


@dataclass(frozen=True)
class _Dataset:
    """What a dataset of a shard must be: numpy dtype kinds, rank, the attributes read from it."""

    kinds: str
    ndim: int
    attrs: Mapping[str, _Attr] = field(default_factory=dict)


# the objects of docs/trace-format.md that a reader touches (others are never opened)
_ROOT_ATTRS: Mapping[str, _Attr] = {
    "format": _Attr(_PLAIN),  # another value says "not a trace", not "hostile"
    "format_version": _Attr(_NUMBER), "format_minor": _Attr(_NUMBER),
    "recording": _Attr(_TEXT), "meta": _Attr(_TEXT), "shard": _Attr(_NUMBER), "final": _Attr(_FLAG),
    "first_seq": _Attr(_NUMBER), "last_seq": _Attr(_NUMBER), "summary": _Attr(_TEXT), "attrs_crc32": _Attr(_NUMBER),
}
_DATASETS: Mapping[str, _Dataset] = {
    "blob": _Dataset("u", 1),
    "records": _Dataset("V", 1, {"crc32": _Attr(_NUMBER, scalar=False)}),
    "strings": _Dataset("OS", 1),  # format 1.0: variable-length strings
    "string_bytes": _Dataset("u", 1, {"count": _Attr(_NUMBER), "crc32": _Attr(_NUMBER)}),
    "crc32": _Dataset("ui", 1, {"chunk_bytes": _Attr(_NUMBER), "algorithm": _Attr(_TEXT)}),
    "crc32_index": _Dataset("i", 2),
    "tensor_offsets": _Dataset("i", 2),
}
_GROUPS = ("tensors",)
_TENSOR = _Dataset("biufcV", 1)  # /tensors/<seq>: its dtype is checked against the record's


def regular_file(path: Path) -> os.stat_result:
    """``path``'s status when it is a regular file; ``HostileTraceError`` for a FIFO, a device, a
    socket (opening one would hang or read without end). ``OSError`` when it cannot be seen."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        what = next((words for test, words in _NOT_REGULAR if test(st.st_mode)), "not a regular file")
        raise HostileTraceError(f"{path}: {what}, not a regular file: a shard is a plain file; not opened")
    return st


def _name(obj: str) -> str:
    """An object or file name from a trace, safe and short in a message."""
    text = visible(obj)
    return text if len(text) <= 120 else text[:117] + "..."


def _refuse(path: Path, obj: str, why: str) -> HostileTraceError:
    return HostileTraceError(f"{path}: {_name(obj)}: {why}; refused (nothing read through it)")


def _child(group: Any, name: str, path: Path, where: str) -> Any:
    """The object hard-linked as ``name`` in ``group`` (a low-level id), or None when absent.
    Links are looked at without being followed."""
    key = name.encode()
    if not group.id.links.exists(key):
        return None
    kind = group.id.links.get_info(key).type
    if kind != h5py.h5l.TYPE_HARD:
        words = _LINKS.get(kind, f"a user-defined link (type {kind})")
        target = _link_target(group, key, kind)
        raise _refuse(path, where, f"{words}{target}: a shard may not refer outside itself")
    return h5py.h5o.open(group.id, key)


def _link_target(group: Any, key: bytes, kind: int) -> str:
    try:
        val = group.id.links.get_val(key)
    except (KeyError, ValueError, RuntimeError, OSError):
        return ""
    if kind == h5py.h5l.TYPE_EXTERNAL:
        file, obj = (v.decode("utf-8", "replace") for v in val)
        return f" to {_name(file)}:{_name(obj)}"
    return f" to {_name(val.decode('utf-8', 'replace'))}" if isinstance(val, bytes) else ""


def _check_attrs(oid: Any, rules: Mapping[str, _Attr], path: Path, where: str, fixed_text: bool) -> None:
    """The attributes of object ``oid`` (a low-level id) that a reader reads."""
    for name, rule in rules.items():
        key = name.encode()
        if h5py.h5a.exists(oid, key):
            _check_attr(h5py.h5a.open(oid, key), name, rule, path, where, fixed_text)


def _check_attr(aid: Any, name: str, rule: _Attr, path: Path, where: str, fixed_text: bool) -> None:
    """Type class and size of an attribute, from its type and dataspace (no value read).
    ``fixed_text``: a variable-length string is refused (format 1.2 writes none): HDF5 reads one
    from a global heap collection, whose damaged sizes can make HDF5 1.14 and 2.0 loop forever."""
    tid, space = aid.get_type(), aid.get_space()
    cls = tid.get_class()
    what = f"{where} attribute {name}"
    if cls not in rule.classes:
        want = "text" if rule.classes == _TEXT else "a number"
        raise _refuse(path, what, f"holds {_CLASSES.get(cls, f'HDF5 type class {cls}')}, where {want} is expected")
    n = space.get_simple_extent_npoints()
    if rule.scalar and n != 1:
        raise _refuse(path, what, f"holds {n} values, where one is expected")
    vlen = cls == h5py.h5t.STRING and tid.is_variable_str()
    if vlen and fixed_text:
        raise _refuse(path, what, "is a variable-length string, which a format 1.2 shard never holds")
    if vlen and n != 1:  # each element could name the same large heap object: refused unread
        raise _refuse(path, what, "is an array of variable-length strings")
    if n * tid.get_size() > ATTR_CAP:
        raise _refuse(path, what, f"claims {n * tid.get_size()} bytes, more than the {ATTR_CAP >> 20} MiB accepted")


def _check_dataset(dsid: Any, rule: _Dataset, path: Path, where: str, file_size: int) -> None:
    """Layout, storage, filters, type and size of a dataset, from its creation properties."""
    if h5py.h5i.get_type(dsid) != h5py.h5i.DATASET:
        raise _refuse(path, where, "is not a dataset")
    plist = dsid.get_create_plist()
    layout = plist.get_layout()
    if layout == h5py.h5d.VIRTUAL:
        source = plist.get_virtual_filename(0) if plist.get_virtual_count() else ""
        raise _refuse(path, where, f"is a virtual dataset (data of {_name(source)})")
    if plist.get_external_count():
        raise _refuse(path, where, f"stores its data in another file ({_name(os.fsdecode(plist.get_external(0)[0]))})")
    if layout not in _LAYOUTS:
        raise _refuse(path, where, f"has an unknown storage layout ({layout})")
    ratio = 1
    for k in range(plist.get_nfilters()):
        code = plist.get_filter(k)[0]
        if code not in _FILTERS:
            raise _refuse(path, where, f"needs HDF5 filter {code}, which the writer never uses (a plugin would be loaded)")
        ratio *= _FILTERS[code]
    dt, space = dsid.dtype, dsid.get_space()
    ndim = space.get_simple_extent_ndims()
    if dt.kind not in rule.kinds or ndim != rule.ndim:
        raise _refuse(path, where, f"is {dt} with {ndim} dimension(s), not what the format stores there")
    _check_backed(dsid, space.get_simple_extent_npoints() * dt.itemsize, ratio, path, where, file_size)


def _check_backed(dsid: Any, claimed: int, ratio: int, path: Path, where: str, file_size: int) -> None:
    """A dataset may not claim more bytes than it stores (times its filters' largest expansion):
    a dataspace of 10^12 elements over unwritten chunks would otherwise be read as fill values."""
    if claimed == 0:
        return
    stored = dsid.get_storage_size()
    if stored > file_size or claimed > max(stored, 1) * ratio:
        raise _refuse(path, where, f"claims {claimed} bytes but stores {stored} (the file holds {file_size})")


def format_minor(f: h5py.File, path: Path) -> int:
    """The shard's ``format_minor`` (0 when absent or not a number), read first: from 1.2 on it
    says that no text attribute is a variable-length string."""
    _check_attrs(f.id, {"format_minor": _ROOT_ATTRS["format_minor"]}, path, "root", fixed_text=False)
    try:
        return int(f.attrs.get("format_minor", 0))
    except (TypeError, ValueError, OverflowError):
        return 0


def check_format_attrs(f: h5py.File, path: Path) -> bool:
    """The attributes read to decide whether a file is a trace at all (``format_minor`` first);
    returns whether its text attributes must be fixed-length (format 1.2 and later)."""
    fixed_text = format_minor(f, path) >= FIXED_TEXT_MINOR
    _check_attrs(f.id, {name: _ROOT_ATTRS[name] for name in ("format", "format_version")}, path, "root", fixed_text)
    return fixed_text


def check_shard(f: h5py.File, path: Path, file_size: int, fixed_text: bool) -> None:
    """Every root attribute, dataset and group of a shard that a reader touches (once per open).
    ``HostileTraceError`` for the first that would read outside the file or allocate unbacked."""
    _check_attrs(f.id, _ROOT_ATTRS, path, "root", fixed_text)
    for name, rule in _DATASETS.items():
        oid = _child(f, name, path, f"/{name}")
        if oid is not None:
            _check_dataset(oid, rule, path, f"/{name}", file_size)
            _check_attrs(oid, rule.attrs, path, f"/{name}", fixed_text)
    for name in _GROUPS:
        oid = _child(f, name, path, f"/{name}")
        if oid is not None and h5py.h5i.get_type(oid) != h5py.h5i.GROUP:
            raise _refuse(path, f"/{name}", "is not a group")


def hard_dataset(group: h5py.Group, name: str, path: Path, file_size: int) -> h5py.Dataset:
    """The tensor dataset ``name`` of ``group`` (``/tensors``), checked as ``check_shard`` checks
    the fixed ones; ``KeyError`` when absent."""
    where = f"{group.name}/{name}"
    oid = _child(group, name, path, where)
    if oid is None:
        raise KeyError(f"{where} does not exist")
    _check_dataset(oid, _TENSOR, path, where, file_size)
    return h5py.Dataset(oid)


def read_attr(attrs: Any, key: str, path: Path) -> Any:
    """An attribute's value (text decoded), refused when it is text over ``ATTR_CAP`` bytes: a
    variable-length string's length is known only once HDF5 has read it (bounded by the file)."""
    v = attrs[key]
    if isinstance(v, (str, bytes)) and len(v) > ATTR_CAP:
        raise _refuse(path, f"attribute {key}", f"holds {len(v)} bytes, more than the {ATTR_CAP >> 20} MiB accepted")
    return v.decode("utf-8") if isinstance(v, bytes) else v


def loads(text: str, depth: int = JSON_DEPTH) -> Any:
    """``json.loads`` for text from a trace: ``ValueError`` (never ``RecursionError``) when it
    nests deeper than ``depth``; numbers beyond float range stay ``inf`` for the caller to refuse."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {depth} levels") from None
    if _depth_exceeds(value, depth):
        raise ValueError(f"JSON nested deeper than {depth} levels")
    return value


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether containers nest deeper than ``limit`` (iterative: no recursion on hostile input)."""
    todo: list[tuple[Any, int]] = [(value, 0)]
    while todo:
        v, d = todo.pop()
        if isinstance(v, (list, dict)):
            if d >= limit:
                return True
            items: Iterable[Any] = v.values() if isinstance(v, dict) else v
            todo.extend((x, d + 1) for x in items if isinstance(x, (list, dict)))
    return False

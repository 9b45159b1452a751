"""Integrity primitives shared by the writer and the reader, and the damage report types.

* CRC-32 (zlib's) of data in ``CRC_CHUNK`` pieces: ``/blob``, ``/tensors/<seq>``, ``/records``.
  ``crc32`` computes it with the C kernel's carry-less-multiply path where there is one
  (12-50x faster than zlib, the same value), else with ``zlib.crc32``.
* The stored form of strings HDF5 cannot hold (NUL, lone surrogates): JSON behind a marker.
* The checksum of a shard's root attributes (``meta``, ``final``, ``summary``, ...).
* ``Damage`` (one finding) and ``Health`` (the summary a ``Trace`` exposes).

See docs/trace-format.md, section 10.
"""

from __future__ import annotations

import functools
import json
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ..arrays._native import kernel
from ._schema import CRC_CHUNK

__all__ = [
    "ESCAPE",
    "ROOT_ATTRS",
    "Damage",
    "Health",
    "attrs_crc",
    "crc32",
    "crc_chunks",
    "escape_strings",
    "split_strings",
    "strings_crc",
    "unescape",
]

ESCAPE = "\ufdd0"  # a Unicode noncharacter: a stored string starting with it is JSON behind it
ROOT_ATTRS = (
    "format", "format_version", "format_minor", "recording", "meta", "shard", "final", "first_seq", "last_seq",
    "summary",
)


@functools.cache
def _crc_impl() -> tuple[Callable[..., int], Callable[[Any, int], bytes] | None]:
    """(crc32, crc32_chunks or None): the C kernel's where it has a carry-less-multiply path
    (its table path is slower than zlib's), zlib's otherwise."""
    k = kernel()
    if k is not None and k.crc32_level() > 0:
        return k.crc32, k.crc32_chunks
    return zlib.crc32, None


def crc32(data: Any, value: int = 0) -> int:
    """``zlib.crc32(data, value)``, computed by the fastest path here (the GIL is released on
    large buffers either way: the model and the writer's other thread run meanwhile)."""
    return _crc_impl()[0](data, value)


def crc_chunks(data: Any, unit: int = CRC_CHUNK) -> list[int]:
    """CRC-32 of each ``unit`` bytes of ``data`` (any contiguous buffer); the last may be shorter."""
    view = memoryview(data).cast("B")
    one, many = _crc_impl()
    if many is not None:
        return np.frombuffer(many(view, unit), dtype=np.uint32).tolist()
    return [one(view[i : i + unit]) for i in range(0, len(view), unit)]


def _needs_escape(s: str) -> bool:
    if "\x00" in s or s.startswith(ESCAPE):
        return True
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (e.g. a surrogateescape'd file name)
        return True
    return False


def escape_strings(strings: Sequence[str]) -> tuple[list[str], bytes, int]:
    """The strings as stored in ``/strings``, their UTF-8 joined by NUL (``/string_bytes``) and
    its CRC-32.

    HDF5 strings end at NUL and must be valid UTF-8; a string with NUL, a lone surrogate or
    starting with ``ESCAPE`` is stored as ``ESCAPE + json.dumps(s)`` (ASCII JSON), so every
    string round-trips exactly. One check over the joined table skips the per-string work
    in the usual case."""
    text = "\n".join(strings)
    try:
        text.encode("utf-8")
        plain = "\x00" not in text and ESCAPE not in text
    except UnicodeEncodeError:
        plain = False
    stored = list(strings) if plain else [ESCAPE + json.dumps(s) if _needs_escape(s) else s for s in strings]
    joined = b"\x00".join(s.encode("utf-8") for s in stored)
    return stored, joined, zlib.crc32(joined)


def strings_crc(encoded: Iterable[bytes]) -> int:
    """CRC-32 of the stored strings' UTF-8 bytes, NUL-separated (stored strings hold no NUL)."""
    return zlib.crc32(b"\x00".join(encoded))


def split_strings(joined: bytes, count: int) -> list[bytes]:
    """The inverse of the join in ``escape_strings`` (``ValueError`` if the count differs)."""
    parts = joined.split(b"\x00") if count else []
    if len(parts) != count:
        raise ValueError(f"{len(parts)} strings where {count} were written")
    return parts


def unescape(s: str) -> str:
    """The string a stored ``/strings`` entry stands for (``ValueError`` if malformed)."""
    if not s.startswith(ESCAPE):
        return s
    try:
        value = json.loads(s[1:])
    except RecursionError:  # an escaped entry is one JSON string; deep nesting is damage
        raise ValueError("escaped string entry nested too deep") from None
    if not isinstance(value, str):
        raise ValueError("escaped string entry is not a JSON string")
    return value


def _plain(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, bytes):
        return v.decode("utf-8", "surrogateescape")
    return str(v)


def attrs_crc(values: Mapping[str, Any]) -> int:
    """CRC-32 of the protected root attributes (absent ones count as null), in a canonical JSON."""
    canon = json.dumps([[k, _plain(values.get(k))] for k in ROOT_ATTRS], separators=(",", ":"), ensure_ascii=True)
    return zlib.crc32(canon.encode("ascii"))


class Damage(NamedTuple):
    """One integrity finding: which file, what in it, why; ``seqs``: the records it concerns
    (when known), ``lost``: records it made unreadable that are not in the index at all."""

    shard: Path
    what: str
    reason: str
    seqs: tuple[int, ...] = ()
    lost: int = 0

    def __str__(self) -> str:
        return f"{self.shard}: {self.what}: {self.reason}"


@dataclass(frozen=True)
class Health:
    """A trace's integrity in numbers. ``ok`` is False as soon as anything was found damaged;
    ``checked``: every stored byte was read and verified (``Trace.check()``), otherwise data is
    verified as it is read."""

    shards: int  # shard files found (exact names)
    shards_damaged: int  # unreadable, or not merged (another recording, inconsistent)
    shards_missing: int  # numbers below the highest one without a file
    records: int  # in the index
    records_damaged: int  # in the index, but their row or data fails a check (reading raises)
    records_lost: int  # known to have existed, not in the index
    records_skipped: int  # kinds this reader does not know (a newer writer's): ignored
    unverified: int  # records whose data carries no checksum (format 1.0 large tensors)
    damage: int  # findings in ``Trace.damage``
    checked: bool
    format_minor: int = 1  # the lowest among the shards read: 0 = format 1.0, fewer checksums

    @property
    def ok(self) -> bool:
        return self.damage == 0

    @property
    def state(self) -> str:
        return "ok" if self.ok else "damaged"

    def brief(self) -> str:
        """A few words for a table cell: ``ok`` or ``DAMAGED (...)``."""
        if self.ok:
            return "ok"
        parts = [f"{self.damage} finding(s)"]
        parts += [f"{n} {w}" for n, w in ((self.shards_damaged, "shard(s) unread"), (self.records_damaged,
                  "record(s) damaged"), (self.records_lost, "record(s) lost")) if n]
        return f"DAMAGED ({', '.join(parts)})"

    def __str__(self) -> str:
        if self.ok:
            how = "every byte verified" if self.checked else "index verified; data verified when read"
            extra = f"; {self.unverified} record(s) without checksums (format 1.0)" if self.unverified else ""
            if self.format_minor < 1 and not self.unverified:
                extra = "; format 1.0: no checksum on the string table and large tensors"
            skip = f"; {self.records_skipped} record(s) of unknown kinds ignored" if self.records_skipped else ""
            return f"ok ({how}{extra}{skip})"
        parts = [f"{self.damage} finding(s)"]
        if self.shards_damaged:
            parts.append(f"{self.shards_damaged} of {self.shards} shard(s) not read")
        if self.shards_missing:
            parts.append(f"{self.shards_missing} shard(s) missing")
        if self.records_damaged:
            parts.append(f"{self.records_damaged} record(s) damaged")
        if self.records_lost:
            parts.append(f"{self.records_lost} record(s) lost")
        parts.append(f"{self.records - self.records_damaged} record(s) intact")
        if not self.checked:
            parts.append("not fully checked")
        return "DAMAGED: " + ", ".join(parts)

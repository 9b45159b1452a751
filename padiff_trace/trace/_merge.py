"""Merging the shard indexes of one trace directory into one index.

Only shards of one recording are merged: the recording id most shards carry (ties: the one of
the lowest shard number); the others are reported, not read. String ids are remapped into
one table; a seq found in two shards is kept once (the lower shard) and reported.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._integrity import Damage
from ._shardindex import INDEX_DTYPE, STRING_COLUMNS, ShardIndex, compact

__all__ = ["Merged", "merge"]


@dataclass
class Merged:
    rows: np.ndarray
    shard_of: np.ndarray  # int16 (int32 past 32k shards): position of each row's shard in the trace's list of files
    strings: list[str]
    damage: list[Damage]
    bad: dict[int, Damage]  # seq -> why its data cannot be read
    recording: str | None
    meta: dict[str, Any] = field(default_factory=dict)
    final: bool = False
    summary: dict[str, Any] = field(default_factory=dict)
    skipped: int = 0
    lost: int = 0
    minor: dict[int, int] = field(default_factory=dict)  # file position -> format minor version


def _choose(loaded: list[tuple[int, ShardIndex]]) -> str | None:
    votes = Counter(ix.recording for _, ix in loaded)
    lowest: dict[str | None, int] = {}
    for _, ix in loaded:
        lowest.setdefault(ix.recording, ix.number)
    return max(votes, key=lambda r: (votes[r], -lowest[r]))


def merge(loaded: list[tuple[int, ShardIndex]], damage: list[Damage], max_seq_hint: int) -> Merged:
    """``loaded``: (file position, index) of the shards that could be read, by shard number;
    ``damage``: what was found so far (unreadable shards); ``max_seq_hint``: the highest seq a
    damaged shard is known to have held (-1 if none)."""
    recording = _choose(loaded) if loaded else None
    strings: dict[str, int] = {}
    rows: list[np.ndarray] = []
    shard_of: list[np.ndarray] = []
    bad: dict[int, Damage] = {}
    out = Merged(np.zeros(0, INDEX_DTYPE), np.zeros(0, np.int32), [], damage, bad, recording)
    max_seq = max_seq_hint
    for pos, ix in loaded:
        if ix.recording != recording:
            damage.append(Damage(ix.path, "shard", f"belongs to another recording ({_short_id(ix.recording)}, "
                                 f"this trace is {_short_id(recording)}): not merged", lost=len(ix.table)))
            continue
        damage.extend(ix.damage)
        out.minor[pos] = ix.minor
        out.skipped += ix.skipped
        if ix.last_seq is not None:
            max_seq = max(max_seq, ix.last_seq)
        if ix.meta is not None and not out.meta:
            out.meta = ix.meta
        if ix.final:
            out.final = True
            out.summary = ix.summary or {}
        elif ix.summary and "aborted" in ix.summary and not out.final:
            out.summary = ix.summary  # the last shard of a stopped recording says why it stopped
        table = ix.table
        remap = np.array([strings.setdefault(s, len(strings)) for s in ix.strings] or [0], dtype=np.int32)
        for col in STRING_COLUMNS:
            table[col] = remap[table[col]]
        for i, d in ix.bad_rows.items():
            bad[int(table["seq"][i])] = d
        rows.append(table)
        shard_of.append(np.full(len(table), pos, dtype=np.int32))
    if out.meta == {} and loaded:  # no shard's meta passed its checks: take one that parses
        out.meta = next((ix.meta for _, ix in loaded if ix.meta), {}) or {}
    if rows:
        all_rows, all_shards = np.concatenate(rows), np.concatenate(shard_of)
        order = np.argsort(all_rows["seq"], kind="stable")
        if not np.all(order == np.arange(len(order))):
            all_rows, all_shards = all_rows[order], all_shards[order]
        seqs = all_rows["seq"]
        twice = np.flatnonzero(seqs[1:] == seqs[:-1])
        if len(twice):  # two shards claim one seq: which one holds it is unknown, neither is read
            where = {pos: ix.path for pos, ix in loaded}
            drop = np.zeros(len(all_rows), dtype=bool)
            drop[twice] = drop[twice + 1] = True
            for i in np.flatnonzero(drop).tolist():
                damage.append(Damage(where[int(all_shards[i])], f"record {int(seqs[i])}", "seq also in another shard: not read", lost=1))
                bad.pop(int(seqs[i]), None)
            all_rows, all_shards = all_rows[~drop], all_shards[~drop]
        fewer = len(all_shards) and int(all_shards.max()) < np.iinfo(np.int16).max
        out.rows, out.shard_of = compact(all_rows), all_shards.astype(np.int16) if fewer else all_shards
        if len(all_rows):
            max_seq = max(max_seq, int(all_rows["seq"][-1]))
    if out.summary and isinstance(out.summary.get("records"), int):
        max_seq = max(max_seq, out.summary["records"] - 1)
    out.strings = list(strings)
    out.lost = max(0, max_seq + 1 - len(out.rows) - out.skipped) if max_seq >= 0 else 0
    return out


def _short_id(rec: str | None) -> str:
    return "format 1.0, no id" if rec is None else rec[:12]

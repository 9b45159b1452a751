"""Collective records read back, across the ranks of a multi-rank trace.

A recording made with ``--collectives`` holds each collective call (all-reduce and friends) as op
records (``recorder/_collectives.py``): ``op_input`` ``in`` before the call, ``op_output`` ``out``
after it, and its attributes (``reduce_op=SUM``, ``group_size``) as Python values. Here they say:

* where a first NaN/Inf spread (``first_nonfinite``): each rank's first record holding NaN or Inf,
  and for a rank that received it, the collective it came through, the first one whose output on
  that rank is not finite while that rank's input to it was, and the ranks whose input was not;
* what a first divergence at a collective's output compares (``entered_at``): the call and, on
  each side, its attributes (a MAX against a SUM shows there).

Everything is read from the stored statistics and the record table; no tensor is read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from padiff_trace import CorruptTraceError, Kind, NotATraceError, TraceChangedError, TraceNotFoundError, TraceReadError, open_trace
from padiff_trace.recorder import COLLECTIVE_OPS

from ._ranks import RankedTrace

__all__ = ["CollectiveCall", "NonFinite", "entered_at", "first_nonfinite", "nonfinite_lines"]

_UNREADABLE = (CorruptTraceError, NotATraceError, TraceNotFoundError, TraceReadError, TraceChangedError)
_OP_KINDS = (int(Kind.OP_INPUT), int(Kind.OP_OUTPUT))


@dataclass(frozen=True)
class CollectiveCall:
    """One collective call of one rank: its op, the module call it was made in, and whether its
    recorded input and output hold NaN or Inf (None: not recorded)."""

    step: int
    module: str
    op: str
    call_index: int
    seq: int  # its first output record (else first record): its place in the rank's recording
    input_bad: bool | None
    output_bad: bool | None

    @property
    def key(self) -> tuple[int, str, str, int]:
        """The same call on every rank (the ranks run one program)."""
        return self.step, self.module, self.op, self.call_index

    def label(self) -> str:
        return f"{self.op} in {self.module or '<root>'}"


@dataclass(frozen=True)
class NonFinite:
    """A rank's first record (in its recording order) holding NaN or Inf values; ``via``: the
    collective it reached this rank through, whose input on this rank was finite, and
    ``from_ranks``: the ranks whose input to that collective was not."""

    rank: int
    step: int
    seq: int
    name: str
    kind: str
    module_type: str
    count: int  # NaN and Inf elements in it
    via: CollectiveCall | None = None
    from_ranks: tuple[int, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        via = None if self.via is None else {"op": self.via.op, "module": self.via.module, "step": self.via.step,
                                              "call_index": self.via.call_index, "seq": self.via.seq,
                                              "from_ranks": list(self.from_ranks)}
        return {"rank": self.rank, "step": self.step, "seq": self.seq, "name": self.name, "kind": self.kind,
                "module_type": self.module_type, "count": self.count, "via": via}


def _collectives(tr: Any, bad: np.ndarray) -> list[CollectiveCall]:
    """The collective calls of one rank trace, from its table (``bad``: per row, NaN or Inf)."""
    t = tr.table
    names = tr.strings
    ops = [i for i, s in enumerate(names) if s in COLLECTIVE_OPS]
    python = [i for i, s in enumerate(names) if s == "python"]
    if not ops:
        return []
    rows = np.flatnonzero(np.isin(t["kind"], _OP_KINDS) & np.isin(t["module_type"], ops) & ~np.isin(t["device"], python))
    calls: dict[int, dict[str, Any]] = {}
    for i in rows:
        c = calls.setdefault(int(t["call"][i]), {"row": int(i), "in": None, "out": None, "seq": None})
        side = "in" if int(t["kind"][i]) == Kind.OP_INPUT else "out"
        c[side] = bool(c[side]) or bool(bad[i])
        if side == "out" and c["seq"] is None:
            c["seq"] = int(t["seq"][i])
    out = []
    for c in calls.values():
        i = c["row"]
        seq = c["seq"] if c["seq"] is not None else int(t["seq"][i])
        out.append(CollectiveCall(int(t["step"][i]), names[int(t["module"][i])], names[int(t["module_type"][i])],
                              int(t["call_index"][i]), seq, c["in"], c["out"]))
    return sorted(out, key=lambda c: (c.step, c.seq))


def first_nonfinite(ranked: RankedTrace) -> tuple[NonFinite, ...]:
    """For each readable rank with a NaN or Inf anywhere: its first such record, read from the
    stored statistics (no tensor is read). Sorted by step, then by position in the recording
    (the ranks run one program, so the same position is the same point of it), then rank: the
    first is the rank that produced one first, before a collective could spread it. Where
    collectives were recorded (``--collectives``), a rank whose first one is at or after a
    collective's output that its own input to the collective did not have says through which
    (``via``) and from which ranks (``from_ranks``)."""
    found: list[NonFinite] = []
    calls: dict[int, list[CollectiveCall]] = {}
    for r in ranked.ranks:
        if not r.readable:
            continue
        try:
            with open_trace(r.path) as tr:
                if not len(tr):
                    continue
                counts = np.nan_to_num(tr.stat_columns("nan", "inf")).sum(axis=1)
                rows = np.flatnonzero(counts > 0)
                if not rows.size:
                    continue
                seqs = tr.table["seq"][rows]
                row = int(rows[int(np.argmin(seqs))])
                rec = tr.record_at(row)
                found.append(NonFinite(r.rank, rec.step, rec.seq, rec.name, rec.kind.label, rec.module_type, int(counts[row])))
                calls[r.rank] = _collectives(tr, counts > 0)
        except _UNREADABLE:
            continue
    found = [_spread(n, calls) for n in found]
    return tuple(sorted(found, key=lambda n: (n.step, n.seq, n.rank)))


def _spread(n: NonFinite, calls: dict[int, list[CollectiveCall]]) -> NonFinite:
    """``n`` with the collective that brought its NaN/Inf to its rank, if one did."""
    for c in calls.get(n.rank, []):
        if (c.step, c.seq) > (n.step, n.seq):
            break  # the rank had a NaN/Inf of its own before this collective
        if c.output_bad and c.input_bad is False:
            sources = tuple(rank for rank, cs in sorted(calls.items()) if any(o.key == c.key and o.input_bad for o in cs))
            return NonFinite(n.rank, n.step, n.seq, n.name, n.kind, n.module_type, n.count, c, sources)
    return n


def nonfinite_lines(label: str, found: tuple[NonFinite, ...]) -> list[str]:
    """The summary line: the rank that had a NaN/Inf first, then the others, each with the
    collective it came through where that was recorded."""
    if not found:
        return []
    f = found[0]
    first = [n for n in found if (n.step, n.seq) == (f.step, f.seq)]
    who = "rank " + ", ".join(str(n.rank) for n in first)
    line = (f"  first NaN/Inf in {label}: {who}, step {f.step}, {f.name} ({f.kind}{', ' + f.module_type if f.module_type else ''}; "
            f"{f.count} values, record {f.seq})")
    later = [n for n in found if n not in first]
    if later:
        line += "; later: " + ", ".join(f"rank {n.rank} (step {n.step}, {n.name}{_via(n)})" for n in later)
    return [line]


def _via(n: NonFinite) -> str:
    if n.via is None:
        return ""
    src = f" from rank {', '.join(map(str, n.from_ranks))}" if n.from_ranks else ""
    return f", spread through {n.via.label()} (record {n.via.seq}){src}"


def entered_at(a: Any, b: Any) -> str:
    """For the two records of a first divergence at a collective's output (``op_output`` of a
    recorded collective): which call it is, and its attributes on each side; else ""."""
    if getattr(a, "kind", None) != Kind.OP_OUTPUT or str(getattr(a, "module_type", "")) not in COLLECTIVE_OPS:
        return ""
    where = f"{a.module_type} inside {a.module or '<root>'} (a collective"
    sa, sb = _attributes(a), _attributes(b)
    same = [x for x in sa if x in sb]
    da, db = [x for x in sa if x not in same], [x for x in sb if x not in same]
    if not (da or db):
        return f"{where}{': ' + ', '.join(same) if same else ''})"
    return f"{where}{', ' + ', '.join(same) + ' on both sides' if same else ''}): A {' '.join(da) or '-'}; B {' '.join(db) or '-'}"


def _attributes(r: Any) -> list[str]:
    """The Python-value records of the call of record ``r``: ``reduce_op=SUM``, ``group_size=2``."""
    try:
        tr = r.trace
        rows = np.flatnonzero((tr.table["call"] == r.call) & (tr.table["kind"] == int(Kind.OP_INPUT)))
        out = []
        for i in rows:
            x = tr.record_at(int(i))
            if x.device == "python" and x.shape == ():
                out.append(x.position if "=" in x.position else f"{x.position}={x.stats.get('max', float('nan')):g}")
        return out
    except (*_UNREADABLE, AttributeError, KeyError):
        return []

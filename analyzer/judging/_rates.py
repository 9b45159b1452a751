"""Dropout rates set side by side: where two ports part by the rate a dropout is called with.

A recorder writes each dropout call made in training as a ``Kind.RANDOM`` record whose op name
carries the rate it was called with (``dropout p=0.1``; ``recorder._random.rated``): a mask it
drew or replayed, or, at a rate of 0, no mask at all (position ``off``: where the call was).
A rate a porter set wrong (a keep probability passed as the drop probability, a rate left at a
layer's default of 0) makes the values after that dropout differ, yet replaying the other
side's masks cannot show it: the masks are shared, the scaling and the number of zeros are not.
The records can: inside the call pair named for the first divergence, the dropout calls of each
side, taken in call order (one port's dropout module against the other's inline ``F.dropout``),
are set side by side, and the first whose rates differ names the call that made it on each
side. Only where both sides made as many dropout calls there: otherwise which pairs with which
is not known, and nothing is said.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from padiff_trace import Record

from ..alignment._calls import Call, TraceView
from ._randomness import random_inside

__all__ = ["RatesApart", "rate_of", "rates_apart"]

_SUFFIX = " p="
_SAME = 1e-9  # rates within this are one rate


@dataclass(frozen=True)
class RatesApart:
    """The first dropout calls, one on each side, whose rates differ."""

    a: Call
    b: Call
    rate_a: float
    rate_b: float
    draw_a: Record


def rate_of(op: str) -> float | None:
    """The rate a dropout record's op name carries (``dropout p=0.1`` -> 0.1); None for a record
    that carries none (a trace of an older recorder, a draw that is no dropout)."""
    _, sep, tail = op.rpartition(_SUFFIX)
    if not sep:
        return None
    try:
        p = float(tail)
    except ValueError:
        return None
    return p if math.isfinite(p) and 0.0 <= p <= 1.0 else None


def _dropouts(v: TraceView, call: Call) -> list[tuple[Record, float]]:
    """The dropout calls recorded inside ``call`` (its module or one inside it), with their
    rates, in the order they were made."""
    return [(r, p) for r in random_inside(v, call) if (p := rate_of(r.module_type)) is not None]


def _caller(v: TraceView, call: Call, r: Record) -> Call:
    """The innermost call of ``r``'s module inside ``call`` (or ``call``) that was running when
    ``r`` was recorded."""
    best = call
    for c in (call, *v.tree(call.step).descendants(call)):
        if c.module != r.module:
            continue
        seqs = [x.seq for x in (*c.inputs, *c.outputs)]
        if seqs and min(seqs) <= r.seq <= max(seqs) and c.depth >= best.depth:
            best = c
    return best


def rates_apart(va: TraceView, vb: TraceView, call_a: Call, call_b: Call, before: int | None = None) -> RatesApart | None:
    """The first dropout calls inside the paired calls ``call_a`` / ``call_b`` whose rates differ
    (module docstring); ``before``: only A's dropouts recorded before this sequence number (the
    first differing value: a rate after it did not make it). None when the sides made different
    numbers of dropout calls there, or every rate agrees."""
    da, db = _dropouts(va, call_a), _dropouts(vb, call_b)
    if not da or len(da) != len(db):
        return None
    for (ra, pa), (rb, pb) in zip(da, db):
        if before is not None and ra.seq > before:
            return None
        if abs(pa - pb) > _SAME:
            return RatesApart(_caller(va, call_a, ra), _caller(vb, call_b, rb), pa, pb, ra)
    return None

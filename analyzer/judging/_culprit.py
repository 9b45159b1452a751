"""Which module made the error: the first divergence located on each side.

The earliest failing record is where a difference is first *seen*, not where it was *made*:
a missing attention scale shows first as the input of ``out_proj``, a changed activation
written inline in a layer's ``forward`` as the input of ``linear2``, and a flag that one
library passes as ``True`` and the other as ``False`` at the very top. The rule here:

1. **The pair.** Among the paired module calls of the step, the *candidates* are those
   whose outputs diverge while all their compared inputs agree: their own code made the
   error. The innermost candidate (no candidate inside it) that diverges first is named.
   Its children that ran before the first differing value are listed as fine; when that
   value is the input of a child, the error is in the parent's inline code between them.
2. **Each side.** Inside that call, a module recorded on one side only may have computed the
   differing value: named on that side instead (``_sides``).

The record reported with it is the first differing record inside the named call (its
output, or the input of a child). Weights and buffers are compared before the forward pass
and stay first when they differ (named at the first call of their module on each side);
op-level records (``--ops``) keep the earliest failing record. When no pair qualifies (every
diverging call also received a differing input), the earliest failing record is the answer.

3. **Backward.** A gradient that differs first while every forward record of its step agrees
   was made by a backward, not by the module it belongs to: the gradient of a call's output is
   what the calls that used that output pass back. It is named, on each side, at the innermost
   call that next received that output as an input (the same value: ``value_id``); where no
   recorded call did (a functional consumer), the earliest failing record stands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from padiff_trace import Kind

from ..alignment._calls import Call, TraceView
from ._located import Located, PairResult, Side
from ._lookups import ids_maker
from ._onesided import Key, Twin, value_id
from ._otherside import across, counterpart, level
from ._randomness import DRAWN, REPLAYED, random_inside
from ._rates import rates_apart
from ._scaled import scaled_outside
from ._sides import consumer, first_call, side_of

if TYPE_CHECKING:
    from ..alignment._pairing import CallPair
    from ._pairtable import PairTable
    from ._pairview import PairResult as PairView

__all__ = ["Located", "PairResult", "Side", "locate"]


_FWD = ("model_input", "input", "output")
_STATE = ("param", "buffer")


def locate(t: PairTable, first: PairView, va: TraceView, vb: TraceView) -> Located[PairView] | None:
    """The first divergence on both sides, or None where the earliest failing record stands.
    Reads the table's columns (its rows are in execution order: the earliest is the lowest row)."""
    if first.role in _STATE:
        return _state(first, va, vb)
    if first.role == "grad_output":
        return _backward(t, first, va, vb)
    if first.role not in _FWD:
        return None
    cp = t.col("cp")
    mask = (t.col("step") == first.step) & t.role_mask(*_FWD) & (cp >= 0)
    rows = np.flatnonzero(mask)
    if not len(rows):
        return None
    n = len(t.call_pairs)
    call_a = np.fromiter((c.a.id for c in t.call_pairs), np.int64, n)[cp[rows]]
    call_b = np.fromiter((c.b.id for c in t.call_pairs), np.int64, n)[cp[rows]]
    failed = ~t.passed[rows]
    is_out = t.role_mask("output")[rows]
    # candidates: a failing output while every other forward record of the call passes
    cands, at = np.unique(call_a[is_out & failed], return_index=True)
    cand_rows = rows[is_out & failed][at]
    keep = ~np.isin(cands, call_a[~is_out & failed])
    cands, cand_rows = cands[keep], cand_rows[keep]
    if not len(cands):
        return None
    # a call that received tensors none of which any record compared (the other side passes them
    # concatenated, or in another structure) is judged by those values where other records
    # compared them (a norm's output handed on as query, key and value): it is no candidate if one
    # of them differs there (and agrees nowhere); values compared nowhere say nothing either way
    compared_in = np.isin(cands, call_a[~is_out])
    blind_ids = [c for i, c in enumerate(cands.tolist()) if not compared_in[i] and va.by_id[c].tensor_inputs()]
    if blind_ids:
        by_value = _seen_values(t, rows)
        verdicts = {c: _inputs_seen(va.by_id[c], by_value) for c in blind_ids}
        drop = {c for c, v in verdicts.items() if v is False}
        keep = np.fromiter((c not in drop for c in cands.tolist()), bool, len(cands))
        if keep.any():
            cands, cand_rows = cands[keep], cand_rows[keep]
    outer = {x.id for c in cands.tolist() for x in va.ancestors(va.by_id[c])}  # a candidate inside them
    best = t[int(cand_rows[~np.isin(cands, np.fromiter(outer, np.int64, len(outer)))].min())]
    cp_best = best.call_pair
    assert cp_best is not None
    inside = np.fromiter({cp_best.a.id} | va.descendants(cp_best.a), np.int64)
    seen = t[int(rows[failed & np.isin(call_a, inside)].min())]
    held = _holder_unjudged(t, rows, call_a, is_out, failed, va, seen, cp_best.a)
    if held is not None and not _draws_apart(va, held.a) and not _draws_apart(vb, held.b):
        cp_best = held  # a paired call inside it holds the first differing value, its inputs agree
    fwd = t.subset(mask)
    paired_a, paired_b = _Ids(np.unique(call_a)), _Ids(np.unique(call_b))
    params = t.subset(t.role_mask("param"))
    weighted_a: dict[str, set[str]] = {}  # a module whose weights were compared -> its partners' modules
    weighted_b: dict[str, set[str]] = {}
    for p in params:
        weighted_a.setdefault(p.a.module, set()).add(p.b.module)
        weighted_b.setdefault(p.b.module, set()).add(p.a.module)
    apart = rates_apart(va, vb, cp_best.a, cp_best.b, seen.a.seq)
    if apart is not None:  # a dropout called with another rate on each side (``_rates``)
        return Located(seen, Side(apart.a, "rate", None, (), detail=f"rate {apart.rate_a:g}"),
                       Side(apart.b, "rate", None, (), detail=f"rate {apart.rate_b:g}"))
    twin_a, twin_b = Twin(vb, cp_best.b, paired_b), Twin(va, cp_best.a, paired_a)
    found = Located(seen, side_of(va, cp_best.a, fwd, "a", paired_a, weighted_a, twin_a),
                    side_of(vb, cp_best.b, fwd, "b", paired_b, weighted_b, twin_b))
    found = counterpart(found, fwd, (va, vb), (cp_best.a, cp_best.b), (paired_a, paired_b))
    found = scaled_outside(across(found) or level(found, cp_best.a, cp_best.b), va, vb)
    return Located(found.pair, ids_maker(va, found.a, fwd, "a"), ids_maker(vb, found.b, fwd, "b"))  # a lookup fed other ids


def _holder_unjudged(t: PairTable, rows: np.ndarray, call_a: np.ndarray, is_out: np.ndarray, failed: np.ndarray,
                     va: TraceView, seen: PairView, named: Call) -> CallPair | None:
    """The innermost paired call inside ``named`` (the candidate chosen) that holds the call of
    ``seen`` (the first differing record inside ``named``), received inputs that all agree and
    whose output no record compares (the two sides return it in other structures: a stage's
    tokens against a (map, class token) pair): its code made the difference, not ``named``'s.
    None where there is none."""
    pairs = {cp.a.id: cp for cp in t.call_pairs}
    c = va.by_id.get(seen.a.call)
    if c is None:
        return None
    chain = [x for x in va.ancestors(c) if x.id != named.id and named.id in {y.id for y in va.ancestors(x)}]
    if seen.role == "output":
        chain = [c, *chain]
    for x in chain:  # innermost first
        if x.id not in pairs:
            continue
        mine = call_a == x.id
        if (mine & is_out).any() or not (mine & ~is_out).any() or (mine & ~is_out & failed).any():
            continue
        return pairs[x.id]
    return None


def _draws_apart(v: TraceView, call: Call) -> bool:
    """Whether ``v`` replays the other trace's random draws in ``call``'s step yet drew numbers
    of its own inside ``call``: the values there may part by the draws (a teacher whose dropout
    is off on the other side leaves this side's student without a mask to replay), and the
    call around it judges that (``idle_random``), not the code inside."""
    return any(r.position == DRAWN for r in random_inside(v, call)) and any(
        r.position == REPLAYED for r in v.trace.select(kind=Kind.RANDOM, step=call.step))


def _seen_values(t: PairTable, rows: np.ndarray) -> dict[Key, bool]:
    """A's forward values of the step by identity (``value_id``) -> whether a pair comparing them
    passed (a value that agrees with its partner anywhere is right: another pairing of it may set
    it against another representation)."""
    out: dict[Key, bool] = {}
    for i in rows.tolist():
        k = value_id(t[i].a)
        if k is not None:
            out[k] = out.get(k, False) or bool(t.passed[i])
    return out


def _inputs_seen(call: Call, seen: dict[Key, bool]) -> bool | None:
    """Whether ``call``'s tensor inputs agree where other records compared them: False if one
    differs there, True if one agrees and none differs (a mask only one side builds is compared
    nowhere), None if none was compared anywhere."""
    got = [seen.get(k) if (k := value_id(r)) is not None else None for r in call.tensor_inputs()]
    if any(g is False for g in got):
        return False
    return True if any(g for g in got) else None


class _Ids:
    """A sorted id array as a container (a set of a million ids holds ~60 MB)."""

    def __init__(self, ids: np.ndarray) -> None:
        self.ids = ids

    def __contains__(self, x: object) -> bool:
        if not isinstance(x, (int, np.integer)):
            return False
        i = int(np.searchsorted(self.ids, x))
        return i < len(self.ids) and int(self.ids[i]) == x


def _state(first: PairView, va: TraceView, vb: TraceView) -> Located[PairView] | None:
    """A weight or buffer that differs: named at the first call of its module on each side."""
    ca = first_call(va, first.a.module)  # a packed tensor's rows: the module of the packed tensor
    cb = first_call(vb, first.b.module)
    if ca is None or cb is None:
        return None
    return Located(first, Side(ca, "state", None, ()), Side(cb, "state", None, ()))


def _backward(t: PairTable, first: PairView, va: TraceView, vb: TraceView) -> Located[PairView] | None:
    """A differing output gradient, the step's forward all agreeing: named at the call that used
    that output on each side (module docstring, 3)."""
    fwd = (t.col("step") == first.step) & t.role_mask(*_FWD)
    cp = first.call_pair
    if cp is None or not t.passed[fwd].all():
        return None
    a, b = consumer(va, cp.a, first.a.position), consumer(vb, cp.b, first.b.position)
    if a is None or b is None:
        return None
    return Located(first, Side(a, "backward", None, ()), Side(b, "backward", None, ()))

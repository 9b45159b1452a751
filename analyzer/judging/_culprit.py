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
2. **Each side.** Inside that call, a module recorded on one side only (HF's
   ``intermediate_act_fn``, ``mlp.act``) may have computed the differing value: a call
   whose tensor inputs are all values that agree (the same tensors as records of passing
   pairs) and one of whose outputs is a value that differs is named on that side instead;
   the innermost such call. Values are identified across records of one trace by dtype,
   size and statistics (a module's output and the next module's input are one tensor). An
   input no pair compares agrees when the other trace holds it (``found``: a dropout module
   fed by a functional activation on one side, the activation a module on the other); a call
   whose differing output the other trace holds as computed there (to rounding) is not it.
   Failing that, a call recorded on one side only whose output no record of the other side
   compares (a dropout written as a module on one side and inline on the other, a position
   table built by a module on one side only), run before the first differing value and fed
   only values that agree, is named: nothing checked it, and everything checked before it
   agrees. Only where no such call ran is the named pair's own (inline) code blamed. A lookup
   named on a side that returned its table's rows at ids nothing showed to agree hands the
   name on to the code that made the ids (``_lookups``).

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

from collections.abc import Container, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from padiff_trace import Kind, Record

from ..alignment._calls import Call, TraceView
from ._located import Located, PairResult, Side
from ._lookups import ids_maker
from ._onesided import (
    Key,
    Twin,
    chosen,
    found,
    holding,
    idle_random,
    made_by,
    odd_share,
    paired_parent,
    rearranged_apart,
    unchecked_calls,
    value_id,
)
from ._otherside import across, counterpart, level
from ._randomness import DRAWN, REPLAYED, random_inside
from ._rates import rates_apart
from ._shares import judge_batched, share_found, stack_found, with_ancestors

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
    found = Located(seen, _side(va, cp_best.a, fwd, "a", paired_a, weighted_a, twin_a),
                    _side(vb, cp_best.b, fwd, "b", paired_b, weighted_b, twin_b))
    found = counterpart(found, fwd, (va, vb), (cp_best.a, cp_best.b), (paired_a, paired_b))
    found = across(found) or level(found, cp_best.a, cp_best.b)
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


_MAX_BATCHED = 32  # unpaired calls holding weights judged block by block inside one named call


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
    ca = _first_call(va, first.a.module)  # a packed tensor's rows: the module of the packed tensor
    cb = _first_call(vb, first.b.module)
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
    a, b = _consumer(va, cp.a, first.a.position), _consumer(vb, cp.b, first.b.position)
    if a is None or b is None:
        return None
    return Located(first, Side(a, "backward", None, ()), Side(b, "backward", None, ()))


def _consumer(v: TraceView, call: Call, position: str) -> Call | None:
    """The innermost call that, after ``call`` in forward order, first received the output of
    ``call`` at ``position`` as one of its inputs; None when no recorded call did."""
    out = next((r for r in call.outputs if r.position == position), None)
    key = value_id(out) if out is not None else None
    if key is None:
        return None
    tree = v.tree(call.step)
    skip = {call.id} | {c.id for c in v.ancestors(call)} | {c.id for c in tree.descendants(call)}
    found: Call | None = None
    after = False
    for c in v.calls[call.step]:  # entry order: a call before the calls inside it
        if c.id == call.id:
            after = True
        if not after or c.id in skip or not any(value_id(r) == key for r in c.tensor_inputs()):
            continue
        if found is not None and found.id not in {x.id for x in v.ancestors(c)}:
            break  # past the first consumer's subtree
        found = c
    return found


def _agrees_inside(fwd: Sequence[PairResult], side: str, ids: Container[int], r: Record) -> bool:
    """Whether a pair of a call inside ``ids`` that agrees holds, on ``side``, the value of ``r``
    (the output of a call's last child, returned as it is)."""
    k = value_id(r)
    return k is not None and any(p.passed and getattr(p, side).call in ids and value_id(getattr(p, side)) == k for p in fwd)


def _held(other: TraceView, r: Record) -> bool:
    """Whether the other trace holds ``r``'s value: as it is, as a share of a larger value, or
    as blocks each a value of its own."""
    return found(other, r) or share_found(other, r) or stack_found(other, r)


def _partners(module: str, weighted: Mapping[str, set[str]]) -> set[str]:
    """The other side's modules holding the partners of the weights of ``module`` and of the
    modules inside it."""
    return {x for m, xs in weighted.items() if m == module or m.startswith(module + ".") for x in xs}


def _partner_never_called(c: Call, weighted: Mapping[str, set[str]], other: TraceView) -> bool:
    """Whether ``c``'s module holds weights whose partners sit in modules the other side never
    called (a norm its twin keeps but does not run: the other model feeds its MLP the first
    norm's output): the one-sided call is no culprit, the code that chose not to run its twin is."""
    partners = weighted.get(c.module, set())
    return bool(partners) and all(_first_call(other, m) is None for m in partners)


def _first_call(v: TraceView, module: str) -> Call | None:
    for step in sorted(v.calls):
        for c in v.calls[step]:
            if c.module == module:
                return c
    return None


def _side(v: TraceView, call: Call, fwd: Sequence[PairResult], side: str, paired: Container[int],
          weighted: Mapping[str, set[str]], twin: Twin) -> Side:
    """Side of the named pair: its own code, or a call inside recorded on this side only.
    ``fwd`` holds the step's forward pairs; ``side`` names this side's record of each ("a", "b");
    ``weighted``: this side's modules whose weights were compared with the other side's (-> the
    modules holding their partners);
    ``twin``: the other side of the pair."""
    inside = v.tree(call.step).descendants(call)
    ids = {c.id for c in inside} | {call.id}
    # values seen by the calls inside that only this side recorded: are they right or wrong?
    wanted = {k for c in inside if c.id not in paired for r in (*c.inputs, *c.outputs) if (k := value_id(r)) is not None}
    good: set[Key] = set()
    bad: set[Key] = set()
    first: Record | None = None
    against: Record | None = None  # first's partner: the other side's value
    first_pair: PairResult | None = None
    for p in fwd:
        r = getattr(p, side)
        if wanted:
            k = value_id(getattr(r, "base", r))
            if k is not None and k in wanted:
                (good if p.passed else bad).add(k)
        if not p.passed and r.call in ids and (first is None or r.seq < first.seq):
            first, against, first_pair = r, getattr(p, "b" if side == "a" else "a"), p
    disputed = good & bad  # right where one pair compares it, handed on differently where another does
    bad -= good  # a value that agrees with its partner anywhere is right: another pairing of it may
    # set it against another representation (an int 0/1 mask vs the additive mask of it)
    # a further call of a module whose other calls are paired (a shared ReLU called once more
    # after a residual add on this side, block 0's FFN called again for block 1): the two sides
    # call it a different number of times, which the enclosing code decides; it is not a module
    # of this side only, and its paired call checked its code
    repeated = {c.module for c in v.calls.get(call.step, ()) if c.id in paired}
    inside_own = [c for c in inside if c.id in paired or c.module not in repeated]
    alone = twin.one_sided(inside_own, weighted)
    # an input no pair compares (a one-sided module fed by inline code: paddle's activation
    # dropout after a functional GELU) is right when the other trace holds it (HF's activation module),
    # or holds it as a share of a larger value (q of a fused q|k|v projection: ``share_found``),
    # or holds its blocks as values of their own (each task's gate, batched here: ``stack_found``)
    asked: set[Key] = set()  # one value is looked for once, whichever calls received it
    for c in alone:
        for r in c.tensor_inputs():
            k = value_id(r)
            if k is None or k in good or k in bad or k in asked:
                continue
            asked.add(k)
            if _held(twin.view, r):
                good.add(k)
    # calls holding compared weights (or holding them in modules inside: one expert of a list)
    # that pair with no call (experts batched in one module on one side, a module each on the
    # other): their values judged block by block (``judge_batched``)
    holders = with_ancestors(set(weighted))
    batched = [c for c in inside_own if c.id not in paired and c.id != call.id and c.module and c.module in holders]
    if 0 < len(batched) <= _MAX_BATCHED:
        judge_batched(twin.view, batched, good, bad, value_id, lambda c: _partners(c.module, weighted),
                      lambda r: _held(twin.view, r), asked)
    made = made_by(v, inside_own, good - disputed, bad, paired, first)
    if made is not None and _partner_never_called(made, weighted, twin.view):
        made = None  # its twin holds the weights but never ran: the code around it chose what to run
    if made is not None and all(found(twin.view, r, strict=True) for r in made.tensor_outputs() if value_id(r) in bad):
        made = None  # what it returned is in the other trace as computed there: not where the values part
    if made is None:  # a window partition of this side's own that arranged its input otherwise
        made = rearranged_apart(inside_own, fwd, side, paired)
    idle = idle_random(v, call, alone, bad, twin)
    if idle is not None:  # a dropout off on this side only passed the value on: the draws say it is there
        return Side(idle, "one side only", None, ())
    if made is not None:  # inside it, a call nothing checked may have made the value it returns
        within = v.descendants(made)
        inside_made = tuple(unchecked_calls(v, call, [c for c in alone if c.id in within], good, bad, paired, first, twin.view,
                                            against))
        deeper = chosen(list(inside_made), alone=True)
        if len(deeper) == 1:
            return Side(deeper[0], "unverified", None, (), suspects=inside_made)
        return Side(made, "one side only", None, (), suspects=inside_made)
    agreed = {k for p in fwd if p.passed and (k := value_id(getattr(p, side))) is not None}
    suspects = unchecked_calls(v, call, alone, good, bad, paired, first, twin.view, against, agreed)
    unseen = chosen(suspects)
    if len(unseen) == 1:
        return Side(unseen[0], "unverified", first, (), suspects=tuple(suspects))
    if unseen:  # several unchecked calls side by side: the call holding them is what the values show
        return Side(call, "unchecked", first, (), unseen, suspects=tuple(suspects))
    share = odd_share(inside_own, paired, first, against)
    if share is not None:  # the first differing value put together from several calls' outputs
        return Side(share, "share", first, ())
    holder = holding(v, [c for c in inside_own if c.id not in paired], good - disputed, first)
    named = holder or call  # a call of this side's own holding the first differing value: its code made it
    fine = tuple(
        c for c in (v.tree(call.step).descendants(holder) if holder is not None else inside)
        if c.id in paired and (holder is not None or paired_parent(v, c, paired) is call)
        and (first is None or max((r.seq for r in c.outputs), default=0) < first.seq)
    )
    why = "own code" if first is None or first.call == named.id else "inline code"
    if (holder is None and first is not None and first_pair is not None and first.call == call.id
            and "shape mismatch: " in first_pair.reason and _agrees_inside(fwd, side, ids, first)):
        # the value the call returns agrees where another pair compares it (its last child's
        # output): the pair's outputs differ in shape only, and the difference comes later, from
        # the first call of this side's own that received it (an upsampling module against a
        # resize inline at the end of the other side's call)
        nxt = _consumer(v, call, first.position)
        if nxt is not None and nxt.id not in paired and not (nxt.module and nxt.module in holders):
            return Side(nxt, "handed on", None, ())
    return Side(named, why, first, fine)

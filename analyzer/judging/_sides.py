"""Each side of the named pair: its own code, or a call inside it recorded on this side only.

Inside the call the pair names (``_culprit``), a module recorded on one side only (HF's
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
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence

from padiff_trace import Record

from ..alignment._calls import Call, TraceView
from ._located import PairResult, Side
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
from ._shares import judge_batched, share_found, stack_found, with_ancestors

__all__ = ["consumer", "first_call", "side_of"]


_MAX_BATCHED = 32  # unpaired calls holding weights judged block by block inside one named call


def consumer(v: TraceView, call: Call, position: str) -> Call | None:
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
    return bool(partners) and all(first_call(other, m) is None for m in partners)


def first_call(v: TraceView, module: str) -> Call | None:
    for step in sorted(v.calls):
        for c in v.calls[step]:
            if c.module == module:
                return c
    return None


def side_of(v: TraceView, call: Call, fwd: Sequence[PairResult], side: str, paired: Container[int],
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
        nxt = consumer(v, call, first.position)
        if nxt is not None and nxt.id not in paired and not (nxt.module and nxt.module in holders):
            return Side(nxt, "handed on", None, ())
    return Side(named, why, first, fine)

"""Calls recorded on one side only, inside the pair named as the first divergence: which one
made the difference (``_culprit`` rule 2).

Two correct libraries draw module boundaries differently: an activation is a module on one
side and inline code on the other, a position table is built by a module of its own on one
side only. Such a call has no partner, so its values are judged by the values around it:

* ``made_by``: its inputs are values that agree and one of its outputs is a value that
  differs (values are identified within a trace by ``value_id``: dtype, size and statistics);
* ``unverified``: nothing on the other side compares what it returned, it ran before the
  first differing value, and everything compared before it agrees; unless the other trace
  holds that value (``found``), its weights were compared, or the other side calls a module
  of its type there too (``Twin``).
"""

from __future__ import annotations

import math
from collections.abc import Container, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from padiff_trace import Kind, Record
from padiff_trace.arrays import is_number
from padiff_trace.matching import CALL_CONTAINERS, PARAMETRIZED_UNDER, PLACEHOLDERS, RANDOM_LAYERS, canonical_type

from ..alignment._calls import Call, TraceView
from ..alignment._records import value_id
from ._boundary import RELATION_REL, agrees
from ._moving import MOVED_LIMIT, agrees_downstream, moves_data, sliced_into_good, slices_found
from ._moving import consumers as consumers_of
from ._randomness import OFF, random_inside
from ._reconcile import rearranged
from ._shares import concat_found, stack_found

__all__ = ["Key", "SAME_REL", "Twin", "chosen", "found", "holding", "idle_random", "made_by", "odd_share", "paired_parent", "slices_found", "placeholder_for", "side_by_side", "unchecked_calls", "value_id"]

Key = tuple[Any, ...]


@dataclass(frozen=True)
class Twin:
    """The other side of the named pair: its trace, its call, and its paired calls."""

    view: TraceView
    call: Call
    paired: Container[int]

    def one_sided(self, calls: list[Call], weighted: Container[str]) -> list[Call]:
        """Those of ``calls`` (this side's) that may be one-sided: not a module whose weights
        were compared (``weighted``), nor of a type that the other side's call also holds
        unpaired (moved, not one-sided: the enclosing code is what differs)."""
        inside = self.view.tree(self.call.step).descendants(self.call)
        twins = {canonical_type(c.module_type) for c in inside if c.id not in self.paired}
        return [c for c in calls if c.module not in weighted and canonical_type(c.module_type) not in twins
                and not _computes_a_compared_weight(c.module, weighted)]


def _computes_a_compared_weight(module: str, weighted: Container[str]) -> bool:
    """A parametrization of a layer whose weights were compared (weight norm's call computing
    ``g * v / |v|`` under ``<layer>.parametrizations.weight``): its value is that weight."""
    owner, sep, _ = module.partition(PARAMETRIZED_UNDER)
    return bool(sep) and (owner in weighted or f"{owner}{PARAMETRIZED_UNDER}" in weighted)


def made_by(v: TraceView, calls: list[Call], good: set[Key], bad: set[Key], paired: Container[int],
            first: Record | None = None) -> Call | None:
    """The innermost, earliest call only this side recorded whose tensor inputs all agree and
    one of whose outputs differs. An input no pair compared is unknown: it is allowed (an
    attention's mask), unless the first value that differs (``first``) was seen before the call
    began: the difference may have come in with the unknown input. A container that only calls
    its children (``CALL_CONTAINERS``) in which a paired call received that value is not named
    either: what made the difference is between its children."""
    hits = []
    for c in calls:
        if c.id in paired:
            continue
        # inputs whose statistics overflow (an additive mask of float32 minima) have no identity:
        # they neither confirm nor refute; the others must all be values that agree
        # an input no pair compared (a rotary table only this side passes) is unknown: it
        # neither confirms nor refutes; at least one input must agree and none differ
        ins = [k for r in c.tensor_inputs() if (k := value_id(r)) is not None]
        if not any(k in good for k in ins) or any(k in bad for k in ins):
            continue
        if not all(k in good for k in ins) and _seen_before(c, first):
            continue  # the difference was there before it began: it may have come in with the unknown input
        if canonical_type(c.module_type) in CALL_CONTAINERS and _checked_inside_differs(v, c, first, paired):
            continue  # a container that only calls its children is judged by them
        if any(value_id(r) in bad for r in c.tensor_outputs()):
            hits.append(c)
    if not hits:
        return None
    hit_ids = {c.id for c in hits}
    inner = [c for c in hits if not any(d.id in hit_ids for d in v.tree(c.step).descendants(c))]
    return min(inner, key=lambda c: min((r.seq for r in c.outputs), default=c.id))


def chosen(inner: list[Call], alone: bool = False) -> tuple[Call, ...]:
    """The call named among ``inner`` (``unchecked_calls``: the innermost calls only this side
    recorded, directly in ``call`` (inside no paired child: a child whose output agrees checked
    it), that ran before ``first`` (the first differing
    value inside ``call``), received no value that differs, and returned a new value that no
    record of the other side compares: nothing tells whether it is right, and everything
    compared before it agrees. The latest such call is named (the last computation nobody
    checked before the difference showed); a call that returns its input (dropout in eval) is
    not one, nor a container whose outputs are what calls inside it that only move data
    returned (an ``nn.Sequential`` ending in a ReLU), nor (left out by the caller) a call whose weights were compared: a q projection
    split from the other side's packed q|k|v computes on compared weights, nor a call whose
    type the other side also calls there unpaired (the same activation, called in another
    order: not one-sided, so the enclosing code is what differs). A value no pair
    compares may still be in the other trace: a rotary cos/sin table one library builds in
    each attention and the other once, passing it in; every output found there (``found``)
    verifies the call. A call that only moves data (``moves_data``) is not one either).

    Several such calls of one type that ran side by side (none received what another returned:
    a mixture's experts, each a module on this side, against one batched module on the other)
    are returned together: the values cannot say which of them, or the enclosing code that
    combines them, made the difference. Empty when there is none, and with ``alone`` where
    calls of several modules ran one after another (a solver's loop of unchecked layers inside a
    call of this side's own: the last of them is no better answer than that call; one module
    called again, a rotary module applied to q then k, stays one suspect)."""
    if not inner:
        return ()
    latest = inner[-1]
    together = side_by_side(latest, inner)
    if alone and len({c.module for c in inner}) > 1 and len(together) != len(inner):
        return ()  # a chain of several modules' calls; one module called again is one suspect
    return together or (latest,)


def unchecked_calls(v: TraceView, call: Call, calls: list[Call], good: set[Key], bad: set[Key],
                    paired: Container[int], first: Record | None, other: TraceView,
                    against: Record | None = None, agreed: set[Key] | None = None) -> list[Call]:
    """Every call ``chosen`` weighs, innermost, in the order they returned. A call whose every
    output is a share of ``first`` that the other side's value ``against`` (``first``'s partner)
    holds as well, slice by slice (``slices_found``), is checked by it: the fields one embedding
    module returned, set beside another's, agree where the other side's one module holds them."""
    hits = []
    consumers: dict[Key, list[Call]] | None = None  # built once, for the first call it is asked of
    for c in calls:
        parent = paired_parent(v, c, paired)
        if c.id in paired or parent is None or parent.id != call.id:
            continue
        ins = {k for r in c.tensor_inputs() if (k := value_id(r)) is not None}
        outs = {k for r in c.tensor_outputs() if (k := value_id(r)) is not None}
        if not outs or outs <= ins or ins & bad or outs & (good | bad):
            continue
        unchecked = {k for r in c.tensor_inputs() if is_number(r.dtype) and (k := value_id(r)) is not None} - good
        if unchecked and canonical_type(c.module_type) not in RANDOM_LAYERS:
            # fed numbers nothing checked (inline code made them): the difference may come in with
            # them. Not so ids and positions (exact data counted from shapes: a position table's
            # module fed an ``arange``), nor a dropout (a module on one side, ``F.dropout`` inline on
            # the other), whose rate is a setting of its own
            continue
        if outs <= _children_outputs(v, c):
            continue  # a container passing on what a data mover inside it returned: not computing either
        end = max((r.seq for r in c.outputs), default=-1)
        if first is not None and end > first.seq:
            continue
        if all(found(other, r) or stack_found(other, r) or concat_found(other, r) for r in c.tensor_outputs()
               if value_id(r) is not None) \
                or moves_data(c):
            continue  # the other trace holds what it returned (as it stands, or as values of its own set side by side)
        if consumers is None:
            consumers = consumers_of(v, call.step)
        if agrees_downstream(v, c, outs, good, consumers) or sliced_into_good(v, call, c, good | (agreed or set())):
            continue  # what it returned reaches a value that agrees, moved or as a slice of it (a concatenation)
        if against is not None and all(slices_found(r, against) for r in c.tensor_outputs()):
            continue
        hits.append((end, c))
    hit_ids = {c.id for _, c in hits}
    inner = [(end, c) for end, c in hits if not any(d.id in hit_ids for d in v.tree(c.step).descendants(c))]
    return [c for _, c in sorted(inner, key=lambda h: h[0])]  # in the order they returned


def holding(v: TraceView, alone: list[Call], good: set[Key], first: Record | None) -> Call | None:
    """The innermost call only this side recorded that holds the call of ``first`` (the first
    value that differs, an input of a paired call inside it) and whose tensor inputs all agree:
    its own code, between the children it calls, made the value (a stage module of one port whose
    counterpart is inline code in the other's root). A container that only calls its children
    (``CALL_CONTAINERS``: ``nn.Sequential``) has no such code: not it. None when there is none."""
    if first is None:
        return None
    hits = []
    for c in alone:
        if canonical_type(c.module_type) in CALL_CONTAINERS:
            continue
        ins = [k for r in c.tensor_inputs() if (k := value_id(r)) is not None]
        if ins and all(k in good for k in ins) and first.call in v.descendants(c):
            hits.append(c)
    hit_ids = {c.id for c in hits}
    inner = [c for c in hits if not any(d.id in hit_ids for d in v.tree(c.step).descendants(c))]
    return inner[0] if len(inner) == 1 else None


def idle_random(v: TraceView, call: Call, alone: list[Call], bad: set[Key], twin: Twin) -> Call | None:
    """A layer of this side's own that draws random numbers in training (``RANDOM_LAYERS``: a
    dropout) and passed on, unchanged, a value that differs, inside ``call``, in which this side
    drew no random number while the other side's paired call drew some: the layer was off (its
    module in eval mode, a rate of 0) where the other side's was on. The call that made the value
    it passed on is no better answer: nothing checks that value, and the draws say where the two
    sides part. None when the draws or the values say otherwise, or several such layers ran."""
    if _draws(v, call) or not _draws(twin.view, twin.call):
        return None
    idle = []
    for c in alone:
        outs = {k for r in c.tensor_outputs() if (k := value_id(r)) is not None}
        ins = {k for r in c.tensor_inputs() if (k := value_id(r)) is not None}
        if canonical_type(c.module_type) in RANDOM_LAYERS and outs and outs <= ins and outs & bad:
            idle.append(c)
    return idle[0] if len(idle) == 1 else None


def _draws(v: TraceView, call: Call) -> int:
    """Random draws recorded in ``call`` (its module or one inside it) in its step."""
    return sum(1 for r in random_inside(v, call) if r.position != OFF)


def placeholder_for(named: Call, differing: list[tuple[Record, Record]], v: TraceView, call: Call,
                    paired: Container[int]) -> Call | None:
    """The other side's placeholder (``PLACEHOLDERS``: ``nn.Identity``, put where a module is
    configured off) inside ``call`` that returned the value compared with what ``named`` (a call
    of one side's own that made the differing value) returned: it stands at that call's place (a
    dropout module against timm's ``nn.Identity`` for a rate of 0). ``differing``: the failing
    pairs as (named's side, the other side). Another module of the other side's own there
    (paddle's dropout module after HF's activation module) is no such stand-in: None."""
    keys = {k for r in named.tensor_outputs() if (k := value_id(r)) is not None}
    want = {k for x, y in differing if value_id(x) in keys if (k := value_id(y)) is not None}
    if not want:
        return None
    tree = v.tree(call.step)
    hits = [c for c in tree.descendants(call) if c.id not in paired and canonical_type(c.module_type) in PLACEHOLDERS
            and any(value_id(r) in want for r in c.tensor_outputs())]
    hit_ids = {c.id for c in hits}
    inner = [c for c in hits if not any(d.id in hit_ids for d in tree.descendants(c))]
    return inner[-1] if inner else None


def _seen_before(c: Call, first: Record | None) -> bool:
    """Whether ``first`` (a value that differs) was recorded before ``c`` began."""
    start = min((r.seq for r in c.inputs), default=None)
    return first is not None and start is not None and first.seq < start


def _checked_inside_differs(v: TraceView, c: Call, first: Record | None, paired: Container[int]) -> bool:
    """Whether ``first`` (a value that differs) was seen before ``c`` began, or as an input of a
    paired call inside it."""
    if first is None:
        return False
    if _seen_before(c, first):
        return True
    if first.kind == Kind.MODULE_OUTPUT or first.call not in paired:
        return False
    return any(d.id == first.call for d in v.tree(c.step).descendants(c))


def _children_outputs(v: TraceView, c: Call) -> set[Key]:
    """The values calls inside ``c`` that only move data (``moves_data``: a pad, a crop) returned."""
    return {k for d in v.tree(c.step).descendants(c) if moves_data(d)
            for r in d.tensor_outputs() if (k := value_id(r)) is not None}


def side_by_side(latest: Call, calls: list[Call]) -> tuple[Call, ...]:
    """``latest`` and the other calls of its type in ``calls``, in call order, when they are calls
    of several modules and none received a value another returned (parallel branches, not a
    chain); empty otherwise."""
    kind = canonical_type(latest.module_type)
    group = sorted((c for c in calls if canonical_type(c.module_type) == kind), key=lambda c: c.id)
    if len({c.module for c in group}) < 2:
        return ()  # one module called again (a table built for the key term, then the value term): one suspect
    outs = [{k for r in c.tensor_outputs() if (k := value_id(r)) is not None} for c in group]
    for i, c in enumerate(group):
        ins = {k for r in c.tensor_inputs() if (k := value_id(r)) is not None}
        if any(ins & o for j, o in enumerate(outs) if j != i):
            return ()
    return tuple(group)


def rearranged_apart(calls: list[Call], fwd: Sequence[Any], side: str, paired: Container[int]) -> Call | None:
    """The first call of ``calls`` (this side's, paired with none) that hands on its input's
    elements in another order (a partition into windows, a permute: input and output of one
    value identity, ``value_id``, but not equal element by element) where a pair comparing that
    value before the call agrees and one comparing it after the call differs: the arrangement
    it made is where the two sides part. Identity cannot tell such a call's input from its
    output, so the order of the records decides. ``fwd``: the step's forward pairs; ``side``
    names this side's record of each ("a", "b")."""
    compared: dict[Key, list[tuple[int, bool]]] | None = None  # a value -> (seq, agreed) of the pairs holding it
    for c in sorted((c for c in calls if c.id not in paired), key=lambda c: min((r.seq for r in c.outputs), default=c.id)):
        outs, ins = c.tensor_outputs(), c.tensor_inputs()
        if len(outs) != 1 or not ins:
            continue
        out = outs[0]
        k = value_id(out)
        src = next((r for r in ins if value_id(r) == k), None)
        if k is None or src is None or not out.has_data or not src.has_data or out.numel > MOVED_LIMIT:
            continue
        if compared is None:  # built once, for the first call that moves a value
            compared = {}
            for p in fwd:
                r = getattr(getattr(p, side), "base", getattr(p, side))
                if (kr := value_id(r)) is not None:
                    compared.setdefault(kr, []).append((r.seq, p.passed))
        seen = compared.get(k, [])
        if not (any(ok and q <= src.seq for q, ok in seen) and any(not ok and q >= out.seq for q, ok in seen)):
            continue
        x, y = np.asarray(src.read()).ravel(), np.asarray(out.read()).ravel()
        if x.shape == y.shape and not np.array_equal(x, y, equal_nan=True):
            return c
    return None


_STAT_REL = 1e-3  # statistics this close mark a candidate; the values decide


SAME_REL = 1e-6  # ``found(strict=True)``: the same computation in the other framework, no more than rounding


def found(other: TraceView, r: Record, strict: bool = False) -> bool:
    """The value of ``r`` is a forward value of the same step in the other trace, to within
    ``RELATION_REL`` in relative L2: the same shape once axes of size 1 are dropped, one that
    broadcasts to it (a table built once per batch row), or the same elements in another layout
    (``_reconcile.rearranged``: a context returned as ``[b, heads, s, d]`` by one library and
    ``[b, s, heads * d]`` by the other); or a weight of that step (a weight-normed layer's
    weight, computed by torch's parametrization in a call of its own, is the other side's
    plain weight), or the leading corner of a buffer (``_corner_of``). Statistics select the
    candidates. ``strict``: to within ``SAME_REL`` (one computation's fp32 rounding), elements
    as they are (a subtle bug's difference, ~1e-5, is not found)."""
    if not r.has_data:
        return False
    rel = SAME_REL if strict else RELATION_REL
    want = r.stats
    scale = max(abs(want["min"]), abs(want["max"]), 1e-30)
    shape = tuple(n for n in r.shape if n != 1)
    x: np.ndarray | None = None
    weights = tuple(other.weights.get(r.step, {}).values())  # a weight one side computes in a call of its own
    for y in (*(y for c in other.calls.get(r.step, ()) for y in (*c.inputs, *c.outputs)), *weights):
        if not y.is_tensor or not y.has_data or y.numel == 0:
            continue
        if y.kind == Kind.BUFFER and not strict and _corner_of(r, y):
            return True
        got = y.stats
        if not all(abs(got.get(k, math.nan) - want[k]) <= _STAT_REL * scale for k in ("min", "max", "mean")):
            continue  # (a statistic not stored is nan: no candidate)
        if x is None:
            x = np.asarray(r.read(), dtype=np.float64).reshape(shape)
        z = np.asarray(y.read(), dtype=np.float64)
        z = z.reshape(tuple(n for n in z.shape if n != 1))
        if x.size == z.size and x.shape != z.shape:  # the same value in another layout
            xr = rearranged(x, z.shape) if not strict else None
            if xr is not None and agrees(xr, z, rel):
                return True
            continue
        try:
            xb = np.broadcast_to(x, z.shape) if x.size <= z.size else x
            zb = z if x.size <= z.size else np.broadcast_to(z, x.shape)
        except ValueError:
            continue
        if agrees(xb, zb, rel):
            return True
    return False


_CORNER_LIMIT = 1 << 24  # elements: larger tables are not read for this


def _corner_of(r: Record, table: Record) -> bool:
    """``r`` is the leading corner of a larger buffer of the other side (a relative-position
    table one library keeps for the longest sequence and the other computes for this one)."""
    if len(table.shape) != len(r.shape) or table.numel <= r.numel or table.numel > _CORNER_LIMIT:
        return False
    if any(n < k for n, k in zip(table.shape, r.shape)):
        return False
    want, whole = r.stats, table.stats  # a corner lies within the table's range: read only then
    slack = 1e-3 * max(abs(whole["min"]), abs(whole["max"]), 1e-30)
    if want["min"] < whole["min"] - slack or want["max"] > whole["max"] + slack:
        return False
    corner = np.asarray(table.read(), np.float64)[tuple(slice(0, k) for k in r.shape)]
    return agrees(corner, np.asarray(r.read(), np.float64))


def paired_parent(v: TraceView, c: Call, paired: Container[int]) -> Call | None:
    return next((x for x in v.ancestors(c) if x.id in paired), None)


def odd_share(calls: list[Call], paired: Container[int], first: Record | None, against: Record | None) -> Call | None:
    """Where the first differing value (``first``) holds the outputs of calls only this side
    recorded, each a share of it slice by slice (``slices_found``: two embedding modules' fields
    side by side; one upsampler's map beside a paired conv's), and the other side's value
    (``against``) holds every share but one's, that call: its slices are where the values part."""
    if first is None or against is None:
        return None
    shares = [c for c in calls if c.id not in paired and c.tensor_outputs()
              and all(r.numel < first.numel and slices_found(r, first) for r in c.tensor_outputs())]
    if not shares:
        return None
    odd = [c for c in shares if not all(slices_found(r, against) for r in c.tensor_outputs())]
    return odd[0] if len(odd) == 1 else None


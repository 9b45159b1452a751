"""What a comparison measures: every ``PlanItem`` (role, A record, B record, permutation, call pair).

Module inputs and outputs (and their gradients) through the call pairs, weights and
parameter gradients through the weight map, probes by name and occurrence, losses by step,
then op-level records. ``compare()`` and the float64 referee (``_referee``) plan alike.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from padiff_trace import Kind, Record
from padiff_trace.matching import WeightMap

from ._calls import Call, TraceView, first_step
from ._item import PlanItem
from ._joined import split_layers, whole_items
from ._layout_flow import LayoutFlow
from ._ops import PRODUCER_ROLES, Links, OpCall, Producers, collect_ops, index_records, op_todo
from ._pairing import Alignment, CallPair, pair_leaves
from ._records import RecordLike, ReshapedView, value_id
from ._scope_layouts import ScopeLayouts
from ._slices import Regrouped, regroup_orders
from ._weights import pair_by_map

__all__ = ["PlanItem", "plan"]

_Base = dict[int, tuple[int, "tuple[int, ...] | None"]]  # producer pairs: A seq -> (B seq, perm)


def plan(
    al: Alignment, va: TraceView, vb: TraceView, wm: WeightMap | None, op_names: dict[str, str] | None = None
) -> Iterator[PlanItem]:
    """Every (role, A record, B record, permutation, call pair) to compare, all steps, made
    as they are consumed (records are built from the index on the way: a list of them all
    would hold ~500 bytes a pair)."""
    hidden_a = {c.key for c in al.hidden_a}
    ops_a, ops_b = collect_ops(va.trace), collect_ops(vb.trace)
    op_calls: list[tuple[Call, Call, CallPair]] = []  # planned last: their operands come from the module pairs
    base: _Base = {}  # producer pairs the op items link to (A seq -> B seq, perm)
    with_ops = bool(ops_a and ops_b)
    in_order = all(x.a.id < y.a.id for x, y in itertools.pairwise(al.pairs))
    aligned = first_step(va) if first_step(va) == first_step(vb) and in_order else None
    keyed: dict[tuple[str, int], CallPair] | None = None
    # outputs (fused q|k|v packed two ways) and inputs (features concatenated in another order) in B's order
    regrouped, regrouped_in = regroup_orders(wm, _weight_shapes(va))
    same_value = _regrouped_values(al, regrouped_in)
    splits = split_layers(wm)  # one layer over a concatenation against one layer per part
    flows: defaultdict[int, LayoutFlow] = defaultdict(LayoutFlow)  # layouts carried through framework layers
    scopes: defaultdict[int, ScopeLayouts] = defaultdict(ScopeLayouts)  # layouts kept inside a call pair
    for step, calls in va.calls.items():
        if step == aligned and _in_id_order(calls):
            found = _by_order(calls, al.pairs)
        else:  # another step: the aligned step's pairs by module and call index
            keyed = keyed if keyed is not None else al.by_key()
            found = _by_key(calls, keyed, vb.calls.get(step, []))
        for ca, cp, cb in found:
            if hidden_a and ca.key in hidden_a:
                continue
            pair = cp if ca is cp.a else CallPair(ca, cb, cp.how, cp.entry)
            role_in = "model_input" if ca.parent == -1 and any(r.kind == Kind.MODEL_INPUT for r in ca.inputs) else "input"
            whole = whole_items(splits, pair, (calls, vb.calls.get(step, [])), (va, vb), role_in) if splits else None
            if whole is not None:
                if with_ops:
                    op_calls.append((ca, cb, pair))
                yield from _read_in_order(whole, regrouped.get((ca.module, cb.module)) if regrouped else None)
                continue
            if (ca.module, cb.module) in splits:  # a part's layer against the whole layer whose other parts'
                continue  # calls do not line up (a projection computed once before a loop): a share, not compared
            ins, _, _ = pair_leaves(ca.inputs, cb.inputs, cp.perm)
            outs, _, _ = pair_leaves(ca.outputs, cb.outputs, cp.perm)
            flow = flows[step]
            ins = flow.inputs(pair, ins)
            outs = flow.outputs(pair, ins, outs)
            read_ins = scopes[step].inputs(pair, ins)  # a value one side reshaped: the layout around it
            read_outs = ScopeLayouts.outputs(read_ins, outs)
            items: list[PlanItem] = []
            order = regrouped_in.get((ca.module, cb.module)) if regrouped_in else None
            for x0, y, p in read_ins:
                xi: RecordLike = x0
                gxi: RecordLike | None = va.grads_in.get((ca.id, x0.position))
                gxi, gyi = _viewed(gxi, x0), _viewed(vb.grads_in.get((cb.id, y.position)), y)
                read_as = _read_as(order, same_value, x0, y)
                axis = _regroup_axis(x0, y, p, read_as) if read_as is not None else None
                if read_as is not None and axis is not None and isinstance(x0, Record):
                    xi = Regrouped(x0, read_as, axis)
                    gxi = Regrouped(gxi, read_as, axis) if isinstance(gxi, Record) else gxi
                items.append(PlanItem(role_in, xi, y, p, pair))
                if gxi is not None and gyi is not None:
                    items.append(PlanItem("grad_input", gxi, gyi, p, pair))
            order = regrouped.get((ca.module, cb.module)) if regrouped else None
            for x0, y, p in read_outs:
                xo: RecordLike = x0
                gxo: RecordLike | None = _viewed(va.grads_out.get((ca.id, x0.position)), x0)
                gy = _viewed(vb.grads_out.get((cb.id, y.position)), y)
                read_as = _read_as(order, same_value, x0, y)
                axis = _regroup_axis(x0, y, p, read_as) if read_as is not None else None
                if read_as is not None and axis is not None and isinstance(x0, Record):
                    xo = Regrouped(x0, read_as, axis)
                    gxo = Regrouped(gxo, read_as, axis) if isinstance(gxo, Record) else gxo
                items.append(PlanItem("output", xo, y, p, pair))
                if gxo is not None and gy is not None:
                    items.append(PlanItem("grad_output", gxo, gy, p, pair))
            if with_ops:
                op_calls.append((ca, cb, pair))
                _link(base, items)
            yield from items
    weighted: list[PlanItem] = []
    for step in sorted(set(va.weights) & set(vb.weights)):
        for wa, wb, p in pair_by_map(wm, va.weights[step], vb.weights[step])[0]:
            weighted.append(PlanItem("param" if wa.kind == Kind.PARAM else "buffer", wa, wb, p, None))
    for step in sorted(set(va.param_grads) & set(vb.param_grads)):
        for ga, gb, p in pair_by_map(wm, va.param_grads[step], vb.param_grads[step], va.weights.get(step),
                                     vb.weights.get(step))[0]:
            weighted.append(PlanItem("param_grad", ga, gb, p, None))
    if with_ops:
        _link(base, weighted)
    yield from weighted
    for step in sorted(set(va.probes) & set(vb.probes)):
        pb = vb.probes[step]
        for key, x in va.probes[step].items():
            if key in pb:
                yield PlanItem("probe", x, pb[key], None, None)
    for step in sorted(set(va.losses) & set(vb.losses)):
        for x, y in zip(va.losses[step], vb.losses[step]):
            yield PlanItem("loss", x, y, None, None)
    if with_ops:
        yield from plan_ops(op_calls, (va, vb), (ops_a, ops_b), base, op_names)


_ValueKey = tuple[object, ...]


def _read_as(order: np.ndarray | None, same: Mapping[tuple[_ValueKey, _ValueKey], np.ndarray], x: RecordLike,
             y: RecordLike) -> np.ndarray | None:
    """The order to read a call's value in (``regroup_orders``), for records read as stored."""
    if not (isinstance(x, Record) and isinstance(y, Record)):
        return None
    return order if order is not None else _value_order(same, x, y)


def _viewed(grad: RecordLike | None, value: RecordLike) -> RecordLike | None:
    """A value's gradient seen as the value is (``ReshapedView``: read in the layout around it)."""
    if isinstance(value, ReshapedView) and isinstance(grad, Record) and grad.numel == value.numel:
        return ReshapedView(grad, value.shape)
    return grad




def _regrouped_values(al: Alignment, regrouped_in: Mapping[tuple[str, str], np.ndarray]
                      ) -> dict[tuple[_ValueKey, _ValueKey], np.ndarray]:
    """(A value, B value) -> the order of a call pair's input read in another order
    (``regroup_orders``): the same two values elsewhere (the output of the module that made
    them, the input of a container passing them on) are read in that order too."""
    out: dict[tuple[_ValueKey, _ValueKey], np.ndarray] = {}
    if not regrouped_in:
        return out
    for cp in al.pairs:
        order = regrouped_in.get((cp.a.module, cp.b.module))
        if order is None:
            continue
        ins, _, _ = pair_leaves(cp.a.inputs, cp.b.inputs, cp.perm)
        for x, y, p in ins:
            kx, ky = value_id(x), value_id(y)
            if kx is not None and ky is not None and _regroupable(x, y, p, order):
                out.setdefault((kx, ky), order)
    return out


def _value_order(same: Mapping[tuple[_ValueKey, _ValueKey], np.ndarray], x: Record, y: Record) -> np.ndarray | None:
    if not same:
        return None
    kx, ky = value_id(x), value_id(y)
    return same.get((kx, ky)) if kx is not None and ky is not None else None


def _regroup_axis(x: RecordLike, y: RecordLike, perm: tuple[int, ...] | None, order: np.ndarray) -> int | None:
    """The axis of ``x`` read in ``order``: the last (``_regroupable``), else the channel axis of
    a channels-first map (a convolution's output, ``[N, C, ...]``); None where neither fits."""
    if _regroupable(x, y, perm, order):
        return -1
    n = len(order)
    if perm is None and len(x.shape) >= 3 and tuple(x.shape) == tuple(y.shape) and x.shape[1] == n:
        return 1
    return None


def _regroupable(x: RecordLike, y: RecordLike, perm: tuple[int, ...] | None, order: object) -> bool:
    """A record whose last axis is the regrouped one, laid out as the other side's (the same
    element count, the same last axis; leading axes may split tokens otherwise)."""
    n = len(order)  # type: ignore[arg-type]
    return (perm is None and x.shape[-1:] == (n,) and y.shape[-1:] == (n,)
            and int(np.prod(x.shape)) == int(np.prod(y.shape)))


def _read_in_order(items: list[PlanItem], order: np.ndarray | None) -> list[PlanItem]:
    """A layer's items with A's output and its gradient read in ``order`` (``regroup_orders``:
    a layer over a concatenation, its output channels gates in another order than B's)."""
    if order is None:
        return items
    out = []
    for it in items:
        axis = _regroup_axis(it.a, it.b, it.perm, order) if it.role in ("output", "grad_output") else None
        out.append(it._replace(a=Regrouped(it.a, order, axis)) if isinstance(it.a, Record) and axis is not None else it)
    return out


def _weight_shapes(view: TraceView) -> dict[str, tuple[int, ...]]:
    """A's weights (the first recorded step) by full name -> their shapes."""
    if not view.weights:
        return {}
    recs = view.weights[min(view.weights)].values()
    return {r.tensor_name: tuple(r.shape) for r in recs}


def _link(base: _Base, items: list[PlanItem]) -> None:
    for it in items:
        if it.role in PRODUCER_ROLES and isinstance(it.a, Record) and isinstance(it.b, Record):
            base[it.a.seq] = (it.b.seq, it.perm)


def plan_ops(
    calls: Sequence[tuple[Call, Call, CallPair]],
    views: tuple[TraceView, TraceView],
    ops: tuple[dict[int, list[OpCall]], dict[int, list[OpCall]]],
    base: Mapping[int, tuple[int, tuple[int, ...] | None]],
    extra: Mapping[str, str] | None = None,
) -> list[PlanItem]:
    """Op comparison items of every paired module call ``(call A, call B, call pair)``;
    ``base`` (A seq -> B seq, perm of the module-level producer pairs) says which producers pair."""
    children = tuple(_children(v) for v in views)
    weights = tuple(index_records(r for step in v.weights.values() for r in step.values()) for v in views)
    out: list[PlanItem] = []
    for ca, cb, cp in calls:
        oa, ob = ops[0].get(ca.id, []), ops[1].get(cb.id, [])
        if not oa or not ob:
            continue
        pa = Producers(_visible(ca, children[0]), oa, weights[0])
        pb = Producers(_visible(cb, children[1]), ob, weights[1])
        out += op_todo(oa, ob, cp, extra, Links(base, oa, ob, (pa, pb)))
    return out


def _children(view: TraceView) -> dict[int, list[Call]]:
    kids: dict[int, list[Call]] = defaultdict(list)
    for calls in view.calls.values():
        for c in calls:
            kids[c.parent].append(c)
    return kids


def _visible(call: Call, children: dict[int, list[Call]]) -> list[Record]:
    """What the ops of ``call`` can read besides weights: its inputs, the outputs of the calls inside it."""
    return [*call.inputs, *(o for c in children.get(call.id, []) for o in c.outputs)]


def _in_id_order(calls: Sequence[Call]) -> bool:
    return all(x.id < y.id for x, y in itertools.pairwise(calls))


def _by_order(calls: Sequence[Call], pairs: Sequence[CallPair]) -> Iterator[tuple[Call, CallPair, Call]]:
    """(A call, its pair, B call) of the aligned step: both lists in A's id order, walked side
    by side (dicts by key over every call held ~100 bytes a call for the whole comparison)."""
    j = 0
    for ca in calls:
        while j < len(pairs) and pairs[j].a.id < ca.id:
            j += 1
        if j < len(pairs) and pairs[j].a is ca:
            yield ca, pairs[j], pairs[j].b


def _by_key(
    calls: Sequence[Call], keyed: Mapping[tuple[str, int], CallPair], calls_b: Sequence[Call]
) -> Iterator[tuple[Call, CallPair, Call]]:
    """(A call, the aligned pair of its module and call index, B's call of that step)."""
    b_by_key = {c.key: c for c in calls_b}
    for ca in calls:
        cp = keyed.get(ca.key)
        cb = b_by_key.get(cp.b.key) if cp is not None else None
        if cp is not None and cb is not None:
            yield ca, cp, cb

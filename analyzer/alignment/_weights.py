"""Weights and parameter gradients paired through the weight map (never through call pairs).

The map comes from the same engine the recorder's ``--weights-from`` uses
(``padiff_trace.matching._weightmatch``), run on the step-0 weights of both traces with the same
mapping pins, so a comparison pairs exactly the tensors a transfer copied.
"""

from __future__ import annotations

from collections import abc

import numpy as np

from padiff_trace import Record
from padiff_trace.matching import (
    Mapping,
    SidedMapping,
    WeightMap,
    WeightPair,
    depth_as_b,
    depth_order,
    in_call_order,
    inverse_perm,
    mapping_pins,
    mark_depths,
    mark_offsets,
    match_weights,
    set_from_weight,
    side_from_records,
    summed_groups,
    traced_offset,
    weight_from,
    weight_grad_from,
    with_observed_layouts,
)

from ._calls import TraceView, first_step, shape_sig
from ._computed import ComputedWeight
from ._slices import RowSlice

__all__ = ["WeightLike", "trace_weight_map", "pair_by_map"]

WeightLike = Record | RowSlice
_Pair = tuple[WeightLike, WeightLike, "tuple[int, ...] | None"]


def trace_weight_map(va: TraceView, vb: TraceView, mapping: Mapping | SidedMapping | None = None,
                     call_order: bool = False) -> WeightMap | None:
    """The weight map between the first recorded weights of both traces (None if either has none);
    ``mapping`` pins what it names (a ``Mapping`` is oriented by the traces' frameworks). With
    ``call_order`` both sides' tensors are taken in the order their modules are first called
    (``in_call_order``) instead of registration order, the order ``record --weights-from`` has."""
    if not va.weights or not vb.weights:
        return None
    ra = sorted(va.weights[min(va.weights)].values(), key=lambda r: r.seq)
    rb = sorted(vb.weights[min(vb.weights)].values(), key=lambda r: r.seq)
    # A's layouts as its recorded calls show them, as the recorder's --weights-from saw them
    side_a = with_observed_layouts(va.trace, side_from_records(ra, dict(va.trace.meta)))
    side_b = side_from_records(rb, dict(vb.trace.meta))
    if call_order:
        side_a, side_b = in_call_order(side_a, *_first_calls(va)), in_call_order(side_b, *_first_calls(vb))
    wm = match_weights(side_a, side_b, *mapping_pins(mapping, side_a, side_b))
    # a norm's scale written by the transfer as the other's plus one (``matching._offsets``)
    by_a, by_b = {r.tensor_name: r for r in ra}, {r.tensor_name: r for r in rb}
    mark_offsets(wm, side_a.tensors, side_b.tensors,
                 lambda p: traced_offset(by_a[p.a].read(), by_b[p.b].read()) if p.a in by_a and p.b in by_b else 0.0)
    # a kernel over one side's pixel phases against the other's strided one (``matching._depth``)
    mark_depths(wm, lambda side, t, r: depth_order((va if side == "a" else vb).trace, t, r))
    return wm


_Shapes = tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]


def _first_calls(v: TraceView) -> tuple[dict[str, int], dict[str, _Shapes]]:
    """Module path -> the rank of its first forward call in the first step with calls, and ->
    the shapes that call took and returned."""
    ranks: dict[str, int] = {}
    shapes: dict[str, _Shapes] = {}
    for c in sorted(v.calls.get(first_step(v), []), key=lambda c: c.id):
        if c.module not in ranks:
            ranks[c.module] = len(ranks)
            shapes[c.module] = (shape_sig(c.inputs), shape_sig(c.outputs))
    return ranks, shapes


def _effective(side: str, name: str, r: Record, by_name: dict[str, Record],
               params: abc.Mapping[tuple[str, str], Record] | None, skipped: list[tuple[str, str, str]]) -> Record:
    """``r`` itself, or for a weight-normed v paired with a plain weight: the weight it computes
    (``params`` None: ``r`` is a weight) or the gradient of that weight (``r`` is v's gradient)."""
    g = set_from_weight(side, name, skipped)
    if g is None or g not in by_name:
        return r
    if params is None:
        gr = by_name[g]
        return ComputedWeight(r, lambda: weight_from(gr.read(), r.read()), "g * v / |v|")  # type: ignore[return-value]
    weights = {x.tensor_name: x for x in params.values()}
    v, gw, dg = weights.get(name), weights.get(g), by_name[g]
    if v is None or gw is None:
        return r
    return ComputedWeight(r, lambda: weight_grad_from(gw.read(), v.read(), dg.read(), r.read()),  # type: ignore[return-value]
                          "the gradient of g * v / |v|")


def _in_log_space(p: WeightPair, ra: Record, rb: Record, params_a: abc.Mapping[tuple[str, str], Record] | None,
                  params_b: abc.Mapping[tuple[str, str], Record] | None) -> tuple[Record, Record]:
    """A pair whose one side keeps the other's values as their logarithm (``WeightPair.logged``):
    the weights compared as ``exp`` of the log side; the gradients as the log side's against the
    other's times its value (``dL/dlog t = t dL/dt``), the value read from that step's weights
    (``params_*``; not found: the pair as it stands)."""
    log_a = p.logged == "a"
    log_r, plain_r = (ra, rb) if log_a else (rb, ra)
    params = params_b if log_a else params_a
    if params is None:
        seen = ComputedWeight(log_r, lambda: np.exp(log_r.read()), "exp: kept as the logarithm of the other's")
        return (seen, rb) if log_a else (ra, seen)  # type: ignore[return-value]
    value = {x.tensor_name: x for x in params.values()}.get(p.b if log_a else p.a)
    if value is None:
        return ra, rb
    seen = ComputedWeight(plain_r, lambda: plain_r.read() * value.read(), "times the value: the gradient of its logarithm")
    return (ra, seen) if log_a else (seen, rb)  # type: ignore[return-value]


def _plus(r: Record, offset: float) -> Record:
    """A's weight as B keeps it: its values plus ``offset`` (``WeightPair.offset``)."""
    return ComputedWeight(r, lambda: (r.read() + offset).astype(r.read().dtype),  # type: ignore[return-value]
                          f"{offset:+g}: the other side keeps the norm's scale as this side's {offset:+g}")


def _as_b_kernel(p: WeightPair, ra: WeightLike, rb: WeightLike) -> Record:
    """A's kernel (or its gradient) in B's layout where one is over pixel phases (``WeightPair.depth``)."""
    return ComputedWeight(ra, lambda: depth_as_b(p, np.asarray(ra.read())), "as the kernel over pixel phases the "  # type: ignore[arg-type,return-value]
                          "other side keeps" if p.depth is not None and p.depth[0] == "b" else "as the strided kernel the other side keeps",
                          shape=tuple(rb.shape))


def _summed_weights(wm: WeightMap | None) -> dict[WeightPair, list[WeightPair]]:
    """Like ``_tied``, for the weights of summed groups (``summed_groups``: one bias against the
    biases of the parts its weight is cut into): the one tensor is the sum of the others. Their
    gradients are each the one's gradient, compared pair by pair."""
    out: dict[WeightPair, list[WeightPair]] = {}
    for _, ps in summed_groups(wm.pairs) if wm is not None else []:
        out.update({p: [] for p in ps})
        out[ps[0]] = ps
    return out


def _tied(wm: WeightMap | None) -> dict[WeightPair, list[WeightPair]]:
    """Whole pairs of one tensor with several of the other side (an embedding one side ties to its
    output projection, ``tied``, or a mapping file pairs so): each pair of such a group -> the group for its first pair, [] for
    the rest. The tied tensor's gradient is the sum of the other side's tensors' gradients."""
    groups: dict[tuple[str, str], list[WeightPair]] = {}
    for p in wm.pairs if wm is not None else []:
        if p.indexed:
            continue
        # whole on the side that keeps one tensor; the other side's tensors whole, or the parts of
        # one packed tensor (a projection one side shares, the other packs twice: ``pair_last_shared``)
        if p.a_part is None and (p.b_part is None or p.how in ("tied", "copies", "mapping")):
            groups.setdefault(("a", p.a), []).append(p)
        if p.b_part is None and (p.a_part is None or p.how in ("tied", "copies", "mapping")):
            groups.setdefault(("b", p.b), []).append(p)
    out: dict[WeightPair, list[WeightPair]] = {}
    for ps in groups.values():
        # a mapping file pairing one tensor whole with several says the same (the run's own
        # pairing, written out and read back: its ``how`` is "mapping")
        if len(ps) > 1 and any(p.how in ("tied", "copies", "mapping") for p in ps):
            out.update({p: [] for p in ps})
            out[ps[0]] = ps
    return out


def _summed(group: list[WeightPair], by_a: dict[str, Record], by_b: dict[str, Record], what: str,
            why: str) -> _Pair | None:
    """The one tensor of a group (its gradient, for a tied one) against the sum of its
    counterparts', in the layout of the first counterpart (None when a record is missing);
    ``what`` says what the sum is of ("the gradients of ", ""), ``why`` why it is one tensor there."""
    one_a = len({p.a for p in group}) == 1
    one, many = (by_a, by_b) if one_a else (by_b, by_a)
    r = one.get(group[0].a if one_a else group[0].b)
    rs = [many.get(p.b if one_a else p.a) for p in group]
    if r is None or any(x is None for x in rs):
        return None
    if any((p.b_part if one_a else p.a_part) is not None for p in group):
        return _summed_parts(group, r, rs, one_a, what, why)
    # each pair's relative_perm takes A's layout into B's: bring every counterpart into the first's
    perms = [p.relative_perm for p in group]

    def to_first(x: np.ndarray, i: int) -> np.ndarray:
        pi, p0 = perms[i], perms[0]
        if one_a:  # B_i -> A's layout -> B_0's
            x = np.transpose(x, inverse_perm(pi)) if pi is not None else x
            return np.transpose(x, p0) if p0 is not None else x
        x = np.transpose(x, pi) if pi is not None else x  # A_i -> B's layout -> A_0's
        return np.transpose(x, inverse_perm(p0)) if p0 is not None else x

    first = rs[0]
    assert first is not None
    said = f"the sum of {what}" + ", ".join(x.module or x.position for x in rs if x is not None) + f" ({why})"

    def add() -> np.ndarray:
        out = np.zeros(first.shape, np.float64)
        for i, x in enumerate(rs):
            assert x is not None
            out += to_first(np.asarray(x.read(), np.float64), i)
        return out

    total = ComputedWeight(first, add, said)
    if one_a:
        return r, total, perms[0]  # type: ignore[return-value]
    return total, r, perms[0]  # type: ignore[return-value]


def _summed_parts(group: list[WeightPair], r: Record, rs: list[Record | None], one_a: bool, what: str, why: str) -> _Pair:
    """``_summed`` where the other side's tensors are the parts of one packed tensor: each part
    in the canonical layout, summed, against the one tensor taken into that layout."""
    views = [_pair(p, r, x) if one_a else _pair(p, x, r) for p, x in zip(group, rs) if x is not None]
    shares = [v[1] if one_a else v[0] for v in views]
    said = f"{what}{len(shares)} parts summed: {why}"
    def add() -> np.ndarray:
        return np.sum([np.asarray(x.read(), np.float64) for x in shares], axis=0)

    total = ComputedWeight(shares[0], add, said)  # type: ignore[arg-type]
    perm = views[0][2]  # the one tensor's axes into the parts' canonical layout
    if one_a:
        return r, total, perm  # type: ignore[return-value]
    return total, r, inverse_perm(perm) if perm is not None else None  # type: ignore[return-value]


def _pair(p: WeightPair, ra: Record, rb: Record) -> _Pair:
    blocks = p.a_blocks
    a_cut, b_cut = _cut(p, ra, "a"), _cut(p, rb, "b")
    if a_cut is not None and b_cut is not None:  # q|k|v packed two ways: both shares, canonical
        return (RowSlice(ra, *a_cut, perm=p.a_perm, groups=p.a_groups, axis=p.axis, blocks=blocks, index=p.a_index),
                RowSlice(rb, *b_cut, perm=p.b_perm, groups=p.b_groups, axis=p.axis, index=p.b_index), None)
    if a_cut is not None:  # A's share of a packed tensor against B's whole tensor
        return (RowSlice(ra, *a_cut, perm=p.a_perm, groups=p.a_groups, axis=p.axis, blocks=blocks, index=p.a_index), rb,
                inverse_perm(p.b_perm) if p.b_perm is not None else None)
    if blocks is not None:  # A's whole tensor, its rows as blocks in B's order (canonical layout)
        whole = RowSlice(ra, 0, ra.shape[p.a_perm[0]] if p.a_perm is not None else ra.shape[0], perm=p.a_perm, blocks=blocks)
        if b_cut is not None:
            return whole, RowSlice(rb, *b_cut, perm=p.b_perm, groups=p.b_groups, axis=p.axis, index=p.b_index), None
        return whole, rb, inverse_perm(p.b_perm) if p.b_perm is not None else None
    if b_cut is not None:
        return ra, RowSlice(rb, *b_cut, perm=p.b_perm, groups=p.b_groups, axis=p.axis, index=p.b_index), p.a_perm
    if p.b_perm is not None and (len(p.b_perm) != len(ra.shape) or (p.a_perm is not None and len(p.a_perm) != len(p.b_perm))):
        # each side's axes reordered, then the same elements in order (a Linear over patches flattened
        # channels last against a conv): both in their canonical layouts, compared reshaped
        return (RowSlice(ra, 0, ra.shape[p.a_perm[0]], perm=p.a_perm) if p.a_perm is not None else ra,
                RowSlice(rb, 0, rb.shape[p.b_perm[0]], perm=p.b_perm) if p.b_perm is not None else rb, None)
    return ra, rb, p.relative_perm


def _cut(p: WeightPair, r: Record, side: str) -> tuple[int, int] | None:
    """The range of ``side``'s canonical tensor (of its stacked element, ``*_index``) the pair
    takes, None for the whole tensor."""
    part, index, perm = (p.a_part, p.a_index, p.a_perm) if side == "a" else (p.b_part, p.b_index, p.b_perm)
    if part is not None or index is None:
        return part
    canon = tuple(r.shape[k] for k in perm) if perm is not None else tuple(r.shape)
    return 0, canon[1 + p.axis]  # the whole element


def pair_by_map(
    wm: WeightMap | None, wa: abc.Mapping[tuple[str, str], Record], wb: abc.Mapping[tuple[str, str], Record],
    params_a: abc.Mapping[tuple[str, str], Record] | None = None,
    params_b: abc.Mapping[tuple[str, str], Record] | None = None,
) -> tuple[list[_Pair], list[Record], list[Record]]:
    """(A, B, permutation of A into B's layout) for one step's weights or parameter gradients
    (then ``params_a``/``params_b``: that step's weights), and the records of each side left
    unpaired. The v of a weight-normed layer paired with a plain weight is compared as the
    weight it computes, its gradient as the weight's (``_computed``)."""
    by_a = {r.tensor_name: r for r in wa.values()}
    by_b = {r.tensor_name: r for r in wb.values()}
    out: list[_Pair] = []
    used_a: set[str] = set()
    used_b: set[str] = set()
    skipped = wm.skipped if wm is not None else []
    # a tied tensor's gradient is the sum of its partners'; a summed one's value is
    tied, what, why = ((_tied(wm), "the gradients of ", "tied on the other side") if params_a is not None
                       else (_summed_weights(wm), "", "one bias on the other side"))
    for p in wm.pairs if wm is not None else []:
        ra, rb = by_a.get(p.a), by_b.get(p.b)
        if ra is None or rb is None:
            continue
        if p in tied:
            if tied[p]:  # the first of the group: against the sum of the other side's gradients
                summed = _summed(tied[p], by_a, by_b, what, why)
                if summed is not None:
                    out.append(summed)
            used_a.add(p.a)
            used_b.add(p.b)
            continue
        if p.a_part is None and p.a_index is None:  # a weight-normed v stands for the weight it computes (whole, or a packed part's peer)
            ra = _effective("a", p.a, ra, by_a, params_a, skipped)
        if p.b_part is None and p.b_index is None:
            rb = _effective("b", p.b, rb, by_b, params_b, skipped)
        if p.logged is not None:
            ra, rb = _in_log_space(p, ra, rb, params_a, params_b)
        if p.offset and params_a is None:  # weights: A's plus the offset (gradients are the same)
            ra = _plus(ra, p.offset)
        if p.depth is not None:  # a kernel over pixel phases: A's (or its gradient) as B keeps it
            ra = _as_b_kernel(p, ra, rb)
        out.append(_pair(p, ra, rb))
        used_a.add(p.a)
        used_b.add(p.b)
    for na, nb in wm.mismatched if wm is not None else []:  # same slot, other shape: a failing pair
        ra, rb = by_a.get(na), by_b.get(nb)
        if ra is not None and rb is not None:
            out.append((ra, rb, None))
            used_a.add(na)
            used_b.add(nb)
    return out, [r for n, r in by_a.items() if n not in used_a], [r for n, r in by_b.items() if n not in used_b]

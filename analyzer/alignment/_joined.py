"""One layer over a concatenation against one layer per part.

``W [x1; x2] + b`` is ``W1 x1 + W2 x2 + b``: one port feeds a Linear (or a convolution) the
concatenation of its inputs, the other gives each input a layer of its own and adds their
outputs (GraphSAGE's self and neighbour Linears against one over ``[self, neighbours]``, a GRU
cell's input and hidden projections against one over ``[x, h]``, additive attention's ``W1 h +
W2 s`` against ``W [h; s]``). The weight map pairs each part's weight with a share of the
other's along its input axis (``axis`` 1 of the canonical ``[out, in, ...]`` layout). The call
pair it makes is one of the parts' layers against the whole layer; its values compare as the
whole: the parts' inputs joined along the axis where the two sides' widths differ
(``joined``), their outputs summed (``summed``). Each part's layer must be called once beside
the paired one, under the same parent call, or the pair is compared as it stands.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from padiff_trace import Record
from padiff_trace.matching import WeightMap

from ._calls import Call, TraceView
from ._computed import ComputedView
from ._item import PlanItem
from ._pairing import CallPair
from ._records import RecordLike

__all__ = ["SplitLayer", "joined", "split_layers", "summed", "whole_items"]


@dataclass(frozen=True)
class SplitLayer:
    """The layers of one side (``side``: 0 A, 1 B) that hold the parts of the other side's one
    layer: (module, start, stop) along the whole layer's input axis, in order, and its width."""

    side: int
    parts: tuple[tuple[str, int, int], ...]
    width: int


def split_layers(wm: WeightMap | None) -> dict[tuple[str, str], SplitLayer]:
    """(A module, B module) of each part layer paired with the whole layer -> the split (see the
    module docstring): weights cut along axis 1 on one side only, their parts covering it."""
    groups: dict[tuple[int, str], list[tuple[str, int, int]]] = {}
    for p in wm.pairs if wm is not None else ():
        if p.axis != 1 or (p.a_part is None) == (p.b_part is None) or p.a_groups > 1 or p.b_groups > 1 or p.indexed:
            continue
        if not (p.a.endswith(".weight") and p.b.endswith(".weight")):
            continue
        if p.b_part is not None:  # B's one layer, A's parts
            side, whole, part, span = 0, p.b, p.a, p.b_part
        else:
            assert p.a_part is not None
            side, whole, part, span = 1, p.a, p.b, p.a_part
        groups.setdefault((side, whole.rpartition(".")[0]), []).append((part.rpartition(".")[0], *span))
    out: dict[tuple[str, str], SplitLayer] = {}
    for (side, whole), found in groups.items():
        parts = sorted(set(found), key=lambda x: x[1])
        mods = [m for m, _, _ in parts]
        tiled = parts[0][1] == 0 and all(x[2] == y[1] for x, y in zip(parts, parts[1:]))
        if len(parts) < 2 or len(set(mods)) != len(mods) or not tiled:
            continue
        split = SplitLayer(side, tuple(parts), parts[-1][2])
        for m in mods:
            out[(m, whole) if side == 0 else (whole, m)] = split
    return out


def sibling_calls(paired: Call, split: SplitLayer, calls: Sequence[Call]) -> list[Call] | None:
    """The calls of each part's layer, in part order, that go with ``paired`` (one of them): the
    calls of those modules under the same parent call, the same ordinal among them; None when a
    part has no such call."""
    ordinal = [c.id for c in calls if c.module == paired.module and c.parent == paired.parent].index(paired.id)
    found = []
    for module, _, _ in split.parts:
        if module == paired.module:
            found.append(paired)
            continue
        same = [c for c in calls if c.module == module and c.parent == paired.parent]
        if len(same) <= ordinal:
            return None
        found.append(same[ordinal])
    return found


def _join_axis(shapes: list[tuple[int, ...]], whole: tuple[int, ...], split: SplitLayer) -> int | None:
    widths = [hi - lo for _, lo, hi in split.parts]
    if any(len(s) != len(whole) for s in shapes):
        return None
    axes = [k for k in range(len(whole)) if any(s[k] != whole[k] for s in shapes)]
    if len(axes) != 1 or whole[axes[0]] != split.width or [s[axes[0]] for s in shapes] != widths:
        return None
    return axes[0]


def joined(parts: Sequence[Record], axis: int) -> ComputedView:
    """Records joined along ``axis`` in the order given (the inputs of one layer per part)."""
    shape = list(parts[0].shape)
    shape[axis] = sum(r.shape[axis] for r in parts)
    others = ", ".join(r.module for r in parts[1:])
    return ComputedView(parts[0], lambda: np.concatenate([np.asarray(r.read()) for r in parts], axis=axis),
                        f"joined with {others}'s", tuple(shape))


def summed(parts: Sequence[Record]) -> ComputedView:
    """The sum of records of one shape (the outputs of one layer per part), added in float64."""
    others = ", ".join(r.module for r in parts[1:])
    return ComputedView(parts[0], lambda: sum((np.asarray(r.read(), np.float64) for r in parts[1:]),
                                              np.asarray(parts[0].read(), np.float64)), f"plus {others}'s")


def whole_items(
    splits: Mapping[tuple[str, str], SplitLayer], pair: CallPair, calls: tuple[Sequence[Call], Sequence[Call]],
    views: tuple[TraceView, TraceView], role_in: str,
) -> list[PlanItem] | None:
    """The plan items of a call pair of a part's layer and the whole layer (see the module
    docstring): the parts' inputs joined and their outputs summed against the whole's, the
    input gradients joined, the output gradients as they are (a sum's terms receive its
    gradient); None for any other pair, or where the calls do not fit (one tensor in and out)."""
    ca, cb = pair.a, pair.b
    split = splits.get((ca.module, cb.module))
    if split is None:
        return None
    s, w = split.side, 1 - split.side
    paired, whole = (ca, cb) if s == 0 else (cb, ca)
    parts = sibling_calls(paired, split, calls[s])
    if parts is None:
        return None
    w_in, w_out = _tensors(whole.inputs), _tensors(whole.outputs)
    p_in, p_out = [_tensors(c.inputs) for c in parts], [_tensors(c.outputs) for c in parts]
    if len(w_in) != 1 or len(w_out) != 1 or any(len(x) != 1 for x in (*p_in, *p_out)):
        return None
    ins, outs = [x[0] for x in p_in], [x[0] for x in p_out]
    axis = _join_axis([tuple(r.shape) for r in ins], tuple(w_in[0].shape), split)
    if axis is None or any(tuple(r.shape) != tuple(w_out[0].shape) for r in outs):
        return None
    items: list[PlanItem] = []

    def add(role: str, mine: RecordLike | None, theirs: RecordLike | None) -> None:
        if mine is not None and theirs is not None:
            items.append(PlanItem(role, *((mine, theirs) if s == 0 else (theirs, mine)), None, pair))

    add(role_in, joined(ins, axis), w_in[0])
    g_in = [views[s].grads_in.get((c.id, r.position)) for c, r in zip(parts, ins)]
    if all(isinstance(g, Record) for g in g_in):
        add("grad_input", joined(g_in, axis), views[w].grads_in.get((whole.id, w_in[0].position)))  # type: ignore[arg-type]
    add("output", summed(outs), w_out[0])
    p_own = outs[parts.index(paired)]
    add("grad_output", views[s].grads_out.get((paired.id, p_own.position)), views[w].grads_out.get((whole.id, w_out[0].position)))
    return items


def _tensors(recs: Sequence[Record]) -> list[Record]:
    return [r for r in recs if r.is_tensor and r.has_data]

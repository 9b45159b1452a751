"""Per-channel vectors in the order the module's input is read in: a mapping to try.

A norm over a flattened plane holds one scale, shift and running statistic per element of the
plane: one port flattens ``[features, time]`` (feature-major), the other ``[time, features]``
(time-major). Both vectors have the same length, copied as they stand they pair each channel
with another channel's scale. When the comparison read the norm's input in the layout of the call
around it (``alignment._scope_layouts``: viewed in another shape, then permuted) and the inputs
agree while the outputs do not, that reading says which channel of one side is which of the
other's; ``channel_alternatives`` gives the mapping document that takes every such 1-D vector of
that class and local name in that order (``*_blocks`` of one element each; a vector against the same elements in
the other side's shape, a LayerNorm over ``(time, features)``, alike), and ``run`` keeps it
where a call of the module then agrees.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ._layouts import _types
from ._pairings import Alternative, _pattern, _shapes

if TYPE_CHECKING:
    from ._report import Report

__all__ = ["channel_alternatives", "channel_order"]


def channel_order(shape_a: tuple[int, ...], perm: tuple[int, ...]) -> list[int] | None:
    """For a value read as A viewed in ``shape_a`` with its axes permuted by ``perm`` (the batch
    axis first on both sides): ``order`` with B's element j of one item A's element ``order[j]``;
    None where the batch axis moves or nothing else does."""
    if len(perm) != len(shape_a) or not perm or perm[0] != 0 or perm == tuple(range(len(perm))):
        return None
    inner = shape_a[1:]
    idx = np.arange(math.prod(inner)).reshape(inner).transpose([k - 1 for k in perm[1:]]).ravel()
    return [int(i) for i in idx]


def channel_alternatives(report: Report) -> list[Alternative]:
    """The mapping document taking the 1-D vectors of the module the first divergence names (its
    inputs agree as read in the layout around it, its output differs), and of every module of its
    class holding a vector of that local name and length, in the channel order that reading gives
    (see the module docstring); empty where the input was read as stored."""
    d, wm = report.first_divergence, report.weight_map
    if d is None or wm is None or d.located is None:
        return []
    call = d.located.a.call
    t = report.pairs
    cp = t.col("cp")
    rows = np.flatnonzero(t.role_mask("input") & t.passed & (cp >= 0) & (t.col("step") == d.pair.step))
    order: list[int] | None = None
    for i in rows.tolist():
        pair = t.call_pairs[int(cp[i])]
        if pair.a.id != call.id:
            continue
        r = t[i]
        if r.perm is not None and r.a.numel == r.b.numel:
            order = channel_order(tuple(r.a.shape), r.perm)
        if order is not None:
            break
    if order is None:
        return []
    n = len(order)
    shapes_a, shapes_b, types = _shapes(report.a), _shapes(report.b), _types(report.a)
    ka, kb = wm.side_keys()

    def vector(p: Any) -> bool:  # A's vector of n, B's of n or the same elements in another shape
        shape_b = shapes_b.get(p.b)
        return (p.transfer and p.a_part is None and p.b_part is None and p.a_blocks is None
                and shapes_a.get(p.a) == (n,) and shape_b is not None and math.prod(shape_b) == n)

    kinds = {(types.get(p.a, ""), p.a.rpartition(".")[2]) for p in wm.pairs
             if vector(p) and p.a.rpartition(".")[0] == call.module}
    entries = [{ka: p.a, kb: p.b, f"{ka}_blocks": order} for p in wm.pairs
               if vector(p) and (types.get(p.a, ""), p.a.rpartition(".")[2]) in kinds]
    if not entries:
        return []
    said = (f"the {n} per-channel values of every {', '.join(sorted({k[0] for k in kinds}))} "
            f"({', '.join(sorted({k[1] for k in kinds}))}) in the order its input is read in against the other side's")
    doc = {"version": 1, "weights": entries, "note": f"written by padiff-trace run: {said}"}
    return [Alternative(doc, said, _pattern(call.module))]

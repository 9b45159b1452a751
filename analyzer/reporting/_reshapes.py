"""Another axis order to try where a weight becomes the other side's by a reshape.

A block-diagonal Linear of a port's own holds ``[groups, in, out]``; the other port's grouped
1x1 convolution holds ``[groups * out, in, 1, 1]``. The weight matcher pairs them by a reshape
(``matching._leftover.pair_last_standing``), but with as many inputs as outputs per group two
axis orders fit (``arrays.axes_candidates``: ``[g, i, o]`` read as it stands, or each group's
matrix transposed), and the one with fewer axes crossed is not always the port's. Nothing in
the names or shapes says which; the values can. When a run's first divergence is named at the
layer holding such a weight (its inputs agree, its output differs), ``reshape_alternatives``
gives the mapping documents that read every weight of that class and local name in another
fitting order (``*_axes``); ``run`` keeps the one under which a call of the layer agrees
(``pipeline._alternatives.try_pairings``). A divergence named around the layer (a pool after a
convolution that agrees) offers none: the layer's own calls already say its order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from padiff_trace.arrays import axes_candidates
from padiff_trace.matching import inverse_perm

from ._layouts import _types
from ._pairings import Alternative, _pattern, _shapes

if TYPE_CHECKING:
    from padiff_trace.matching import WeightPair

    from ._report import Report

__all__ = ["reshape_alternatives"]

_MAX = 2


def _orders(p: WeightPair, shape_a: tuple[int, ...], shape_b: tuple[int, ...]) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """The axis order the pair reads A's canonical axes in now, and every order that fits."""
    now = p.a_axes or tuple(range(len(shape_a)))
    base = p.a_perm
    if base is not None and p.a_axes is not None:  # the matcher folded the order into A's permutation
        inv = inverse_perm(p.a_axes)
        base = tuple(base[inv[j]] for j in range(len(base)))
    canon_a = tuple(shape_a[k] for k in base) if base is not None else shape_a
    canon_b = tuple(shape_b[k] for k in p.b_perm) if p.b_perm is not None else shape_b
    return now, axes_candidates(canon_a, canon_b)


def reshape_alternatives(report: Report) -> list[Alternative]:
    """Mapping documents reading the weights the weight map paired by a reshape, of the class
    and local name of one held by the layer the first divergence names, in another axis order
    that fits (see the module docstring); empty when there is none."""
    d, wm = report.first_divergence, report.weight_map
    if d is None or wm is None:
        return []
    ka, kb = wm.side_keys()
    named = d.located.a.call.module if d.located else d.pair.a.module
    shapes_a, shapes_b, types = _shapes(report.a), _shapes(report.b), _types(report.a)
    reshaped = [p for p in wm.pairs if p.how == "reshape" and p.transfer and p.a_part is None and p.b_part is None
                and p.a in shapes_a and p.b in shapes_b]
    out: list[Alternative] = []
    seen: set[tuple[str, str, tuple[int, ...]]] = set()
    for p in reshaped:
        mod = p.a.rpartition(".")[0]
        if mod != named:  # the layer holding it named (the root too): its inputs agree, its output differs
            continue
        now, fits = _orders(p, shapes_a[p.a], shapes_b[p.b])
        kind = (types.get(p.a, ""), p.a.rpartition(".")[2])
        for q in (q for q in fits if q != now):
            if (*kind, q) in seen:
                continue
            seen.add((*kind, q))
            entries = [{ka: r.a, kb: r.b, f"{ka}_axes": list(q)} for r in reshaped
                       if (types.get(r.a, ""), r.a.rpartition(".")[2]) == kind
                       and q in _orders(r, shapes_a[r.a], shapes_b[r.b])[1]]
            said = f"{kind[0]}.{kind[1]} read in the axis order {list(q)} against the other side's layout"
            # judged by the layer's own calls: kept where one agrees under the other order
            out.append(Alternative({"version": 1, "weights": entries, "note": f"written by padiff-trace run: {said}"},
                                   said, _pattern(mod)))
    return out[:_MAX]

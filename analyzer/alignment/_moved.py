"""A layer moved across the boundary of its neighbour: the last (or first) child of a paired
call on one side is, on the other side, the call right after (or before) that call's partner.

Two correct libraries draw module boundaries in different places: one subsampling block ends
with its own Dropout, the other returns before it and the caller applies ``subsample_drop``;
one embedding module normalises its output, the other leaves that to the next module. The
hierarchical alignment pairs children only within paired parents, so both layers stay
one-sided, and a difference one of them makes is blamed on a neighbour. After the alignment,
such a layer pairs with its counterpart (``how`` ``"moved"``) when both are unpaired, of
equivalent framework types, and take inputs of as many elements: the one at the edge of the
paired call on one side, the one adjacent to the partner, on the same edge, on the other, and
the weights do not rule the pair out (a layer whose weights pair with another module's).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from padiff_trace.matching import types_equivalent

from ._calls import Call, CallTree

__all__ = ["moved_across"]


def _siblings(tree: CallTree, c: Call, by_id: Mapping[int, Call]) -> list[Call]:
    parent = by_id.get(c.parent)
    return tree.children(parent) if parent is not None else tree.roots


def _sizes(c: Call) -> tuple[int, ...]:
    return tuple(math.prod(getattr(r, "shape", ())) for r in c.tensor_inputs())


def _neighbour(tree: CallTree, c: Call, by_id: Mapping[int, Call], step: int) -> Call | None:
    sib = _siblings(tree, c, by_id)
    k = next((i for i, s in enumerate(sib) if s.id == c.id), None)
    if k is None or not 0 <= k + step < len(sib):
        return None
    return sib[k + step]


def moved_across(pairs: Sequence[tuple[Call, Call]], ta: CallTree, tb: CallTree, by_a: Mapping[int, Call],
                 by_b: Mapping[int, Call], allows: Callable[[Call, Call], bool] = lambda a, b: True
                 ) -> list[tuple[Call, Call]]:
    """The (A call, B call) pairs of layers moved across a paired call's boundary (see the
    module docstring); ``pairs``: the alignment's pairs so far; ``by_*``: each side's calls by id;
    ``allows``: whether the weights leave an (A call, B call) pair possible (``Apart.allows``)."""
    used_a = {x.id for x, _ in pairs}
    used_b = {y.id for _, y in pairs}
    out: list[tuple[Call, Call]] = []
    for x, y in pairs:
        for inner_tree, outer_tree, inner, outer, outer_by, a_inside in (
                (ta, tb, x, y, by_b, True), (tb, ta, y, x, by_a, False)):
            kids = inner_tree.children(inner)
            if not kids:
                continue
            for edge, step in ((kids[-1], 1), (kids[0], -1)):
                far = _neighbour(outer_tree, outer, outer_by, step)
                ca, cb = (edge, far) if a_inside else (far, edge)
                if (ca is None or cb is None or ca.id in used_a or cb.id in used_b
                        or types_equivalent(ca.module_type, cb.module_type) is not True or _sizes(ca) != _sizes(cb)
                        or not allows(ca, cb)):
                    continue
                used_a.add(ca.id)
                used_b.add(cb.id)
                out.append((ca, cb))
    return out

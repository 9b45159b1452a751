"""Pins seen from above: calls that hold pinned calls deeper inside them (*carriers*).

A pin (a mapping entry, a weight anchor) pairs two calls that may sit at different depths
of their trees: paddle's ``layers.0.linear1`` is a child of the layer, HF's
``layer.0.intermediate.dense`` a grandchild. A segment of siblings only sees the pins it
holds directly, so without help the calls around a deep pin (a parameter-free Dropout
after the attention) are aligned by order across it, and pair with a Dropout on the far
side of the anchor (after the FFN).

Two rules make every pin visible at the level where its neighbours are aligned:

* two carriers, one per side, holding exactly the same pins (the partners of the pins
  inside one are the pins inside the other) are the same computation: ``layers.0`` and
  ``layer.0`` hold the same eight weight-matched modules. They pair (``how``
  ``"contents"``);
* a carrier holding pins whose partners are in this segment but inside no single carrier
  of the other side (paddle's ``self_attn`` holds q, k, v, out; HF's ``attention`` also
  holds the LayerNorm) is replaced by its children, on both sides, until the pins face
  each other as siblings.

Calls nested inside each other may hold the same pins (torch's ``kernel`` wraps the filter
MLP ``kernel.mlp`` and windows its output; paddle calls the MLP and the window as two
siblings). Of such a nest, the call that pairs is the one whose outputs have the partner's
shape (squeezed) where the outermost's do not: the outer call is expanded down to it.

The segment is then split at its pins, so a parameter-free call is aligned only with
calls between the same two anchors, never across one. Pinned calls are never expanded
(their children are aligned under the pin); a carrier whose pins all pair outside this
segment stays as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from padiff_trace.arrays import squeezed

from ._calls import Call, CallTree, shape_sig

__all__ = ["Held", "resolve_carriers"]

_NONE: frozenset[int] = frozenset()


@dataclass(eq=False)
class _Side:
    """One side's carriers: the pins inside each call, the calls holding each set, parent links."""

    sets: dict[int, frozenset[int]] = field(default_factory=dict)  # call id -> pins inside (as A ids)
    holders: dict[frozenset[int], list[int]] = field(default_factory=dict)  # pin set -> call ids
    parent: dict[int, int] = field(default_factory=dict)  # call id -> parent call id

    def below(self, s: frozenset[int], tops: set[int]) -> bool:
        """Whether a call holding exactly ``s`` lies inside one of the calls ``tops``."""
        for held in self.holders.get(s, ()):
            c, steps = held, 0
            while c in self.parent and steps < 10_000:  # parent links are a forest; the bound is a guard
                c = self.parent[c]
                if c in tops:
                    return True
                steps += 1
        return False


@dataclass(eq=False)
class Held:
    """Carriers of both sides; pins are named by their A call ids on both."""

    a: _Side
    b: _Side

    @classmethod
    def build(cls, ta: CallTree, tb: CallTree, pin_a: dict[int, Call], pin_b: dict[int, Call]) -> Held:
        return cls(_held(ta, {i: i for i in pin_a}), _held(tb, {i: c.id for i, c in pin_b.items()}))


def _held(tree: CallTree, name: dict[int, int]) -> _Side:
    """Bottom-up union of pin names over every subtree (only non-empty sets are kept)."""
    side = _Side()
    order: list[Call] = []
    for r in tree.roots:
        order.append(r)
        order.extend(tree.descendants(r))
    for c in reversed(order):  # children before their parent
        own = {name[c.id]} if c.id in name else set()
        for k in tree.children(c):
            side.parent[k.id] = c.id
            own |= side.sets.get(k.id, _NONE)
        if own:
            s = side.sets[c.id] = frozenset(own)
            side.holders.setdefault(s, []).append(c.id)
    return side


def resolve_carriers(
    xs: list[Call],
    ys: list[Call],
    ta: CallTree,
    tb: CallTree,
    held: Held,
    free_a: Callable[[Call], bool],
    free_b: Callable[[Call], bool],
) -> tuple[list[Call], list[Call], list[tuple[Call, Call]]]:
    """``xs``/``ys`` with carriers expanded until every pin in reach faces its partner, and
    the carrier pairs found on the way (same pins inside). ``free_*``: whether a call may still
    pair (not pinned, not in a black box, not paired already) - the others are never expanded.
    A carrier whose pin set is held by a call deeper inside the other side waits for the other
    side to expand down to it."""
    found: list[tuple[Call, Call]] = []
    done_a: set[int] = set()  # carrier pairs found here (A ids, B ids: separate id spaces)
    done_b: set[int] = set()
    while True:
        sa = {x.id: held.a.sets[x.id] for x in xs if x.id in held.a.sets and x.id not in done_a and free_a(x)}
        sb = {y.id: held.b.sets[y.id] for y in ys if y.id in held.b.sets and y.id not in done_b and free_b(y)}
        reach_a = frozenset().union(*(held.a.sets.get(x.id, _NONE) for x in xs))
        reach_b = frozenset().union(*(held.b.sets.get(y.id, _NONE) for y in ys))
        open_b = {s: y for y in ys if (s := sb.get(y.id)) is not None}
        tops_a, tops_b = {x.id for x in xs}, {y.id for y in ys}
        grow_a: set[int] = set()
        grow_b: set[int] = set()
        for x in xs:
            s = sa.get(x.id)
            if s is None or not s & reach_b:
                continue
            y = open_b.get(s)
            if y is not None and _twin_inside(tb, y, x, s, held.b):
                grow_b.add(y.id)
                continue
            if y is not None and _twin_inside(ta, x, y, s, held.a):
                grow_a.add(x.id)
                continue
            y = open_b.pop(s, None)
            if y is not None:
                found.append((x, y))
                done_a.add(x.id)
                done_b.add(y.id)
            elif ta.children(x) and not held.b.below(s, tops_b):
                grow_a.add(x.id)
        for s, y in open_b.items():
            if s & reach_a and tb.children(y) and not held.a.below(s, tops_a):
                grow_b.add(y.id)
        if not grow_a and not grow_b:
            return xs, ys, found
        xs = _expand(ta, xs, grow_a)
        ys = _expand(tb, ys, grow_b)


def _out_shapes(c: Call) -> tuple[tuple[int, ...], ...]:
    return tuple(squeezed(sh) for sh in shape_sig(c.outputs))


def _twin_inside(tree: CallTree, outer: Call, partner: Call, s: frozenset[int], side: _Side) -> bool:
    """Whether a call nested in ``outer`` holds exactly the pins ``s`` and returns outputs of
    ``partner``'s shapes, which ``outer``'s are not."""
    want = _out_shapes(partner)
    if not want or _out_shapes(outer) == want:
        return False
    return any(side.sets.get(c.id) == s and _out_shapes(c) == want for c in tree.descendants(outer))


def _expand(tree: CallTree, calls: list[Call], ids: set[int]) -> list[Call]:
    out: list[Call] = []
    for c in calls:
        out.extend(tree.children(c) if c.id in ids else (c,))
    return out

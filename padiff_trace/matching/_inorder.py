"""Same-shape tensors nothing tells apart, paired in the order both models compute them: the
weight matcher's last pass, taken only when both sides are in the order their modules are
first called (``in_call_order``: ``run`` asks for it after the registration order left a
transfer ambiguous).

One port keeps a block's two layer scales as ``ls1.gamma`` and ``ls2.gamma`` in modules of their
own, the other as the block's ``gamma1`` and ``gamma2``: same shape, same place, no name or type
in common, no call of the block's own parameters to order them by. Where the tensors left in one
place form a group of one shape with as many on each side, each a candidate of every one of the
other side (and nothing else a candidate of theirs), they pair in that order, as ``order only``
(low confidence). The values then decide: where the run diverges in the module holding two of
them, ``run`` records them the other way round too (``analyzer.order_alternatives``).
"""

from __future__ import annotations

from collections.abc import Callable

from ._anchors import _tensors_under
from ._leftover import trainable_left
from ._weighttensors import MTensor

__all__ = ["ORDER_ONLY", "pair_in_order", "subtree_place"]

ORDER_ONLY = "order only"  # how a pair of this pass was found

Place = Callable[[MTensor, MTensor], bool]
Take = Callable[[MTensor, MTensor, str], None]


def subtree_place(pairs: list[tuple[str, str]]) -> Place:
    """Two tensors are in one place when the innermost modules around them that hold paired
    tensors (the root aside) hold exactly each other's partners: ``stage1.0`` holding the norms,
    convolutions and MLP whose partners are exactly those ``stages.0.0`` holds."""
    partners: dict[str, dict[str, set[str]]] = {"a": {}, "b": {}}
    for a, b in pairs:
        partners["a"].setdefault(a, set()).add(b)
        partners["b"].setdefault(b, set()).add(a)
    under = {side: _tensors_under(held) for side, held in partners.items()}  # the root too: never a scope below

    def scope(t: MTensor) -> set[str] | None:
        m = t.info.module
        while m and m not in under[t.side]:
            m = m.rpartition(".")[0]
        return under[t.side].get(m) if m else None

    def same_place(x: MTensor, y: MTensor) -> bool:
        sx, sy = scope(x), scope(y)
        if sx is None or sy is None:
            return False
        return (set().union(*(partners[x.side][t] for t in sx)) == sy
                and set().union(*(partners[y.side][t] for t in sy)) == sx)

    return same_place


def pair_in_order(la: list[MTensor], lb: list[MTensor], place: Place, take: Take) -> None:
    """Pair each group (module docstring) of ``la`` and ``lb`` in order."""
    xs = [t for t in la if trainable_left(t)]
    ys = [t for t in lb if trainable_left(t)]

    def fits(x: MTensor, y: MTensor) -> bool:
        return x.cshape == y.cshape and place(x, y)

    seen: set[int] = set()
    for x in xs:
        if id(x) in seen:
            continue
        mine = [y for y in ys if fits(x, y)]
        if len(mine) < 2:
            continue
        peers = [o for o in xs if all(fits(o, y) for y in mine)]
        # a closed group: each of its tensors a candidate of every one on the other side, and of no other
        if len(peers) != len(mine) or any(fits(o, y) for o in xs if o not in peers for y in mine) \
                or any(fits(o, y) for o in peers for y in ys if y not in mine):
            continue
        seen.update(id(o) for o in peers)
        for a, b in zip(sorted(peers, key=lambda t: t.index), sorted(mine, key=lambda t: t.index)):
            take(a, b, ORDER_ONLY)

"""Tensors of one role wherever they sit: a pass of the weight matcher's last resort
(``_weightmatch``).

One port keeps a pyramid's position tables on its root, ``pos_embed1`` and ``pos_embed2``
``[1, N, C]``; the other keeps one ``pos_embed`` ``[1, C, H, W]`` in each stage. The numbers in
the names are no block indices, so no place the other passes know puts them side by side. What
does: the role their names say (the local name without its numbers and leading underscores)
and the size. Trainable tensors still left pair where each is the only one of its role and
element count left on either side, in the axis order that makes one the other
(``axes_candidates``). Where the shapes allow several orders (``[1, 256, 16]`` against
``[1, 16, 16, 16]``), a tensor of the same role on the same side already paired says which: a
model holds one role in one layout. Otherwise the pair waits; nothing is guessed.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable

from ..arrays._layout import axes_candidates
from ._leftover import trainable_left as left
from ._weightmap import WeightPair
from ._weighttensors import MTensor

__all__ = ["pair_same_roles", "role"]

logger = logging.getLogger(__name__)

Take = Callable[[MTensor, MTensor, tuple[int, ...]], None]  # the matcher's ``_take_axes``


def role(local: str) -> str:
    """A tensor's role as its local name says it: without numbers and leading underscores."""
    return re.sub(r"\d+", "", local).lstrip("_").lower()


def pair_same_roles(la: list[MTensor], lb: list[MTensor], take: Take, pairs: list[WeightPair],
                    a_tensors: dict[str, MTensor]) -> None:
    """Pair ``la`` (A's tensors left) with ``lb`` (module docstring); ``pairs``: the map so far,
    whose whole pairs say the axis order each of A's tensors (``a_tensors``, by name) was paired in
    (as stored: identity)."""

    def paired_axes(name: str) -> set[tuple[int, ...]]:
        out = set()
        for p in pairs:
            x = a_tensors.get(p.a)
            if x is not None and p.a_part is None and p.b_part is None and role(x.local) == name:
                out.add(p.a_axes or tuple(range(len(x.info.shape))))
        return out

    def fits(x: MTensor, y: MTensor) -> bool:
        return (left(x) and left(y) and role(x.local) == role(y.local)
                and math.prod(x.cshape) == math.prod(y.cshape) and bool(axes_candidates(x.cshape, y.cshape)))

    progress = True
    while progress:
        progress = False
        for x in la:
            ys = [y for y in lb if fits(x, y)]
            if len(ys) != 1 or sum(1 for o in la if fits(o, ys[0])) != 1:
                continue
            y = ys[0]
            qs = axes_candidates(x.cshape, y.cshape)
            if len(qs) > 1:  # the layout its role has on this side, where one of the orders is it
                seen = {q for q in paired_axes(role(x.local)) if len(q) == len(x.cshape)}
                qs = [q for q in qs if q in seen]
                if len(qs) != 1:
                    continue
            logger.info("%s and %s: the only tensors of role %r and %d elements left", x.info.name, y.info.name,
                        role(x.local), math.prod(x.cshape))
            take(x, y, qs[0])
            progress = True

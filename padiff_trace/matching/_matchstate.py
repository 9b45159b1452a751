"""The weight map being built: the two sides' tensors and how a pair is written into it.

The passes of ``_weightmatch`` read the tensors still unpaired (``live``) and write each pair
they find through ``pair``; a tensor taken in another layout on the way (a bare matrix turned,
axes reordered) says so in the pair, so that a mapping file written from the map pairs the
tensors alike.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable

from ._classlayout import squares_like_their_class
from ._evidence import BlockLinks, scope_of
from ._partners import counterpart_scope
from ._unitnorms import unit_layers
from ._unmatched import close_map
from ._weightmap import WeightMap, WeightPair
from ._weightsides import WeightSide
from ._weighttensors import MTensor as _T
from ._weighttensors import normalise as _normalise

__all__ = ["MatchState"]

logger = logging.getLogger(__name__)


class MatchState:
    """Both sides' tensors and the map of the pairs found so far."""

    def __init__(self, a: WeightSide, b: WeightSide) -> None:
        if a.framework == b.framework:  # a layout a class's call showed holds for that class on both sides
            both = {**a.layouts, **b.layouts}
            a, b = dataclasses.replace(a, layouts=both), dataclasses.replace(b, layouts=both)
        self.a, self.b = _normalise(a, "a"), _normalise(b, "b")
        self.by_name = {"a": {t.info.name: t for t in self.a}, "b": {t.info.name: t for t in self.b}}
        self.blocks = BlockLinks(self.by_name)  # which blocks the pairs so far join
        self.scopes = BlockLinks(self.by_name, scope_of, nested=True)  # and which modules inside them
        self.map = WeightMap(a.framework, b.framework)
        self.pack_of: dict[str, list[str]] = {}  # packed module -> modules of its parts (other side)
        self.pack_groups = {"a": a.pack_groups, "b": b.pack_groups}
        self.fingerprints = (a.fingerprints, b.fingerprints)
        # the same rank in the order both models call their modules outweighs a word of a name
        self.order_weight = 2.0 if a.call_ordered and b.call_ordered else 0.5
        self.units = {"a": unit_layers(self.a), "b": unit_layers(self.b)}  # norm module -> its unit's layer

    # ------------------------------------------------------------------ helpers
    def live(self, side: list[_T], derived: bool = False) -> list[_T]:
        return [t for t in side if not t.used and t.derived == derived]

    def apart(self, x: _T, y: _T) -> bool:
        """Whether the pairs so far join ``x``'s block, or the module inside it holding x's layer,
        with another than ``y``'s, and y's with another than x's (``BlockLinks``): a rank in a
        class is no evidence against that (Gemma's one packed gate|up in the MLP against one packed
        q|k|v in the attention, both ``[128, 32]``, where the output projections already joined
        attention with attention)."""
        return self.blocks.apart(x, y, self.map.pairs) or self.scopes.apart(x, y, self.map.pairs)

    def pair(self, x: _T, y: _T, how: str, xp: tuple[int, int] | None = None, yp: tuple[int, int] | None = None,
             axis: int = 0, used: bool = True, xg: int = 1, yg: int = 1, xi: int | None = None,
             yi: int | None = None, y_axes: tuple[int, ...] | None = None) -> None:
        """Pair ``x`` (its part ``xp`` along ``axis`` in each of ``xg`` groups, of its element ``xi``
        where it is a stack) with ``y`` (likewise; ``y_axes``: y's canonical axes were reordered so,
        said in the map for a mapping file's round trip)."""
        a, b = (x, y) if x.side == "a" else (y, x)
        ap, bp = (xp, yp) if x.side == "a" else (yp, xp)
        ag, bg = (xg, yg) if x.side == "a" else (yg, xg)
        ai, bi = (xi, yi) if x.side == "a" else (yi, xi)
        a_axes, b_axes = (None, y_axes) if x.side == "a" else (y_axes, None)
        self.map.pairs.append(
            WeightPair(a.info.name, b.info.name, a.perm, b.perm, how, ap, bp, axis, transfer=not (a.derived or b.derived),
                       a_groups=ag, b_groups=bg, a_axes=a_axes, b_axes=b_axes, a_index=ai, b_index=bi)
        )
        if used:
            x.used = y.used = True

    def take_left(self, x: _T, y: _T, how: str) -> None:
        if len(x.cshape) != len(y.cshape):  # axes of size one: a reshape
            how = "reshape"
        elif x.cshape != y.cshape:  # A's canonical view is taken transposed
            self.turn(x)
        logger.info("paired %s with %s, left over (%s: %s)", x.info.name, y.info.name, how, list(y.cshape))
        self.pair_marked(x, y, how)

    def whole(self) -> list[tuple[str, str]]:
        """The names of the pairs so far of whole tensors that are copied."""
        return [(p.a, p.b) for p in self.map.pairs if p.a_part is None and p.b_part is None and p.transfer]

    def partner(self, t: _T) -> _T | None:
        """The tensor ``t`` paired with whole (None: none, or only parts)."""
        for p in self.map.pairs:
            if p.a_part is None and p.b_part is None and (p.a, p.b)[t.side == "b"] == t.info.name:
                return self.by_name["b" if t.side == "a" else "a"].get(p.b if t.side == "a" else p.a)
        return None

    def turn(self, x: _T) -> None:
        """``x``'s canonical view taken transposed (a bare matrix ``[in, out]``): said in the map by
        ``pair_marked``."""
        x.perm = tuple(x.perm[k] for k in (1, 0)) if x.perm is not None else (1, 0)
        x.cshape = x.cshape[::-1]
        x.turned = True

    def pair_marked(self, x: _T, y: _T, how: str, xp: tuple[int, int] | None = None, yp: tuple[int, int] | None = None,
                     axis: int = 0, used: bool = True) -> None:
        """``pair``, saying in the map that ``x`` was turned (``turn``), so that a mapping file
        written from it pairs them alike."""
        self.pair(x, y, how, xp, yp, axis, used)
        if x.turned:
            last = self.map.pairs[-1]
            self.map.pairs[-1] = (dataclasses.replace(last, a_axes=(1, 0)) if x.side == "a"
                                  else dataclasses.replace(last, b_axes=(1, 0)))

    def take_axes(self, x: _T, y: _T, q: tuple[int, ...], found: str = "only candidate") -> None:
        """Pair ``x`` (A) with ``y`` taking A's canonical axes in the order ``q`` (said in the map
        for a mapping file's round trip), then by a reshape where the shapes still differ
        (``found``: how the pair was found, where the shapes agree)."""
        if q != tuple(range(len(q))):
            x.perm = tuple(x.perm[k] for k in q) if x.perm is not None else q
            x.cshape = tuple(x.cshape[k] for k in q)
        how = "reshape" if x.cshape != y.cshape else found
        logger.info("paired %s with %s, the last left in their place (axes %s, %s)", x.info.name, y.info.name,
                    list(q), how)
        self.pair(x, y, how)
        if q != tuple(range(len(q))):
            self.map.pairs[-1] = dataclasses.replace(self.map.pairs[-1], a_axes=q)

    def counterpart(self) -> Callable[[str, str], str]:
        """The other side's module the whole pairs so far make a module's counterpart."""
        return counterpart_scope([(p.a, p.b) for p in self.map.pairs if p.a_part is None and p.b_part is None])

    def follow_modules(self) -> None:
        """Tensors of a module whose weight was paired whole pair with the partner module's
        tensor of the same name and shape (a bias follows its weight)."""
        partner: dict[str, str] = {}
        for p in self.map.pairs:
            if p.a_part is None and p.b_part is None and p.how != "derived":
                partner.setdefault(p.a.rpartition(".")[0], p.b.rpartition(".")[0])
        if not partner:
            return
        # the layer its name says too: a multi-layer RNN holds one ``weight_hh`` per layer
        by_b = {(t.info.module, t.local, t.sub): t for t in self.b if not t.used and not t.derived}
        for x in self.a:
            if x.used or x.derived or x.info.module not in partner:
                continue
            y = by_b.get((partner[x.info.module], x.local, x.sub))
            if y is not None and not y.used and y.cshape == x.cshape:
                self.pair(x, y, "structure")

    # ------------------------------------------------------------------ result
    def finish(self) -> WeightMap:
        self.map.pairs = squares_like_their_class(self.map.pairs, self.by_name)
        return close_map(self.map, self.a, self.b, self.by_name)

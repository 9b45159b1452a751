"""Evidence the structure passes weigh besides type, local name, shape and block
(``_weightmatch``): a layer two authors named alike where a class holds more tensors on one
side, two layers that cannot be one because their weights differ in size, trained tensors
against trained ones, and two blocks the pairs so far keep apart.
"""

from __future__ import annotations

import logging
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence

from ._weightmap import WeightPair
from ._weighttensors import MTensor

__all__ = ["BlockLinks", "block_of", "layers_apart", "named_alike", "scope_of", "trained_alike", "weight_of"]

logger = logging.getLogger(__name__)


def named_alike(xs: list[MTensor], ys: list[MTensor], fits: Callable[[MTensor, MTensor], bool]) -> list[tuple[MTensor, MTensor, str]]:
    """In a class with more tensors on one side, the tensors of one layer name, in a parent of
    one name, that no other member of the class carries on either side (words, not numbers:
    ``modulation.proj`` and ``modulation.proj`` among ``to_q``, ``to_ctx``, ``h``): their
    authors named one layer alike. A pooler's ``dense`` is no prediction head's ``dense``.
    Returns the pairs with how each was found (``name``; ``reshape`` where the shapes differ)."""
    def name(t: MTensor) -> tuple[str, str]:
        return t.parent.rpartition(".")[2].lower(), t.leaf

    na, nb = Counter(name(x) for x in xs), Counter(name(y) for y in ys)
    by_name = {name(y): y for y in ys if nb[name(y)] == 1}
    out = []
    for x in xs:
        y = by_name.get(name(x))
        if (y is not None and na[name(x)] == 1 and not any(c.isdigit() for c in "".join(name(x))) and not x.used
                and not y.used and fits(x, y)):
            logger.info("paired %s with %s: the only layers of their class named %r", x.info.name, y.info.name, x.leaf)
            out.append((x, y, "name" if x.cshape == y.cshape else "reshape"))
    return out


def weight_of(t: MTensor, by_name: dict[str, dict[str, MTensor]]) -> MTensor | None:
    """The weight of the layer holding ``t`` (``t`` itself where it is that weight)."""
    return by_name[t.side].get(f"{t.info.module}.weight" if t.info.module else "weight")


def layers_apart(x: MTensor, y: MTensor, by_name: dict[str, dict[str, MTensor]]) -> bool:
    """Whether ``x`` and ``y`` (a bias, a norm's shift) belong to layers that are not each
    other: one layer's weight is still unpaired and the two weights hold different numbers of
    elements, so that no layout or reshape makes one the other. The bias then waits for its
    weight, as it does where several of its kind are left: a 1x1 convolution's 128 biases are no
    fused projection's 128 of another block because both are 128. ``by_name``: each side's
    tensors by full name."""
    wx, wy = weight_of(x, by_name), weight_of(y, by_name)
    if wx is None or wy is None or wx is x or wy is y or (wx.used and wy.used):
        return False
    return math.prod(wx.cshape) != math.prod(wy.cshape)


def trained_alike(xs: list[MTensor], ys: list[MTensor]) -> tuple[list[MTensor], list[MTensor]]:
    """A class with more tensors on one side, where that side's extra ones are frozen (the copy an
    averaged model or a frozen teacher keeps) and the trained ones are as many as the other
    side's: the trained ones, which pair as a class of equal sizes; else both as they are."""
    if len(xs) == len(ys):
        return xs, ys
    tx, ty = [x for x in xs if x.info.trainable], [y for y in ys if y.info.trainable]
    if tx and len(tx) == len(ty) and (len(tx) == len(xs) or len(ty) == len(ys)):
        return tx, ty
    return xs, ys


def block_of(t: MTensor) -> str:
    """The module path of the repeated block holding ``t``, up to its last block index
    (``blocks.0.1`` for ``blocks.0.1.attn.qkv``; a layer's place in a pipeline is no block
    index), or "" outside any block."""
    parts = t.module.split(".")
    at = [i for i, w in enumerate(parts) if w.isdigit()]
    if t.place and at:
        at = at[:-1]
    return ".".join(parts[: at[-1] + 1]) if at else ""


def scope_of(t: MTensor) -> str:
    """The module inside a repeated block that holds ``t``'s layer (``blocks.0.attn`` for
    ``blocks.0.attn.wq.weight``: the attention, not the MLP), or "" where the layer sits in the
    block itself or outside any block."""
    block = block_of(t)
    return t.parent if block and len(t.parent) > len(block) else ""


def _nested(x: str, y: str) -> bool:
    return x == y or x.startswith(y + ".") or y.startswith(x + ".")


class BlockLinks:
    """Which blocks the pairs made so far join (``block_of`` on each side), kept up to date as
    pairs are added: ``apart`` asks it once per candidate pair of a structure pass, and reading
    every pair again each time made the matcher half as slow again on a DenseNet.
    ``by_name``: side ("a", "b") -> name -> tensor; ``of``: what is joined (``block_of``, or
    ``scope_of``: the modules inside the blocks, where a module one side draws deeper, a
    Sequential around the layers, joins as well: ``nested``)."""

    def __init__(self, by_name: Mapping[str, Mapping[str, MTensor]], of: Callable[[MTensor], str] = block_of,
                 nested: bool = False) -> None:
        self.by_name = by_name
        self.of = of
        self.nested = nested
        self.to_b: dict[str, set[str]] = defaultdict(set)
        self.to_a: dict[str, set[str]] = defaultdict(set)
        self._seen: Sequence[WeightPair] | None = None
        self._count = 0

    def _update(self, pairs: Sequence[WeightPair]) -> None:
        if pairs is not self._seen or len(pairs) < self._count:  # another list: read it whole
            self.to_b.clear()
            self.to_a.clear()
            self._seen, self._count = pairs, 0
        for p in pairs[self._count:]:
            ta, tb = self.by_name["a"].get(p.a), self.by_name["b"].get(p.b)
            if ta is not None and tb is not None and self.of(ta) and self.of(tb):
                self.to_b[self.of(ta)].add(self.of(tb))
                self.to_a[self.of(tb)].add(self.of(ta))
        self._count = len(pairs)

    def apart(self, x: MTensor, y: MTensor, pairs: Sequence[WeightPair]) -> bool:
        """Whether the ``pairs`` made so far pair x's block with another block than y's, and y's
        with another than x's (a window attention's fused q|k|v against the next block's fused
        projection, where each block's norms already paired block with block): ranks in a class
        that spans the blocks are no evidence against that (``block_of``: what a block is)."""
        bx, by = self.of(x), self.of(y)
        if not bx or not by:
            return False
        self._update(pairs)
        a_block, b_block = (bx, by) if x.side == "a" else (by, bx)
        to_b, to_a = self.to_b.get(a_block, set()), self.to_a.get(b_block, set())
        if self.nested:
            return (bool(to_b) and not any(_nested(b_block, o) for o in to_b)
                    and bool(to_a) and not any(_nested(a_block, o) for o in to_a))
        return bool(to_b) and b_block not in to_b and bool(to_a) and a_block not in to_a

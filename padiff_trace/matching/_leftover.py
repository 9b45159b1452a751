"""The weight matcher's last pass: tensors no earlier pass paired, paired only where the
evidence left is unambiguous (``_weightmatch``)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable

from ..arrays._layout import squeezed
from ._weighttensors import MTensor, assign, distinguishing_words

__all__ = ["pair_left_over", "partner_scopes"]


def pair_left_over(la: list[MTensor], lb: list[MTensor], take: Callable[[MTensor, MTensor, str], None],
                   same_place: Callable[[MTensor, MTensor], bool] | None = None) -> None:
    """What is still left pairs only where it is unique: the one tensor of its block on each
    side with this shape, or its transpose (a library head stored [in, out] in a class the
    tables do not know; a bare matrix ``text_projection`` against a Linear
    ``text_projection.weight``). Where several fit, a path word that tells them apart on both
    sides pairs them first (``text_projection`` ~ ``text_projection.weight`` beside
    ``vision_projection`` ~ ``visual_projection.weight``), then uniqueness again, then a
    block's group in registration order when one layout fits it all. A square matrix is never
    guessed this way: its layout is unknown. Shapes that differ by axes of size one ([C, 1, 1]
    against [C]) fit as a reshape. ``same_place``: where two tensors may pair (default: the same
    block indices); ``partner_scopes`` gives a narrower one."""
    place = same_place or (lambda x, y: x.key == y.key)

    def fits(x: MTensor, y: MTensor) -> bool:
        if x.used or y.used or not place(x, y) or x.cshape == ():
            return False
        if len(x.cshape) != len(y.cshape):  # axes of size one more or fewer ([C, 1, 1] ~ [C]), or a
            # convolution [out, in, p, p] against a Linear over flattened patches [out, in * p * p]
            return squeezed(x.cshape) == squeezed(y.cshape) or _patches(x.cshape, y.cshape)
        if len(x.cshape) == 2 and x.cshape[0] == x.cshape[1] and x.ctype != y.ctype:
            return False
        return x.cshape == y.cshape or (len(x.cshape) == 2 and x.cshape[::-1] == y.cshape)

    def alike(x: MTensor, y: MTensor) -> bool:  # a trainable tensor is the other's trainable one first
        return x.info.trainable == y.info.trainable

    def narrow(x: MTensor, cands: list[MTensor]) -> list[MTensor]:
        return [y for y in cands if alike(x, y)] if len(cands) > 1 else cands

    def named(x: MTensor) -> MTensor | None:
        """The one candidate whose path shares a word with ``x``'s that tells the
        candidates apart (and no other tensor of ``x``'s side does so with it)."""
        ys = narrow(x, [y for y in lb if fits(x, y)])
        xs = [o for o in la if any(fits(o, y) for y in ys)]
        if len(ys) < 2 or len(xs) < 2:
            return None
        dx, dy = distinguishing_words(xs), distinguishing_words(ys)
        i = xs.index(x)
        hits = [j for j in range(len(ys)) if dx[i] & dy[j]]
        if len(hits) != 1 or sum(1 for k in range(len(xs)) if dx[k] & dy[hits[0]]) != 1:
            return None
        return ys[hits[0]]

    def unique(x: MTensor) -> MTensor | None:
        ys = narrow(x, [y for y in lb if fits(x, y)])
        if len(ys) != 1:
            return None
        rivals = [o for o in la if fits(o, ys[0])]
        if len(rivals) > 1:
            rivals = [o for o in rivals if alike(o, ys[0])]
        return ys[0] if rivals == [x] else None

    def ordered(x: MTensor) -> MTensor | None:
        """Groups of one block that fit each other one to one, in registration order (the
        role and the order say it, names nothing: ``fc1``, ``fc2`` ~ bare ``w1``, ``w2``),
        each taken in one layout: all as stored, or all transposed."""
        ys = [y for y in lb if fits(x, y)]
        xs = [o for o in la if any(fits(o, y) for y in ys)]
        ys = [y for y in lb if any(fits(o, y) for o in xs)]
        if len(xs) < 2 or len(xs) != len(ys):
            return None
        got = [(o, y) for o, y, _ in assign(xs, ys)]
        # one layout for the group: as stored (axes of size one aside: no element moves) or transposed
        if not all(fits(o, y) for o, y in got) or len({squeezed(o.cshape) == squeezed(y.cshape) for o, y in got}) != 1:
            return None
        return next(y for o, y in got if o is x)

    progress = True
    while progress:
        progress = False
        for find, how in ((named, "only candidate"), (unique, "only candidate"), (ordered, "shape+order")):
            for x in la:
                y = None if x.used else find(x)
                if y is not None:
                    take(x, y, how)
                    progress = True


def _patches(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    conv, lin = (a, b) if len(a) > len(b) else (b, a)
    return len(lin) == 2 and len(conv) >= 3 and conv[0] == lin[0] and math.prod(conv[1:]) == lin[1]



def partner_scopes(pairs: list[tuple[str, str]], a: list[MTensor], b: list[MTensor]) -> Callable[[MTensor, MTensor], bool]:
    """Where two tensors left over may pair because the modules around them are one computation:
    modules whose tensors paired whole, one module to one module (``pairs``: the paired tensor
    names), and, upward, parents whose partnered children all have their partners under one
    parent of the other side. A tensor's scope is its innermost partnered module (the root
    aside: that is no evidence); two tensors are in the same place when their scopes are
    partners (a graph layer's own ``weight`` against a Linear inside its partner's layer; a
    time-mix vector ``[d]`` against ``[1, 1, d]`` in the partner attention)."""
    seen_a: dict[str, set[str]] = defaultdict(set)
    seen_b: dict[str, set[str]] = defaultdict(set)
    for na, nb in pairs:
        ma, mb = na.rpartition(".")[0], nb.rpartition(".")[0]
        seen_a[ma].add(mb)
        seen_b[mb].add(ma)
    partner = {ma: next(iter(mbs)) for ma, mbs in seen_a.items()
               if len(mbs) == 1 and len(seen_b[next(iter(mbs))]) == 1}
    grown = True
    while grown:
        grown = False
        up: dict[str, set[str]] = defaultdict(set)
        down: dict[str, set[str]] = defaultdict(set)
        for ma, mb in partner.items():
            if ma and mb:
                up[ma.rpartition(".")[0]].add(mb.rpartition(".")[0])
                down[mb.rpartition(".")[0]].add(ma.rpartition(".")[0])
        taken = set(partner.values())
        for pa, pbs in up.items():
            pb = next(iter(pbs))
            if pa not in partner and len(pbs) == 1 and len(down[pb]) == 1 and pb not in taken:
                partner[pa] = pb
                taken.add(pb)
                grown = True
    inverse = {mb: ma for ma, mb in partner.items()}

    def scope(module: str, known: dict[str, str]) -> str | None:
        m = module
        while m and m not in known:
            m = m.rpartition(".")[0]
        return m or None

    def same_place(x: MTensor, y: MTensor) -> bool:
        sx = scope(x.info.module, partner if x.side == "a" else inverse)
        sy = scope(y.info.module, inverse if y.side == "b" else partner)
        if sx is None or sy is None:
            return False
        return (partner if x.side == "a" else inverse)[sx] == sy

    return same_place

"""One module of A against k copies of it in B: the last pass of ``_leftover``.

One model may run one module where the other keeps copies of it that compute the same thing: a
key and a value downsampled by one shared strided conv and norm on one side, by one each on the
other (timm's multi-query attention against a port sharing it). Nothing in the names or shapes
tells which copy is the one, and the copies are alike: each is the one module again. Where a
module of A whose trainable tensors are all left has, in its place, 2 to 4 modules of B of its
type, local names and shapes, all left, and no other module of A there is of that kind, and the
copies sit at one place in parallel branches (sibling modules each holding more than the copy,
whose tensors are alike, path for path: the key's and the value's ``down_conv, norm, proj``),
every copy pairs with it (``copies``: copied from it; its gradient is compared with the sum of the
copies'), and its calls pair with the first copy's.
The modules registered right after it and right after each copy, where they are again alike (the
norm after each conv), are copies too. Two norms of one block that A has one of (a norm fewer)
are no such branches: which is which is not known, and they stay refused.
A module of A's root has B's whole model as its place (one norm applied after every block against
a norm in each layer). The pass runs either way (``side``): where B holds the one module, it takes
the values of A's first copy, and the other copies are compared with it, not copied over it.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable

from ._weightmap import WeightPair
from ._weighttensors import MTensor

__all__ = ["first_copy_only", "in_counterpart", "pair_copies", "pair_copies_either_way"]

logger = logging.getLogger(__name__)

Pair = Callable[..., None]
_COPIES = (2, 4)


def _modules(side: list[MTensor]) -> dict[str, list[MTensor]]:
    out: dict[str, list[MTensor]] = {}
    for t in side:
        if t.info.trainable and t.cshape != ():
            out.setdefault(t.module, []).append(t)
    return out


def _kind(ts: list[MTensor]) -> tuple[object, ...]:
    return tuple(sorted((t.type_key, t.local, t.cshape) for t in ts))


def _left(ts: list[MTensor]) -> bool:
    return all(not t.used for t in ts)


def _parent(module: str) -> str:
    return module.rpartition(".")[0]


def _mate(x: MTensor, ts: list[MTensor]) -> MTensor:
    """The tensor of ``ts`` (a module alike ``x``'s) of ``x``'s local name and shape."""
    return next(t for t in ts if t.local == x.local and t.cshape == x.cshape)


def _after(mods: dict[str, list[MTensor]], module: str) -> str | None:
    """The module whose tensors come right after ``module``'s in registration order."""
    last = max(t.index for t in mods[module])
    later = [(min(t.index for t in ts), m) for m, ts in mods.items() if min(t.index for t in ts) > last]
    return min(later)[1] if later else None


def in_counterpart(scope: Callable[[str, str], str]) -> Callable[[MTensor, MTensor], bool]:
    """Whether a tensor of B sits inside the module the pairs make the counterpart of A's
    tensor's module: the place a norm left beside copies paired away is found in."""
    def inside(x: MTensor, y: MTensor) -> bool:
        a, b = (x, y) if x.side == "a" else (y, x)
        place = scope(a.module, "a")
        return bool(place) and b.module.startswith(place + ".")
    return inside


def _branches(mods: dict[str, list[MTensor]], copies: list[str]) -> bool:
    """Whether ``copies`` sit at one relative place in sibling branches holding more than them,
    alike path for path (parallel copies of one computation, not two steps of one block)."""
    parts = [c.split(".") for c in copies]
    common = 0
    while all(len(p) > common + 1 for p in parts) and len({p[common] for p in parts}) == 1:
        common += 1
    roots = [".".join(p[:common + 1]) for p in parts]
    if len(set(roots)) != len(roots) or len({".".join(p[common + 1:]) for p in parts}) != 1 or not parts[0][common + 1:]:
        return False

    def inside(root: str) -> list[tuple[object, ...]]:
        return sorted((m[len(root):], *k) for m, ts in mods.items() if m.startswith(root + ".")
                      for k in [_kind(ts)])

    return len({tuple(inside(r)) for r in roots}) == 1 and len(inside(roots[0])) > 1


def _state(side: list[MTensor], module: str) -> list[MTensor]:
    """The module's state left (a norm's running statistics): it follows the weights' ties."""
    return [t for t in side if t.module == module and not t.used and not t.derived and not t.info.trainable]


def pair_copies(la: list[MTensor], lb: list[MTensor], pair: Pair, scope: Callable[[str, str], str],
                counts: tuple[int, int] = _COPIES, side: str = "a") -> bool:
    """Tie each module of A left to the 2 to 4 alike copies left in its place in B, and the
    modules registered right after them that are alike again (module docstring). ``la``/``lb``:
    every tensor of each side; ``scope``: the module of the other side the pairs so far make a
    module's counterpart ("" where they say nothing: ``_partners.counterpart_scope``); ``counts``:
    how many copies (``(1, 1)``: the one module of its kind left there pairs with it, as the
    structure pass pairs a block's module, once copies paired away its rivals). Whether any pair
    was made."""
    ma, mb = _modules(la), _modules(lb)
    tied = False
    for module, xs in ma.items():
        root = "." not in module  # a module of A's root: its place is B's whole model
        place = scope(module, side)
        if not (place or root) or not _left(xs):
            continue
        kind = _kind(xs)
        copies = [m for m, ys in mb.items() if (root or m.startswith(place + ".")) and _left(ys) and _kind(ys) == kind]
        rivals = [m for m, ts in ma.items() if m != module and _left(ts) and _kind(ts) == kind and scope(m, side) == place]
        if not counts[0] <= len(copies) <= counts[1] or rivals or (len(copies) > 1 and not _branches(mb, copies)):
            continue
        chain = [(module, copies)]
        if len(copies) == 1:
            logger.info("paired %s with %s: the one module of its kind left in its counterpart", module, copies[0])
            for x in xs:
                pair(x, _mate(x, mb[copies[0]]), "structure")
            tied = True
            continue
        nxt_a, nxt_b = _after(ma, module), [_after(mb, c) for c in copies]
        if (nxt_a is not None and _left(ma[nxt_a]) and _parent(nxt_a) == _parent(module)
                and all(n is not None and _left(mb[n]) and _parent(n) == _parent(c) for n, c in zip(nxt_b, copies))
                and all(_kind(mb[n]) == _kind(ma[nxt_a]) for n in nxt_b if n is not None)):
            chain.append((nxt_a, [n for n in nxt_b if n is not None]))
        for one, many in chain:
            for copy in many:
                logger.info("paired %s with %s: one module on one side, %d copies of it on the other", one, copy,
                            len(many))
                for x in ma[one]:
                    pair(x, _mate(x, mb[copy]), "copies", used=False)
                state = {(t.local, t.cshape): t for t in _state(lb, copy)}
                for x in _state(la, one):
                    if (z := state.get((x.local, x.cshape))) is not None:
                        pair(x, z, "copies", used=False)
                        z.used = True
            for t in (*ma[one], *_state(la, one), *(y for c in many for y in mb[c])):
                t.used = True
            tied = True
    return tied


def pair_copies_either_way(la: list[MTensor], lb: list[MTensor], pair: Pair, scope: Callable[[str, str], str],
                           counts: tuple[int, int] = _COPIES) -> bool:
    """``pair_copies`` with A holding the one module, then B: whether any pair was made."""
    return any([pair_copies(la, lb, pair, scope, counts), pair_copies(lb, la, pair, scope, counts, side="b")])


def first_copy_only(pairs: list[WeightPair]) -> list[WeightPair]:
    """``pairs`` with B's one module taking the values of A's first copy only (the one its calls
    pair with): the other copies are compared with it, not copied over it, so copies that hold
    other values show as a weight that differs at that copy."""
    taken: set[str] = set()
    out = []
    for p in pairs:
        again = p.how == "copies" and p.transfer and p.b in taken
        if p.how == "copies" and p.transfer:
            taken.add(p.b)
        out.append(dataclasses.replace(p, transfer=False) if again else p)
    return out

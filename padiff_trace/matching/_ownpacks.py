"""A module's own tensors, packed into fewer on the other side: a pass of the weight matcher's
last resort (``_weightmatch``).

A hand-written SRU cell keeps its peepholes and gate biases as four vectors ``v_f``, ``v_r``,
``b_f``, ``b_r`` ``[d]``; the ``sru`` package's cell keeps two, ``weight_c`` ``[2d]`` (``v_f|v_r``)
and ``bias`` ``[2d]`` (``b_f|b_r``). No name, type or shape says which is which, but the modules
say where they are: the one cell's three projection Linears were found packed into the other
cell's one projection weight, so the two cells are one computation (``packed_places``). The
tensors each of the two modules holds itself, left over, then pair when, in registration order,
each tensor of the side holding fewer is a run of consecutive tensors of the other concatenated
along one axis (its own shape aside from axes of size one), every tensor of both sides used once.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable

from ..arrays import squeezed
from ..arrays._layout import concat_axis
from ._weightmap import WeightPair
from ._weighttensors import MTensor, block_pattern

__all__ = ["packed_places", "pair_ancestor_packs", "pair_extra_inputs", "pair_own_packs", "pair_partner_packs"]

logger = logging.getLogger(__name__)

Pair = Callable[..., None]  # the matcher's ``pair(x, y, how, x_part, y_part, axis, used=...)``


def _module(name: str) -> str:
    return name.rpartition(".")[0]


def packed_places(pairs: list[WeightPair]) -> list[tuple[str, str, str]]:
    """(side of the packed tensor, module holding the parts' modules, module holding the packed
    tensor) for every packed tensor whose parts sit in sibling modules of one parent."""
    parts: dict[tuple[str, str], set[str]] = {}
    for p in pairs:
        if p.b_part is not None and p.a_part is None:
            parts.setdefault(("b", p.b), set()).add(_module(_module(p.a)))
        elif p.a_part is not None and p.b_part is None:
            parts.setdefault(("a", p.a), set()).add(_module(_module(p.b)))
    return [(side, next(iter(ps)), _module(name)) for (side, name), ps in parts.items() if len(ps) == 1]


def _runs(xs: list[MTensor], ys: list[MTensor]) -> list[tuple[list[MTensor], MTensor, int]] | None:
    """Each of ``ys`` with the run of consecutive ``xs`` it holds and the axis, every tensor of
    both used once; None when the sizes do not cut that way."""
    out, i = [], 0
    for y in ys:
        whole = y.cshape
        kept = [k for k, n in enumerate(whole) if n != 1]
        if not kept:
            return None
        run: list[MTensor] = []
        for axis in kept:
            rest = tuple(whole[k] for k in kept if k != axis)
            total, j = 0, i
            while j < len(xs) and total < whole[axis]:
                s = squeezed(xs[j].cshape)
                if s == rest and axis == kept[0]:  # one slice of a stack (``[2, 2]`` holding two ``[2]``)
                    total += 1
                elif len(s) != len(kept) or s[: kept.index(axis)] + s[kept.index(axis) + 1 :] != rest:
                    break
                else:
                    total += s[kept.index(axis)]
                j += 1
            if total == whole[axis] and j > i:
                run = xs[i:j]
                break
        if not run:
            return None
        out.append((run, y, axis))
        i += len(run)
    return out if i == len(xs) and any(len(r) > 1 for r, _, _ in out) else None


def pair_own_packs(la: list[MTensor], lb: list[MTensor], places: list[tuple[str, str, str]], pair: Pair) -> None:
    """Pair the trainable tensors two modules ``places`` names one computation hold themselves
    (the packed tensor's module or its parent on the one side, the parts' modules' parent on the
    other; see the module docstring)."""
    def own(ts: list[MTensor], modules: set[str]) -> list[MTensor]:
        return sorted((t for t in ts if not t.used and t.info.trainable and t.info.module in modules),
                      key=lambda t: t.index)

    for side, parts_parent, packed_module in places:
        big = {packed_module, _module(packed_module)} - {""}
        small = {parts_parent} - {""}
        if not big or not small:
            continue
        xs, ys = (own(lb, small), own(la, big)) if side == "a" else (own(la, small), own(lb, big))
        if len(xs) < 2 or len(ys) >= len(xs) or not ys:
            continue
        runs = _runs(xs, ys)
        if runs is None:
            continue
        _pair_runs(runs, pair)


def pair_partner_packs(la: list[MTensor], lb: list[MTensor], partner: dict[str, str], pair: Pair) -> None:
    """Pair the trainable tensors that two partner modules (one computation: their children
    paired, ``partner_modules``) hold themselves, left over, where one holds fewer and each of
    those is a run of the other's, concatenated or stacked along its first axis (BiFPN fusion
    weights: one vector per node on one side, one tensor per path on the other)."""
    def own(ts: list[MTensor], module: str) -> list[MTensor]:
        return sorted((t for t in ts if not t.used and t.info.trainable and t.info.module == module),
                      key=lambda t: t.index)

    for ma, mb in partner.items():
        if not ma or not mb:
            continue
        xa, xb = own(la, ma), own(lb, mb)
        xs, ys = (xa, xb) if len(xa) > len(xb) else (xb, xa)
        if len(xs) < 2 or not ys or len(ys) >= len(xs):
            continue
        runs = _runs(xs, ys)
        if runs is not None:
            _pair_runs(runs, pair)


def _ancestors(module: str) -> list[str]:
    """``module``'s enclosing modules, innermost first, the root ("") last."""
    out = []
    while module:
        module = module.rpartition(".")[0]
        out.append(module)
    return out


def _common(modules: list[str]) -> str:
    """The innermost module enclosing every one of ``modules`` (not one of them; the root when
    one of them is the root, which nothing encloses)."""
    chains = [_ancestors(m) for m in modules]
    return next((m for m in chains[0] if all(m in c for c in chains[1:])), "")


def _region(module: str, to_other: dict[str, str]) -> str | None:
    """The innermost module of the other side enclosing the partners of ``module`` and of the
    modules inside it (None: none of them has a partner)."""
    theirs = sorted({mb for m, mb in to_other.items() if m == module or m.startswith(module + ".")} - {""})
    if not theirs:
        return None
    return theirs[0] if len(theirs) == 1 else _common(theirs)


def pair_ancestor_packs(la: list[MTensor], lb: list[MTensor], partner: dict[str, str], pair: Pair) -> None:
    """Pair one tensor per block (the same local name in modules numbered alike: GIN's ``eps`` of
    each layer, ``convs.0.eps`` ... ``convs.2.eps``), left over, with a tensor the other side keeps
    for all the blocks in a module enclosing their partners (the model's ``eps [3]``): in
    registration order, each block's tensor a run of the packed one along its first axis."""
    inverse = {mb: ma for ma, mb in partner.items()}
    for xs_all, ys_all, to_other in ((la, lb, partner), (lb, la, inverse)):
        groups: dict[tuple[str, str], list[MTensor]] = {}
        for t in xs_all:
            if t.used or not t.info.trainable or _region(t.info.module, to_other) is None:
                continue
            if t.key:  # numbered modules only: blocks
                groups.setdefault((block_pattern(t.info.module), t.local), []).append(t)
        for group in groups.values():
            xs = sorted((x for x in group if not x.used), key=lambda t: t.index)
            if len(xs) < 2 or len({x.info.module for x in xs}) != len(xs):
                continue
            regions = [_region(x.info.module, to_other) for x in xs]
            above = _common([r for r in regions if r is not None])
            for holder in (above, *_ancestors(above)) if above else ("",):
                ys = sorted((y for y in ys_all if not y.used and y.info.trainable and y.info.module == holder),
                            key=lambda t: t.index)
                ys = [y for y in ys if y.local == xs[0].local]
                if len(ys) == 1:
                    runs = _runs(xs, ys)
                    if runs is not None:
                        _pair_runs(runs, pair)
                    break


def _pair_runs(runs: list[tuple[list[MTensor], MTensor, int]], pair: Pair) -> None:
    for run, y, axis in runs:
        if len(run) == 1:
            pair(run[0], y, "units")
            continue
        start = 0
        kept = [k for k, n in enumerate(y.cshape) if n != 1]
        rest = tuple(y.cshape[k] for k in kept if k != axis)
        for x in run:
            stop = start + (1 if squeezed(x.cshape) == rest and axis == kept[0] else squeezed(x.cshape)[kept.index(axis)])
            logger.info("paired %s with part %d:%d of %s: a module's own tensors packed", x.info.name, start, stop,
                        y.info.name)
            pair(x, y, "packed", None, (start, stop), axis, used=False)
            x.used = True
            start = stop
        y.used = True


_EXTRA_CANDIDATES = 8  # tensors looked at for the parts of one packed tensor (subsets of them are tried)


def pair_extra_inputs(la: list[MTensor], lb: list[MTensor], partner: dict[str, str], pair: Pair) -> None:
    """A Linear over its input and extra features concatenated (``[t, x]``: a neural ODE's time
    column) against its partner Linear over the input, the extra features' weights kept apart by
    the module around it (a vector ``time1 [out]`` times ``t``): the one tensor left in a module
    is its partner's left-over tensor and tensors its partner's parent holds itself, concatenated
    along one axis (a part without that axis is one slice of it), where exactly one set of them
    fits; in registration order. ``partner``: modules that are one computation, A's -> B's."""
    inverse = {mb: ma for ma, mb in partner.items()}
    for ys_all, xs_all, to_other in ((la, lb, partner), (lb, la, inverse)):
        for y in ys_all:
            if y.used or not y.info.trainable or len(y.cshape) < 2 or y.info.module not in to_other:
                continue
            mb = to_other[y.info.module]
            if not mb:
                continue
            near = {mb, _module(mb)}
            cands = sorted((x for x in xs_all if not x.used and x.info.trainable and x.info.module in near and x.cshape),
                           key=lambda t: t.index)
            if not any(x.info.module == mb for x in cands) or len(cands) > _EXTRA_CANDIDATES:
                continue
            fits = []
            for n in range(2, len(cands) + 1):
                for group in itertools.combinations(cands, n):
                    if any(x.info.module == mb for x in group):
                        found = concat_axis([squeezed(x.cshape) for x in group], y.cshape)
                        if found is not None:
                            fits.append((list(group), found))
            if len(fits) != 1:
                continue
            chosen, (axis, sizes) = fits[0]
            start = 0
            for x, size in zip(chosen, sizes):
                logger.info("paired %s with part %d:%d of %s: its input and extra features concatenated", x.info.name,
                            start, start + size, y.info.name)
                pair(x, y, "packed", None, (start, start + size), axis, used=False)
                x.used = True
                start += size
            y.used = True

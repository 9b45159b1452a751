"""Same-shape layers told apart by their calls (the weight matcher's ``assign``): once both
models ran, what each module's first call took and returned, and what the layers beside it in
its parent did, split a group of same-shape tensors that names and order cannot pair (a block's
1x1 convolution and its strided shortcut, and the norm after each)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping as AbcMapping
from collections.abc import Set as AbstractSet
from typing import Protocol, TypeVar

__all__ = ["CallShapes", "by_call_shapes", "call_signatures", "held_calls"]


class Signed(Protocol):
    """What the split reads of a tensor (the matcher's ``MTensor``): its call signature levels
    (``call_signatures``) and its canonical shape."""

    @property
    def sig(self) -> tuple[object, ...]: ...

    @property
    def cshape(self) -> tuple[int, ...]: ...


T = TypeVar("T", bound=Signed)

CallShapes = AbcMapping[str, tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]]


def held_calls(shapes: CallShapes, holders: AbstractSet[str]) -> dict[str, list[tuple[str, str]]]:
    """Parent module path -> (module, what its first call took and returned) for each called module
    under it that holds tensors (``holders``): the layers beside a layer, gathered once per side."""
    out: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for m, v in shapes.items():
        if m and m in holders:
            out[m.rpartition(".")[0]].append((m, repr(v)))
    return out


def call_signatures(shapes: CallShapes, module: str, beside: AbcMapping[str, list[tuple[str, str]]]) -> tuple[object, ...]:
    """What ``module``'s first call took and returned, finest first: with what the other layers of
    its parent took and returned (``beside``, from ``held_calls``: the convolution beside a norm in
    a ConvBN wrapper or a Sequential unit, which tells a shortcut's norm from the block's), its own
    inputs and outputs, its outputs alone. () where the module never ran or no run is known."""
    own = shapes.get(module)
    if own is None:
        return ()
    others = sorted(v for m, v in beside.get(module.rpartition(".")[0], ()) if m != module)
    return ((own, tuple(others)), own, own[1])


def by_call_shapes(xs: list[T], ys: list[T]) -> list[tuple[list[T], list[T]]] | None:
    """Two equally long groups split by what their modules' first calls took and returned
    (``MTensor.sig``, known once both models ran), where their own calls split them into several
    parts, each as long on both sides: a block's first 1x1 convolution and its shortcut projection
    hold weights of one shape, but one returns the input's size and the other a strided one,
    whatever order each author registers or calls them in. A part of per-channel vectors (the
    norms after those convolutions, each returning the shape it took) is split further by what the
    layers beside each took and returned: a norm is told apart by the layer it normalises. None
    where a tensor's calls are unknown or its own calls do not split the group so: layers beside
    a layer are no evidence alone (two ports' wrappers differ, and their shapes meet by chance)."""
    if any(not t.sig for t in (*xs, *ys)):
        return None
    coarse = _split(xs, ys, 1) or _split(xs, ys, 2)
    if coarse is None:
        return None
    return [part for gx, gy in coarse
            for part in ((_split(gx, gy, 0) if all(len(t.cshape) == 1 for t in (*gx, *gy)) else None) or [(gx, gy)])]


def _split(xs: list[T], ys: list[T], level: int) -> list[tuple[list[T], list[T]]] | None:
    """``xs`` and ``ys`` grouped by their signature at ``level``, where that makes several groups
    with the same signatures and as many members on each side; else None."""
    sx: dict[object, list[T]] = defaultdict(list)
    sy: dict[object, list[T]] = defaultdict(list)
    for x in xs:
        sx[x.sig[level]].append(x)
    for y in ys:
        sy[y.sig[level]].append(y)
    if len(sx) < 2 or set(sx) != set(sy) or any(len(sx[k]) != len(sy[k]) for k in sx):
        return None
    return [(sx[k], sy[k]) for k in sx]

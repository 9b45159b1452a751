"""The weight matcher's first pass (``_weightmatch``): what a mapping file says.

``weights`` entries pair two tensors (a part of one, with ``*_part``/``*_groups``/``axis``; in
another axis order, with ``*_axes``; as one of a summed group, with ``sum``) or skip one;
``modules`` entries pair the tensors of two modules by local name. Everything they name is
settled before any other pass runs; a name that is not there, or shapes that cannot be one
tensor, is a ``MappingError`` naming the entry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from .._errors import MappingError
from ..arrays import depth_fits
from ..arrays._layout import same_order_reshape, squeezed
from ._weightmap import SUMMED, WeightMap, inverse_perm
from ._weightsides import WeightPin
from ._weighttensors import MTensor
from ._weighttensors import part_shape as _part_shape

__all__ = ["apply_pins"]

Pair = Callable[..., None]  # the matcher's ``pair(x, y, how, x_part, y_part, axis, used=..., xg=..., yg=...)``


def apply_pins(pins: Sequence[WeightPin], module_pins: Sequence[tuple[str, str]], a: list[MTensor], b: list[MTensor],
               by_name: dict[str, dict[str, MTensor]], wm: WeightMap, pair: Pair) -> None:
    """Pair (or skip) what ``pins`` and ``module_pins`` name (see the module docstring)."""
    reordered: dict[str, tuple[int, ...]] = {}  # tensor -> the axis order its entries give
    for p in pins:
        ta = _find(by_name, "a", p.a, p) if p.a is not None else None
        tb = _find(by_name, "b", p.b, p) if p.b is not None else None
        if p.skip:
            for side, t in (("a", ta), ("b", tb)):
                if t is not None:
                    t.used = True
                    wm.skipped.append((side, t.info.name, f"skipped by {p.source}"))
            continue
        if ta is None or tb is None:
            raise MappingError(f"{p.source}: a weights entry needs both sides, or \"skip\": true")
        for t, axes in ((ta, p.a_axes), (tb, p.b_axes)):
            if axes is None:
                continue
            if t.info.name in reordered:  # once: several entries may name the parts of one tensor
                if reordered[t.info.name] != axes:
                    raise MappingError(f"{p.source}: {t.info.name} is given axes {list(axes)} here and "
                                       f"{list(reordered[t.info.name])} by another entry; give one order")
                continue
            _reorder(t, axes, p.source)
            reordered[t.info.name] = axes
        if p.depth is not None:  # a kernel over pixel phases against the strided one (``_depth``)
            small, big = (ta, tb) if p.depth[0] == "a" else (tb, ta)
            if depth_fits(small.info.shape, big.info.shape) != p.depth[1]:
                raise MappingError(f"{p.source}: {small.info.name} {list(small.info.shape)} is no kernel over "
                                   f"{p.depth[1]}x{p.depth[1]} pixel phases of {big.info.name} {list(big.info.shape)}")
            pair(ta, tb, "mapping")
            wm.pairs[-1] = dataclasses.replace(wm.pairs[-1], depth=p.depth)
            continue
        sa = _part_shape(ta, p.a_part, p.axis, p.a_groups, p.source, p.a_index)
        sb = _part_shape(tb, p.b_part, p.axis, p.b_groups, p.source, p.b_index)
        whole_a, whole_b = p.a_part is None and p.a_index is None, p.b_part is None and p.b_index is None
        if sa != sb and whole_a and whole_b and same_order_reshape(squeezed(sa), squeezed(sb)):
            pair(ta, tb, "reshape")  # a whole tensor in another shape, the same elements in order
            wm.pairs[-1] = dataclasses.replace(wm.pairs[-1], a_axes=p.a_axes, b_axes=p.b_axes, offset=p.offset,
                                               a_blocks=_blocks(p, ta, tb))
            continue
        if squeezed(sa) != squeezed(sb):  # axes of size one aside: a part [1, H, D] of a [H, k*D] tensor
            raise MappingError(
                f"{p.source}: {ta.info.name} {list(ta.info.shape)} (canonical {list(sa)}) cannot be "
                f"{tb.info.name} {list(tb.info.shape)} (canonical {list(sb)}): shapes differ"
            )
        pair(ta, tb, SUMMED if p.summed else "mapping", p.a_part, p.b_part, axis=p.axis,
             used=whole_a and whole_b, xg=p.a_groups, yg=p.b_groups, xi=p.a_index, yi=p.b_index)
        if p.offset:
            wm.pairs[-1] = dataclasses.replace(wm.pairs[-1], offset=p.offset)
        # B's rows reordered before B's part is cut: no order of A's (whole) rows says that
        if p.b_blocks is not None and p.b_part is not None and p.axis == 0:
            raise MappingError(f"{p.source}: {tb.info.name}'s blocks beside a part of it along axis 0 cannot be "
                               f"applied to {ta.info.name}; compare the two traces in the other order")
        if p.b_blocks is not None and p.a_part is not None and p.axis == 0:  # B's blocks would act after A's part
            raise MappingError(f"{p.source}: {tb.info.name}'s blocks beside a part of {ta.info.name} cannot be "
                               f"applied; give the blocks to {ta.info.name}'s side of the entry instead")
        blocks = _blocks(p, ta, tb)
        if blocks is not None:  # gates stacked in another order: kept as A's, B's order inverted
            wm.pairs[-1] = dataclasses.replace(wm.pairs[-1], a_blocks=blocks)
        if not (whole_a and whole_b):
            (ta if whole_a else tb).used = True
            (tb if whole_a else ta).used = True
    for ma, mb in module_pins:
        xs = {t.local: t for t in a if t.info.module == ma and not t.used}
        ys = {t.local: t for t in b if t.info.module == mb and not t.used}
        for local, x in xs.items():
            y = ys.get(local)
            if y is not None and x.cshape == y.cshape:
                pair(x, y, "mapping")


def _blocks(p: WeightPin, ta: MTensor, tb: MTensor) -> tuple[int, ...] | None:
    """The order of A's axis-0 blocks an entry gives (B's order inverted), checked against A's shape."""
    blocks = p.a_blocks or (inverse_perm(p.b_blocks) if p.b_blocks is not None else None)
    if blocks is not None and (not ta.cshape or ta.cshape[0] % len(blocks)):
        raise MappingError(f"{p.source}: {ta.info.name} {list(ta.info.shape)} cannot be taken as {len(blocks)} "
                           f"equal blocks of axis 0 paired with {tb.info.name} {list(tb.info.shape)}")
    return tuple(blocks) if blocks is not None else None


def _find(by_name: dict[str, dict[str, MTensor]], side: str, name: str, p: WeightPin) -> MTensor:
    t = by_name[side].get(name)
    if t is None:
        close = [n for n in by_name[side] if n.rsplit(".", 1)[-1] == name.rsplit(".", 1)[-1]][:3]
        raise MappingError(
            f"{p.source}: no tensor named {name!r} on side {side.upper()}"
            + (f" (similar: {', '.join(close)})" if close else "")
        )
    return t


def _reorder(t: MTensor, axes: tuple[int, ...], source: str) -> None:
    """``t``'s canonical axes in the order a mapping entry gives (``*_axes``)."""
    if len(axes) != len(t.cshape):
        raise MappingError(f"{source}: {len(axes)} axes given for {t.info.name} {list(t.info.shape)}")
    base = t.perm if t.perm is not None else tuple(range(len(t.cshape)))
    t.perm, t.cshape = tuple(base[k] for k in axes), tuple(t.cshape[k] for k in axes)

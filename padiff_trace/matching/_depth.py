"""A convolution over its input's pixel phases against the strided convolution it equals.

YOLOv5's Focus stem stacks the four pixel phases of the image as channels and convolves them
with a 3x3 kernel; the 6x6 stride-2 convolution that replaced it computes the same map
(``arrays._spacedepth``). Two correct ports may keep either: the weights are ``[O, C * r * r,
k, k]`` on one side and ``[O, C, r * k, r * k]`` on the other, the same elements moved, and no
name or shape rule pairs them.

Which stacked channel holds which phase is each author's choice (PixelUnshuffle's order,
TensorFlow's ``space_to_depth``, Focus's). The recorded values tell: the convolution's input is
the space-to-depth, in one known order, of what its module or a module around it received.
Where exactly one known order reproduces it, the two weights are paired with that conversion
(``WeightPair.depth``, ``"<side>_depth"`` in a mapping file). Any other arrangement is no known
order, and the pair stays unmatched: a transfer refuses, naming both tensors.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from ..arrays import SPACE_TO_DEPTH_ORDERS, depth_fits, depth_from_kernel, kernel_from_depth, space_to_depth
from ..trace._schema import Kind
from ._weightmap import TensorInfo, WeightMap, WeightPair

__all__ = ["DEPTH", "depth_as_b", "depth_note", "depth_order", "mark_depths"]

logger = logging.getLogger(__name__)

DEPTH = "space-to-depth"  # how such a pair was found
MAX_ELEMENTS = 1 << 24  # an input larger than this is not read for it
_SAME = 1e-6  # a stacked input this close (relative to its largest magnitude) is the phases


def depth_order(trace: Any, info: TensorInfo, r: int) -> str | None:
    """The known order (``SPACE_TO_DEPTH_ORDERS``) in which the first recorded call of
    ``info``'s module received the pixel phases of a tensor it or an enclosing module received
    first; None when no order, or several, reproduce it."""
    steps = trace.steps()
    if not steps or not info.module:
        return None
    chain = [info.module]
    while chain[-1]:
        chain.append(chain[-1].rpartition(".")[0])
    firsts: dict[str, list[Any]] = {}
    for rec in trace.select(kind=[Kind.MODULE_INPUT], step=steps[0]):
        if rec.module in chain and rec.call_index == 0 and rec.has_data and len(rec.shape) == 4 \
                and str(rec.dtype).startswith(("float", "bfloat")) and rec.numel <= MAX_ELEMENTS:
            firsts.setdefault(rec.module, []).append(rec)
    stacked = [rec for rec in firsts.get(info.module, []) if rec.shape[1] == info.shape[1]]
    if not stacked:
        return None
    x = trace.read(stacked[0].seq).astype(np.float64)
    n, cr, h, w = x.shape
    scale = max(float(np.max(np.abs(x))), 1e-30)
    found = set()
    for rec in (rec for m in chain for rec in firsts.get(m, [])):
        if tuple(rec.shape) != (n, cr // (r * r), h * r, w * r):
            continue
        image = trace.read(rec.seq).astype(np.float64)
        found |= {o for o in SPACE_TO_DEPTH_ORDERS if float(np.max(np.abs(space_to_depth(image, r, o) - x))) <= _SAME * scale}
        if found:
            break
    return found.pop() if len(found) == 1 else None


def mark_depths(wm: WeightMap, order_of: Callable[[str, TensorInfo, int], str | None]) -> None:
    """Pair unmatched weights that are one convolution over stacked pixel phases and one
    strided convolution (``depth_fits``), each the other's only such candidate, where
    ``order_of(side, tensor, r)`` reads the phases' order from that side's recorded values."""
    fits = [(a, b, side, r) for a in wm.unmatched_a for b in wm.unmatched_b if a.is_param and b.is_param
            for side, r in (("a", depth_fits(a.shape, b.shape)), ("b", depth_fits(b.shape, a.shape))) if r is not None]
    for a, b, side, r in fits:
        if sum(x[0] is a or x[1] is b for x in fits) != 1:
            continue  # another candidate: the values of one call would not say which
        order = order_of(side, a if side == "a" else b, r)
        if order is None:
            continue
        wm.pairs.append(WeightPair(a.name, b.name, None, None, DEPTH, depth=(side, r, order)))
        wm.unmatched_a = [t for t in wm.unmatched_a if t is not a]
        wm.unmatched_b = [t for t in wm.unmatched_b if t is not b]
        for name in (a.name, b.name):
            wm.suggestions.pop(name, None)
        wm.mismatched = [m for m in wm.mismatched if a.name not in m and b.name not in m]
        logger.info("%s and %s: a convolution over %s's pixel phases (%s order, as its recorded input shows) against "
                    "the stride-%d convolution it equals", a.name, b.name, "A" if side == "a" else "B", order, r)


def depth_as_b(p: WeightPair, arr: np.ndarray) -> np.ndarray:
    """A's kernel (or its gradient: the same elements move) as B keeps it (``WeightPair.depth``)."""
    assert p.depth is not None
    side, r, order = p.depth
    return kernel_from_depth(arr, r, order) if side == "a" else depth_from_kernel(arr, r, order)


def depth_note(wm: WeightMap | None) -> str:
    """One sentence naming the kernels over pixel phases paired with strided ones (a convention
    the comparison accounts for), or "" where there are none."""
    pairs = [p for p in wm.pairs if p.depth is not None] if wm is not None else []
    if not pairs:
        return ""
    shown = ", ".join(f"{p.a} ~ {p.b} ({p.depth[2]} order, stride {p.depth[1]})" for p in pairs[:2] if p.depth)
    return (f"a convolution over pixel phases stacked as channels against the strided convolution it equals: {shown}"
            f"{f' and {len(pairs) - 2} more' if len(pairs) > 2 else ''} (the recorded input shows the phases' order; "
            "the kernels hold the same elements): a convention, compared as such")

"""Depth-to-space in another channel order: a mapping to try where the values tell.

A sub-pixel upsampler is a convolution with ``C * r * r`` output channels followed by a
depth-to-space that moves each channel to one sub-pixel of an ``r x r`` block. PyTorch's and
Paddle's ``PixelShuffle`` read channel ``c * r * r + i * r + j`` for output channel ``c`` at
sub-pixel ``(i, j)`` (ONNX's "CRD" order); TensorFlow's ``depth_to_space``, and ports written
after it, read ``(i * r + j) * C + c`` ("DCR", ``DEPTH_TO_SPACE_ORDERS``). Both are correct, and
a port that copies the convolution as it is computes another picture: its output channels must
be permuted. Where a call diverges whose input agrees and whose output holds, slot by slot, the
channels of a convolution inside it that agreed, ``subpixel_alternatives`` reads which channel
fills each sub-pixel on each side; when both sides follow a known order and the orders differ,
it gives the mapping document that pairs the convolution's output channels accordingly. Any
other arrangement (row and column offsets swapped) is not a known order: a bug stays a bug.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ._pairings import Alternative, _pattern, _shapes

if TYPE_CHECKING:
    from ._report import Report

__all__ = ["DEPTH_TO_SPACE_ORDERS", "slot_channels", "subpixel_alternatives"]

# name -> the channel read for output channel c at sub-pixel (i, j) of an r x r block, C outputs
DEPTH_TO_SPACE_ORDERS: dict[str, Callable[[int, int, int, int, int], int]] = {
    "CRD (PixelShuffle)": lambda c, i, j, r, n: c * r * r + i * r + j,
    "DCR (TensorFlow depth_to_space)": lambda c, i, j, r, n: (i * r + j) * n + c,
}
_LIMIT = 1 << 22  # elements: larger maps are not searched slot by slot
_SAME = 1e-5  # a slot and a channel this close (relative to the largest magnitude) are one value


def slot_channels(x: np.ndarray, y: np.ndarray, r: int) -> np.ndarray | None:
    """``out[c, i, j]``: the channel of ``x`` ([N, C*r*r, H, W]) that ``y`` ([N, C, H*r, W*r])
    holds at output channel c, sub-pixel (i, j); None where a slot is no channel, or more than one."""
    n_out = y.shape[1]
    flat = x.transpose(1, 0, 2, 3).reshape(x.shape[1], -1).astype(np.float64)
    tol = _SAME * max(float(np.abs(flat).max()), 1e-30)
    out = np.empty((n_out, r, r), dtype=np.int64)
    for c in range(n_out):
        for i in range(r):
            for j in range(r):
                slot = y[:, c, i::r, j::r].reshape(-1).astype(np.float64)
                hits = np.flatnonzero(np.abs(flat - slot).max(axis=1) <= tol)
                if len(hits) != 1:
                    return None
                out[c, i, j] = int(hits[0])
    return out


def _order_of(slots: np.ndarray, r: int) -> str | None:
    n = slots.shape[0]
    for name, f in DEPTH_TO_SPACE_ORDERS.items():
        if all(slots[c, i, j] == f(c, i, j, r, n) for c in range(n) for i in range(r) for j in range(r)):
            return name
    return None


def subpixel_alternatives(report: Report) -> list[Alternative]:
    """The mapping document pairing the output channels of the convolution inside the call the
    first divergence names, when that call's output is its convolution's output put into space in
    a known order on each side, the orders differing (module docstring); empty otherwise."""
    d, wm = report.first_divergence, report.weight_map
    if d is None or wm is None or d.located is None or d.pair.role != "output":
        return []
    ra, rb = d.pair.a, d.pair.b
    if len(ra.shape) != 4 or tuple(ra.shape) != tuple(rb.shape) or ra.numel > _LIMIT:
        return []
    t = report.pairs
    cp = t.col("cp")
    named = d.pair.call_pair  # the pair whose output differs (the side named may be a call inside it)
    call = named.a if named is not None else d.located.a.call
    inside = report.a.descendants(call)
    rows = np.flatnonzero(t.role_mask("output") & t.passed & (cp >= 0) & (t.col("step") == d.pair.step))
    for i in rows.tolist():
        pair = t.call_pairs[int(cp[i])]
        if pair.a.id not in inside:
            continue
        xa, xb = t[i].a, t[i].b
        if len(xa.shape) != 4 or tuple(xa.shape) != tuple(xb.shape) or xa.shape[0] != ra.shape[0]:
            continue
        r = ra.shape[-1] // xa.shape[-1]
        if r < 2 or ra.shape[-2] != xa.shape[-2] * r or ra.shape[-1] != xa.shape[-1] * r or xa.shape[1] != ra.shape[1] * r * r:
            continue
        if xa.numel > _LIMIT:
            continue
        sa = slot_channels(np.asarray(xa.read()), np.asarray(ra.read()), r)
        sb = slot_channels(np.asarray(xb.read()), np.asarray(rb.read()), r)
        if sa is None or sb is None:
            continue
        oa, ob = _order_of(sa, r), _order_of(sb, r)
        if oa is None or ob is None or oa == ob:
            return []  # an arrangement no known order explains, or the same order: not a layout
        return _mapping(report, pair.a.module, sa, sb, oa, ob, call.module)
    return []


def _mapping(report: Report, conv: str, sa: np.ndarray, sb: np.ndarray, oa: str, ob: str, holder: str) -> list[Alternative]:
    wm = report.weight_map
    assert wm is not None
    ka, kb = wm.side_keys()
    shapes = _shapes(report.a)
    entries: list[dict[str, Any]] = []
    pairs = sorted(zip(sb.reshape(-1).tolist(), sa.reshape(-1).tolist()))
    for p in wm.pairs:
        if p.a.rpartition(".")[0] != conv or not p.transfer or p.a_part is not None or p.b_part is not None:
            continue
        shape = shapes.get(p.a)
        if shape is None or shape[0] != len(pairs) or p.a_perm not in (None, tuple(range(len(shape)))):
            continue
        for kb_ch, ka_ch in pairs:
            entries.append({ka: p.a, kb: p.b, f"{ka}_part": [ka_ch, ka_ch + 1], f"{kb}_part": [kb_ch, kb_ch + 1], "axis": 0})
    if not entries:
        return []
    said = f"the output channels of {conv} paired as {ka}'s depth-to-space in {oa} order against {kb}'s in {ob} order"
    doc = {"version": 1, "weights": entries, "note": f"written by padiff-trace run: {said}"}
    return [Alternative(doc, said, _pattern(holder))]

"""The layout a call pair's inputs were paired under, kept for the values inside it that one side reshapes.

One port keeps a series ``[b, features, time]`` and flattens it for a BatchNorm over the whole
plane (``[b, features * time]``); the other keeps ``[b, time, features]`` and its norm takes the
plane as it is. The shapes allow two readings of the flattened value: split in order into
``[b, time, features]`` (a head split) or split into ``[b, features, time]`` and its axes
permuted. Inside a call pair whose inputs were paired under a permutation (the enclosing block's
``[b, f, t]`` against ``[b, t, f]``), a value one side merges or splits is read in that layout:
viewed in the shape the enclosing input has on that side, then permuted as it was. A module that
returns what it received in that shape returns it in that layout too.

Where the values tell, they choose, as for layouts carried through framework layers
(``_layout_flow``): the reading as stored stands where it agrees (to 1e-2 relative L2) and the
carried one does not; otherwise the carried reading stands (a bug there is then measured in the
layout the enclosing call keeps, not across layouts). Where both sides flattened their own layout
into one shape (``[b, f * t]`` against ``[b, t * f]``), as stored is what the shapes say, and the
carried reading takes its place only where it agrees and the stored one does not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from padiff_trace import Record
from padiff_trace.arrays import axis_permutation

from ._layout_flow import _agree
from ._pairing import CallPair
from ._records import RecordLike, ReshapedView

__all__ = ["ScopeLayouts"]

Layout = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]  # A's shape, B's shape, A's axes into B's
Leaf = tuple[RecordLike, RecordLike, "tuple[int, ...] | None"]

_LIMIT = 1 << 22  # elements: larger values keep the carried reading unread


def _readable(*rs: RecordLike) -> bool:
    return all(r.is_tensor and r.has_data and 0 < r.numel <= _LIMIT for r in rs)


def _chosen(leaf: Leaf, carried: Leaf, same_shape: bool) -> Leaf:
    """The leaf as stored or as carried, by the values (each side read once): as stored where it
    agrees (to 1e-2, ``_layout_flow._agree``) and the carried reading does not; where the shapes
    are the same on both sides (each side flattened its own layout), the carried reading only
    where it agrees and the stored one does not. Values too large to read keep the carried
    reading where the shapes differ, the stored one where they are the same."""
    x, y, _ = leaf
    va, vb, p = carried
    assert p is not None
    if not _readable(x, y):
        return leaf if same_shape else carried
    a, b = np.asarray(x.read(), np.float64), np.asarray(y.read(), np.float64)
    stored = _agree(a.reshape(b.shape), b)  # a split or merge in order (the sizes are the same)
    other = _agree(np.transpose(a.reshape(va.shape), p), b.reshape(vb.shape))
    if same_shape:
        return carried if other and not stored else leaf
    return leaf if stored and not other else carried


class ScopeLayouts:
    """The layouts each call pair's inputs were paired under (one step's calls, parents first)."""

    def __init__(self) -> None:
        self._of: dict[int, list[Layout]] = {}  # A call id -> its inputs' layouts
        self._parent: dict[int, int] = {}  # A call id -> its parent's

    def _carried(self, call: int) -> list[Layout]:
        out: list[Layout] = []
        seen = set()
        while call >= 0 and call not in seen:
            seen.add(call)
            out.extend(self._of.get(call, ()))
            call = self._parent.get(call, -1)
        return out

    def inputs(self, pair: CallPair, ins: Sequence[Leaf]) -> list[Leaf]:
        """``ins`` with a value one side reshaped read in the layout of the call pair around it;
        the pair's own layouts are kept for the calls inside it."""
        ca = pair.a
        self._parent[ca.id] = ca.parent
        carried = self._carried(ca.parent)
        out = [self._read(leaf, carried) for leaf in ins] if carried else list(ins)
        own: list[Layout] = []
        for x, y, p in out:
            q = p if p is not None else axis_permutation(tuple(x.shape), tuple(y.shape))
            if q is not None and q != tuple(range(len(q))) and len(x.shape) == len(q):
                own.append((tuple(x.shape), tuple(y.shape), q))
        if own:
            self._of[ca.id] = own
        return out

    @staticmethod
    def outputs(ins: Sequence[Leaf], outs: Sequence[Leaf]) -> list[Leaf]:
        """``outs`` read as the pair's inputs were where one input was read reshaped and an output
        has that input's shapes on both sides (a norm over the plane returns the plane)."""
        read = {(x.base.shape if isinstance(x, ReshapedView) else x.shape,
                 y.base.shape if isinstance(y, ReshapedView) else y.shape, x.shape, y.shape, p)
                for x, y, p in ins if isinstance(x, ReshapedView) or isinstance(y, ReshapedView)}
        if len(read) != 1:
            return list(outs)
        ((sa, sb, va, vb, p),) = read
        got: list[Leaf] = []
        for x, y, q in outs:
            if q is None and isinstance(x, Record) and isinstance(y, Record) and x.shape == sa and y.shape == sb:
                leaf = (ReshapedView(x, va) if va != sa else x, ReshapedView(y, vb) if vb != sb else y, p)
                got.append(_chosen((x, y, None), leaf, sa == sb))
            else:
                got.append((x, y, q))
        return got

    @staticmethod
    def _read(leaf: Leaf, carried: list[Layout]) -> Leaf:
        x, y, p = leaf
        if p is not None or not (isinstance(x, Record) and isinstance(y, Record)) or x.numel != y.numel:
            return leaf
        if axis_permutation(tuple(x.shape), tuple(y.shape)) is not None:
            return leaf  # the shapes say the layout themselves (``permuted_axes``)
        same = tuple(x.shape) == tuple(y.shape)
        for sa, sb, q in carried:  # nearest enclosing call first
            if math.prod(sa) != x.numel:
                continue
            va = ReshapedView(x, sa) if tuple(x.shape) != sa else x
            vb = ReshapedView(y, sb) if tuple(y.shape) != sb else y
            if va is x and vb is y:
                continue
            return _chosen(leaf, (va, vb, q), same)
        return leaf

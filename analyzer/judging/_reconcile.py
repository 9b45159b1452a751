"""Shapes reconciled before a pair is measured: an ordered list of *reconcilers*.

A plan item pairs two records whose shapes may differ for reasons that are not errors: one
library merged leading axes, split a head, kept a broadcastable shape, or orders the axes
of an activation differently. Each reconciler looks at an item and either returns the pair
to measure (``Reconciled``: what is read on each side, A's axis permutation, and a note of
what was done) or declines (None); ``reconcile`` tries them in order, the first that fits
wins - in the spirit of the ``Pair`` classes of ``torch.testing``. When none fits, the pair
is a shape mismatch (or, for op records, two different decompositions: not compared).

Order (each is tried only when those before it declined):

1. ``same_shape``       A (axes permuted as the plan says) has B's shape
2. ``permuted_axes``    an activation ``[b, s, h, d]`` against ``[b, h, s, d]``: the one
                        permutation the shapes allow (with axes of equal size, the one that
                        keeps them in order: NCHW vs NHWC), never flattened across layouts
3. ``flattened``        one side merged leading axes (``[2, 12, 64]`` vs ``[24, 64]``)
4. ``head_split``       a head split or merge (``[d, d]`` vs ``[d, heads, head_dim]``)
5. ``split_permuted``   heads split and moved (``[b, heads, s, d]`` vs ``[b, s, heads * d]``):
                        the one axis order the shapes allow, then the split or merge
6. ``summed_gradient``  the gradient of a broadcast tensor: the larger side summed over the
                        broadcast axes (``_reduce``)
7. ``newest_positions`` decoding with a key/value cache against recomputing the prefix: one
                        side's call sees the newest position only (``[b, 1, d]``), the
                        other's all of them (``[b, s, d]``); compared with the other's last
8. ``broadcast``        a broadcastable shape (a mask ``[2, 1, 1, S]`` vs ``[2, 1, S, S]``):
                        both read broadcast to the common shape (``BroadcastView``)
9. ``copies``           k copies of one value side by side on one side (a projection shared on
                        one side, packed k times on the other), the value once on the other
10. ``computed_once``   a value computed once on one side (``[h * w, c]``), per batch item on
                        the other (``[b, c, h, w]``): each item in the other's layout
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from padiff_trace import Record
from padiff_trace.arrays import axis_permutation, inversions, newest_axis, same_order_reshape, squeezed, stable_permutation, value_kind

from ..alignment._computed import ComputedView
from ..alignment._item import PlanItem
from ..alignment._records import RecordLike
from ._metrics import BroadcastView, ReshapedView, broadcast_shape
from ._reduce import GRAD_ROLES, summed_pair

__all__ = ["RECONCILERS", "WEIGHT_ROLES", "Reconciled", "Reconciler", "axis_permutation", "rearranged", "reconcile"]

WEIGHT_ROLES = ("param", "buffer", "param_grad")  # weights pair through the weight map, in their canonical layouts


@dataclass(frozen=True)
class Reconciled:
    """A pair ready to measure: ``a`` read with its axes permuted by ``perm`` holds, element by
    element in C order, what ``b`` holds; both are compared in B's shape (``shape``). ``note``
    says what was done to get there ("" when nothing was). ``stored``: ``a`` and ``b`` are read
    as stored (no view, no reshaping), so two pairs of the same stored bytes measure alike."""

    a: RecordLike
    b: RecordLike
    perm: tuple[int, ...] | None
    note: str = ""
    stored: bool = False

    @property
    def shape(self) -> tuple[int, ...]:
        """The logical shape both sides are compared in (the metrics' argmax is in it)."""
        return self.b.shape


Reconciler = Callable[[PlanItem], Reconciled | None]  # a reconciled pair, or None: declined


def _permuted(shape: tuple[int, ...], perm: tuple[int, ...] | None) -> tuple[int, ...]:
    return tuple(shape[k] for k in perm) if perm is not None else shape


def _activation(item: PlanItem) -> bool:
    """Values of a run (not weights in their canonical layout), in their recorded layout, with
    data on both sides: the shapes a library chose may be reconciled with the other's."""
    return item.perm is None and item.role not in WEIGHT_ROLES and item.a.has_data and item.b.has_data


def _shapes(item: PlanItem) -> str:
    return f"(A {list(item.a.shape)}, B {list(item.b.shape)})"


def same_shape(item: PlanItem) -> Reconciled | None:
    """A, its axes permuted as the plan says, has B's shape: nothing to reconcile."""
    if _permuted(item.a.shape, item.perm) != item.b.shape:
        return None
    note = ""
    if item.perm is not None and item.a.shape == item.b.shape and item.role not in WEIGHT_ROLES:
        # an activation whose axes of equal size leave its layout to the layers around it (``_layout_flow``)
        note = f"compared with A's axes permuted {list(item.perm)}: the layout its layers carry (axes of equal size)"
    return Reconciled(item.a, item.b, item.perm, note, stored=True)


def permuted_axes(item: PlanItem) -> Reconciled | None:
    """One library's ``[b, s, h, d]`` is the other's ``[b, h, s, d]``: compared under the one
    permutation the shapes allow (weights keep the layout their pairing gave). Never where only
    axes of size one move (``[b, 1, s, 1]`` against ``[b, 1, 1, s]``): the same numbers
    broadcast along another axis, which is what a bug does."""
    if item.perm is not None or item.role in WEIGHT_ROLES:
        return None
    if [n for n in item.a.shape if n != 1] == [n for n in item.b.shape if n != 1]:
        return None  # only size-one axes move: another broadcast (a mask over queries, not keys), not a layout
    p, kept = axis_permutation(item.a.shape, item.b.shape), ""
    if p is None:  # axes of equal size: the order that keeps them in place
        p, kept = stable_permutation(item.a.shape, item.b.shape), ", axes of equal size kept in order"
    if p is None:
        return None
    note = f"compared with A's axes permuted {list(p)}{kept} {_shapes(item)}"
    return Reconciled(item.a, item.b, p, note, stored=True)


def flattened(item: PlanItem) -> Reconciled | None:
    """One side merged leading axes (``[2, 12, 64]`` vs ``[24, 64]``): the same values in the
    same order, compared flat."""
    a, b = item.a, item.b
    if not (_activation(item) and a.numel == b.numel and a.shape[-1:] == b.shape[-1:]):
        return None
    return Reconciled(a, b, None, f"compared flattened {_shapes(item)}")


def head_split(item: PlanItem) -> Reconciled | None:
    """A head split or merge (``[d, d]`` vs ``[d, heads, head_dim]``): the same values in the
    same order, A's axes permuted as the plan says first."""
    a, b = item.a, item.b
    shape = _permuted(a.shape, item.perm)
    if item.role in WEIGHT_ROLES and a.numel == b.numel and squeezed(shape) == squeezed(tuple(b.shape)):
        # a weight paired by the map, with axes of size one elsewhere (one item of a stack ``[1, d]``
        # against a Linear's ``[d, 1]``): the same elements in the same order
        return Reconciled(a, b, item.perm, f"compared reshaped, axes of size one aside {_shapes(item)}")
    if a.numel != b.numel or not (same_order_reshape(shape, tuple(b.shape))
                                  or same_order_reshape(squeezed(shape), squeezed(tuple(b.shape)))):
        return None  # (axes of size one move no element: [g, o, i] against a grouped 1x1 conv's [g * o, i, 1, 1])
    return Reconciled(a, b, item.perm, f"compared reshaped, a head split or merge {_shapes(item)}")


MAX_PERMUTED_RANK = 6  # at most 720 axis orders are tried


def _split_order(small: tuple[int, ...], big: tuple[int, ...]) -> tuple[int, ...] | None:
    """The order of ``big``'s axes that makes it ``small`` with some axes split into consecutive
    ones, moving the fewest pairs of axes (heads moved past the sequence keep their place before
    head_dim); None when no order does, or when two orders tie (axes of equal size)."""
    if len(big) > MAX_PERMUTED_RANK or len(small) >= len(big):
        return None
    found = sorted(
        (inversions(q), q) for q in itertools.permutations(range(len(big)))
        if same_order_reshape(small, tuple(big[k] for k in q))
    )
    if not found or (len(found) > 1 and found[0][0] == found[1][0]):
        return None
    return found[0][1]


def split_permuted(item: PlanItem) -> Reconciled | None:
    """Heads split and moved: one library's ``[b, heads, s, d]`` against the other's
    ``[b, s, heads * d]`` (a projection that returns its heads apart). The one axis order the
    shapes allow, then the split or merge, is the conversion; values are never compared
    flattened across layouts."""
    a, b = item.a, item.b
    if not _activation(item) or a.numel != b.numel or not isinstance(a, Record):
        return None
    if len(a.shape) > len(b.shape):  # A's axes reordered, then merged into B's
        q = _split_order(tuple(b.shape), tuple(a.shape))
        if q is None:
            return None
        return Reconciled(a, b, q, f"compared with A's axes permuted {list(q)} and merged {_shapes(item)}")
    q = _split_order(tuple(a.shape), tuple(b.shape))  # A split into B's axes in another order
    if q is None:
        return None
    inner = tuple(b.shape[k] for k in q)
    back = tuple(q.index(k) for k in range(len(q)))
    return Reconciled(ReshapedView(a, inner), b, back,
                      f"compared with A split to {list(inner)} and its axes permuted {list(back)} {_shapes(item)}")


def rearranged(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """``x`` in ``shape`` by the conversions the reconcilers allow between activations: the one
    axis permutation, a split or merge, heads split and moved (None: none fits)."""
    if x.shape == shape:
        return x
    if x.size != math.prod(shape):
        return None
    p = axis_permutation(x.shape, shape)
    if p is not None:
        return x.transpose(p)
    if same_order_reshape(x.shape, shape):
        return x.reshape(shape)
    if x.ndim > len(shape):
        q = _split_order(shape, x.shape)
        return None if q is None else x.transpose(q).reshape(shape)
    q = _split_order(x.shape, shape)
    if q is None:
        return None
    inner = tuple(shape[k] for k in q)
    return x.reshape(inner).transpose(tuple(q.index(k) for k in range(len(q))))


def _common(item: PlanItem) -> tuple[int, ...] | None:
    """The shape both sides of an activation pair broadcast to (None: they do not, or it is too large)."""
    return broadcast_shape(item.a.shape, item.b.shape) if _activation(item) else None


def summed_gradient(item: PlanItem) -> Reconciled | None:
    """The gradient of a broadcast tensor is the gradient summed over the broadcast axes: the
    larger side is summed down to the smaller one's shape."""
    a, b = item.a, item.b
    if item.role not in GRAD_ROLES or not (isinstance(a, Record) and isinstance(b, Record)):
        return None
    common = _common(item)
    summed = summed_pair(a, b, common) if common is not None else None
    if summed is None:
        return None
    return Reconciled(*summed, None, f"larger side summed over the broadcast axes {_shapes(item)}")


def broadcast(item: PlanItem) -> Reconciled | None:
    """One side keeps a broadcastable shape (a mask ``[2, 1, 1, S]`` vs ``[2, 1, S, S]``): both
    are compared broadcast to the common shape. Values of two kinds (``value_kind``) of two ranks
    that broadcast only by expanding both sides are two representations, not broadcast: numpy
    aligns the last axes, so the ids' 0/1 mask ``[B, S]`` against a boolean ``[B, S, 1, S]`` mask
    would set the batch against the singleton axis."""
    a, b = item.a, item.b
    common = _common(item)
    if common is None or not (isinstance(a, Record) and isinstance(b, Record)):
        return None
    if (value_kind(a.dtype) != value_kind(b.dtype) and len(a.shape) != len(b.shape)
            and common not in (tuple(a.shape), tuple(b.shape))):
        return None
    va: RecordLike = BroadcastView(a, common) if a.shape != common else a
    vb: RecordLike = BroadcastView(b, common) if b.shape != common else b
    return Reconciled(va, vb, None, f"compared broadcast to {list(common)} {_shapes(item)}")


def _newest(r: Record, axis: int, to: tuple[int, ...]) -> np.ndarray:
    """``r``'s last position along ``axis``, broadcast to ``to``."""
    x = np.asarray(r.read())
    return np.broadcast_to(np.take(x, [x.shape[axis] - 1], axis=axis), to)


def newest_positions(item: PlanItem) -> Reconciled | None:
    """A call that sees only the newest position of a sequence (``[b, 1]`` token ids,
    ``[b, 1, d]`` hidden states: a decoder stepping with a key/value cache) against the other
    side's call seeing all of them (``[b, s]``, ``[b, s, d]``, positions ``[s]`` shared by the
    batch: the prefix computed again): a causal model's values at the newest position are the
    same either way, so the small side is compared with the other's last position (broadcast
    over axes it keeps of size one; the shapes: ``newest_axis``). A 4-D mask ``[b, 1, 1, s]``
    stays broadcast."""
    a, b = item.a, item.b
    if item.role in (*WEIGHT_ROLES, *GRAD_ROLES) or not _activation(item):
        return None
    if not (isinstance(a, Record) and isinstance(b, Record)):
        return None
    for big, small in ((a, b), (b, a)):
        axis = newest_axis(tuple(small.shape), tuple(big.shape))
        if axis is None:
            continue
        n = big.shape[axis]
        view = ComputedView(big, functools.partial(_newest, big, axis, tuple(small.shape)), f"its last of {n} positions",
                            tuple(small.shape))
        note = f"one side sees the newest of {n} positions (a key/value cache): compared with the other's last {_shapes(item)}"
        return Reconciled(view, small, None, note) if big is a else Reconciled(small, view, None, note)
    return None


def _per_item(r: RecordLike, shape: tuple[int, ...], summed: bool) -> np.ndarray:
    """Each item of ``r``'s values (its first axis) in ``shape`` (``computed_once`` checked that
    ``rearranged`` converts them); with ``summed``, their sum."""
    x = np.asarray(r.read())
    items = [x.astype(np.float64).sum(axis=0)] if summed else list(x)
    out = [rearranged(v, shape) for v in items]
    assert all(v is not None for v in out)
    return out[0] if summed else np.stack(out)  # type: ignore[arg-type,return-value]


def computed_once(item: PlanItem) -> Reconciled | None:
    """One side computes a value once (a positional encoding ``[h * w, c]``), the other once per
    batch item (``[b, c, h, w]``): each item, in the once side's layout (the conversions of
    ``rearranged``), against that value repeated; a gradient summed over the batch first (the
    once side's gradient is the sum of the items')."""
    a, b = item.a, item.b
    if item.perm is not None or item.role in WEIGHT_ROLES or not (a.has_data and b.has_data):
        return None
    if not (isinstance(a, Record) and isinstance(b, Record)) or max(a.numel, b.numel) > BroadcastView.LIMIT:
        return None
    for big, small in ((a, b), (b, a)):
        n = big.shape[0] if big.shape else 0
        rest = tuple(big.shape[1:])
        if n < 2 or math.prod(rest) != small.numel:
            continue
        shape = tuple(small.shape)
        if rearranged(np.zeros(rest, np.int8), shape) is None:
            continue
        grads = item.role in GRAD_ROLES
        what = f"the gradient summed over the {n} items" if grads else f"each of {n} items in the other side's layout"
        view = ComputedView(big, functools.partial(_per_item, big, shape=shape, summed=grads), what,
                            shape if grads else (n, *shape))
        other: RecordLike = small if grads else BroadcastView(small, (n, *shape))
        note = f"computed once on one side, per batch item on the other: {what} {_shapes(item)}"
        return Reconciled(view, other, None, note) if big is a else Reconciled(other, view, None, note)
    return None


_COPIES_REL = 1e-4  # the blocks of a value that holds copies of one agree to this relative L2 error


def _blocks(r: RecordLike, axis: int, k: int) -> np.ndarray:
    """``r``'s values cut into ``k`` equal blocks along ``axis``, stacked first."""
    return np.stack(np.split(np.asarray(r.read()), k, axis=axis))


def copies(item: PlanItem) -> Reconciled | None:
    """One side's value holds k copies (2 to 4) of one value side by side along one axis, the
    other side's is that value once (a projection one model shares between two uses and calls
    twice, the other packs twice in one layer: GATv2's ``share_weights``): each copy against the
    other side's value. Only where the copies agree among themselves (a fused q|k|v's blocks
    differ: no copies). A gradient is compared as the sum of the copies' gradients, only where it
    is that sum (``_summed_copies``)."""
    a, b = item.a, item.b
    if item.perm is not None or item.role in WEIGHT_ROLES or not (item.role in GRAD_ROLES or _activation(item)):
        return None
    if not (isinstance(a, Record) and isinstance(b, Record) and a.has_data and b.has_data):
        return None
    if len(a.shape) != len(b.shape) or max(a.numel, b.numel) > BroadcastView.LIMIT:
        return None
    apart = [k for k, (m, n) in enumerate(zip(a.shape, b.shape)) if m != n]
    if len(apart) != 1:
        return None
    axis = apart[0]
    big, small = (a, b) if a.shape[axis] > b.shape[axis] else (b, a)
    k, rest = divmod(big.shape[axis], small.shape[axis]) if small.shape[axis] else (0, 1)
    if rest or not 2 <= k <= 4:
        return None
    blocks = _blocks(big, axis, k).astype(np.float64)
    if item.role in GRAD_ROLES:  # the gradient of a value used k times: the sum of the copies' gradients
        return _summed_copies(item, big, small, axis, k, blocks)
    scale = float(np.linalg.norm(blocks[0]))
    if scale == 0.0 or any(float(np.linalg.norm(x - blocks[0])) > _COPIES_REL * scale for x in blocks[1:]):
        return None
    shape = (k, *small.shape)
    view = ComputedView(big, lambda: blocks, f"its {k} copies along axis {axis}", shape)  # read once, above
    note = f"one side's value holds {k} copies of the other's along axis {axis} (one module shared, packed {k} times on the other side) {_shapes(item)}"
    other: RecordLike = BroadcastView(small, shape)
    return Reconciled(view, other, None, note) if big is a else Reconciled(other, view, None, note)


def _summed_copies(item: PlanItem, big: Record, small: Record, axis: int, k: int, blocks: np.ndarray) -> Reconciled | None:
    """``copies`` for a gradient: the one value's gradient against the sum of the k copies'
    gradients, only where it is that sum (to ``_COPIES_REL``): a fused q|k|v's gradient is no sum."""
    total = blocks.sum(axis=0)
    mine = np.asarray(small.read(), np.float64)
    scale = float(np.linalg.norm(total))
    if scale == 0.0 or total.shape != mine.shape or float(np.linalg.norm(mine - total)) > _COPIES_REL * scale:
        return None
    view = ComputedView(big, lambda: total, f"its {k} copies' gradients summed along axis {axis}", tuple(small.shape))
    note = f"one side's value holds {k} copies of the other's along axis {axis}: its gradient summed over them {_shapes(item)}"
    return Reconciled(view, small, None, note) if small is item.b else Reconciled(small, view, None, note)


RECONCILERS: tuple[Reconciler, ...] = (
    same_shape, permuted_axes, flattened, head_split, split_permuted, summed_gradient, newest_positions, broadcast,
    copies, computed_once,
)


def reconcile(item: PlanItem) -> Reconciled | None:
    """The pair to measure for ``item``: the first reconciler that fits; None when none does."""
    for r in RECONCILERS:
        found = r(item)
        if found is not None:
            return found
    return None

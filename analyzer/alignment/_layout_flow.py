"""Activation layouts carried through framework layers, for shapes that cannot say them.

Two ports may keep one activation in two layouts: PointNet's points ``[b, c, n]`` for a
pointwise ``Conv1D`` on one side, ``[b, n, c]`` for a ``Linear`` on the other. Where the
shapes differ (``c != n``) the comparison finds the permutation from them; where they are
equal (64 points of 64 channels) both readings fit, and comparing as stored is comparing
across layouts. Framework layers (convolutions, Linear, norms, activations) return their
output in the layout of their input, so:

* a pair of framework layers whose inputs were paired under one permutation compares its
  outputs under it too, where their shapes leave it open (equal shapes, or a side that
  merged axes);
* a value so paired keeps that permutation where it is the input of a later call (the
  same value: dtype, shape and statistics), again only where the shapes leave it open.

Statistics do not tell a square value from its transpose (one side transposes back before a
BatchNorm), so where both readings are open the values choose: the reading under which the
two sides agree (to 1e-2 in relative L2) where only one does; where neither does (a bug
there), the carried one. Shapes that say the layout themselves are left to the comparison's
reconcilers."""

from __future__ import annotations

import numpy as np

from padiff_trace import Record
from padiff_trace.arrays import same_order_reshape, stable_permutation
from padiff_trace.matching import POINTWISE_AS, canonical_type, is_known_type

from ._pairing import CallPair
from ._records import stats_identity

__all__ = ["LayoutFlow"]

Leaves = list[tuple[Record, Record, "tuple[int, ...] | None"]]


def _key(r: Record) -> tuple[object, ...] | None:
    if not r.is_tensor or not r.has_data or r.numel < 2:
        return None
    return (r.dtype, tuple(r.shape), *stats_identity(r.stats))


def _open(a: tuple[int, ...], b: tuple[int, ...], perm: tuple[int, ...]) -> bool:
    """Whether ``perm`` fits shapes that do not tell it themselves: equal shapes (axes of equal
    size), or B merging A's axes once they are permuted."""
    if len(a) != len(perm) or perm == tuple(range(len(perm))):
        return False
    moved = tuple(a[k] for k in perm)
    if a == b:
        return moved == b
    return len(b) < len(a) and same_order_reshape(moved, b)


_AGREE = 1e-2  # relative L2 under which a reading is taken as the same values (a layout, not a bug)


def _agree(x: np.ndarray, y: np.ndarray) -> bool:
    scale = float(np.linalg.norm(y)) or 1.0
    return x.shape == y.shape and float(np.linalg.norm(x - y)) <= _AGREE * scale


def _reading(x: Record, y: Record, perm: tuple[int, ...]) -> tuple[int, ...] | None:
    """``perm`` or None (as stored) for an open pair: the one reading whose values agree,
    else ``perm``."""
    if x.shape != y.shape:  # merged axes: only the permuted reading is a reshape away
        return perm
    a = np.asarray(x.read(), np.float64)
    b = np.asarray(y.read(), np.float64)
    as_stored, permuted = _agree(a, b), _agree(np.transpose(a, perm), b)
    return None if as_stored and not permuted else perm


def _by_types(pair: CallPair, rank: int) -> tuple[int, ...] | None:
    """A's axes into B's for a convolution paired with a Linear (channels on axis 1 against the
    last axis), else None."""
    ta, tb = canonical_type(pair.a.module_type), canonical_type(pair.b.module_type)
    if rank < 3 or not is_known_type(pair.a.module_type) or not is_known_type(pair.b.module_type):
        return None
    if POINTWISE_AS.get(ta) == tb:  # A channels-first, B channels-last
        return (0, *range(2, rank), 1)
    if POINTWISE_AS.get(tb) == ta:
        return (0, rank - 1, *range(1, rank - 1))
    return None


class LayoutFlow:
    """The permutations values were paired under so far (one step's calls, in call order)."""

    def __init__(self) -> None:
        self._of: dict[tuple[object, ...], tuple[int, ...]] = {}

    def inputs(self, pair: CallPair, ins: Leaves) -> Leaves:
        """``ins`` with a value's known permutation where its shapes leave it open; failing that,
        the permutation the layers' types say (a pointwise convolution's channels on axis 1, a
        Linear's on the last: ``POINTWISE_AS``)."""
        out: Leaves = []
        for x, y, p in ins:
            key = _key(x) if p is None else None
            carried = self._of.get(key) if key is not None else None
            if carried is None and p is None:
                carried = _by_types(pair, len(x.shape))
            open_ = carried is not None and _open(tuple(x.shape), tuple(y.shape), carried)
            out.append((x, y, _reading(x, y, carried) if open_ and carried is not None else p))
        return out

    def outputs(self, pair: CallPair, ins: Leaves, outs: Leaves) -> Leaves:
        """``outs`` of a pair of framework layers under their inputs' one permutation, where the
        shapes leave it open; every output so paired is remembered for its consumers."""
        if not (is_known_type(pair.a.module_type) and is_known_type(pair.b.module_type)):
            return outs
        perms = set()
        for x, y, p in ins:
            q = p
            if q is None and len(x.shape) == len(y.shape) and x.shape != y.shape:
                q = stable_permutation(tuple(x.shape), tuple(y.shape))
            if q is not None:
                perms.add(q)
        if len(perms) != 1:
            return outs
        (perm,) = perms
        got: Leaves = []
        for x, y, p in outs:
            open_ = p is None and _open(tuple(x.shape), tuple(y.shape), perm)
            chosen = _reading(x, y, perm) if open_ else p
            key = _key(x)
            if key is not None and len(x.shape) == len(perm) and (chosen is not None or not open_):
                self._of[key] = perm
            got.append((x, y, chosen))
        return got

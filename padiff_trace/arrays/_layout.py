"""Array layout helpers shared by the recorder and the analyzer."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

__all__ = ["axes_between", "axes_candidates", "blocks_in_order", "concat_axis", "inversions", "merge_order", "packed_part", "packed_rows", "put_packed_part", "same_order_reshape", "squeezed", "transposed_rows"]


def transposed_rows(m: np.ndarray, r0: int = 0, r1: int | None = None, tile: int = 64) -> np.ndarray:
    """Rows [r0, r1) of ``m.T`` (``m`` 2-D) as a C-contiguous array, copied in tiles that stay
    in cache: numpy's strided copy of a transposed 4 MB matrix is ~6x slower (Linear weights,
    stored [in, out] by paddle and [out, in] by torch, are transposed on every transfer)."""
    if r1 is None:
        r1 = m.shape[1]
    out = np.empty((r1 - r0, m.shape[0]), dtype=m.dtype)
    for c in range(0, m.shape[0], tile):
        out[:, c : c + tile] = m[c : c + tile, r0:r1].T
    return out


def squeezed(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape without its axes of size one (``[C, 1, 1]`` -> ``[C]``, ``[1]`` -> ``[]``)."""
    return tuple(d for d in shape if d != 1)


def newest_axis(small: tuple[int, ...], big: tuple[int, ...]) -> int | None:
    """The sequence axis where ``small`` holds the newest position only and ``big`` all of them
    (a decoder stepping with a key/value cache: ``[b, 1, d]`` against ``[b, s, d]``; positions
    ``[b, 1]`` against ``[s]``), as an axis of ``big`` aligned from the right with ``small``;
    None when the shapes are not so. Two or three axes; ``small`` keeps at least ``big``'s axes;
    exactly one axis of size one in ``small`` and more in ``big``, neither the first (a batch: a
    value computed once, ``[1, s]``, against one per item, ``[b, s]``, is broadcast, every item
    compared) nor the feature axis of three; elsewhere equal, or of size one in ``big``
    (broadcast)."""
    nd = len(small)
    if not 0 < len(big) <= nd or not 2 <= nd <= 3:
        return None
    lb = (1,) * (nd - len(big)) + tuple(big)
    axes = [i for i in range(nd) if small[i] == 1 and lb[i] > 1]
    if len(axes) != 1 or axes[0] == 0 or (nd == 3 and axes[0] == nd - 1):
        return None
    if any(x not in (y, 1) for i, (x, y) in enumerate(zip(lb, small)) if i != axes[0]):
        return None
    return axes[0] - (nd - len(big))  # padded axes are of size one: the axis is one of big's


def axes_between(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """The one reordering of ``a``'s axes after which ``a`` holds ``b``'s elements: its shape is
    ``b``'s (axes of size one aside: ``[V, C]`` against ``[C, V, 1]``), else it becomes ``b`` by
    a reshape that keeps the element order (``[in, out]`` against ``[in, C, k, k]``). None when
    no reordering fits, or several that move elements differently (``[d, d]``: its layout is
    unknown)."""
    found = axes_candidates(a, b)
    return found[0] if len(found) == 1 else None


def axes_candidates(a: tuple[int, ...], b: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every reordering of ``a``'s axes that ``axes_between`` weighs, one per way of moving the
    elements: those that give ``b``'s shape, else those that reach it by a same-order reshape
    cutting the fewest axes (``[1, 256, 16]`` against ``[1, 16, 16, 16]``: as it stands, or its
    last two axes swapped; only a tensor of the same role can say which)."""
    if len(a) > 6:
        return []
    exact: dict[tuple[int, ...], tuple[int, ...]] = {}
    reshaped: dict[tuple[int, ...], tuple[int, ...]] = {}
    for q in itertools.permutations(range(len(a))):
        s = tuple(a[k] for k in q)
        moved = tuple(k for k in q if a[k] != 1)  # reorderings of size-one axes move no element
        if squeezed(s) == squeezed(b):
            exact.setdefault(moved, q)
        elif same_order_reshape(squeezed(s), squeezed(b)):  # axes of size one move no element
            reshaped.setdefault(moved, q)
    if reshaped and not exact:  # the reorderings that cut the fewest axes in pieces ([in, C*k*k]: one)
        fewest = min(_cut(s, b) for s in ({tuple(a[k] for k in q) for q in reshaped.values()}))
        reshaped = {m: q for m, q in reshaped.items() if _cut(tuple(a[k] for k in q), b) == fewest}
    return list((exact or reshaped).values())


def concat_axis(parts: list[tuple[int, ...]], whole: tuple[int, ...]) -> tuple[int, list[int]] | None:
    """The axis of ``whole`` (its own numbering) along which ``parts`` (shapes without axes of
    size one) concatenate to it, with each part's size along it, or None. A part without that
    axis is one slice of it (two ``[1, 1, D]`` tokens stacked into one ``[1, 2, D]``)."""
    kept = [k for k, n in enumerate(whole) if n != 1]
    w = tuple(whole[k] for k in kept)
    for j in range(len(w)):
        rest = w[:j] + w[j + 1 :]
        sizes = [p[j] if len(p) == len(w) and p[:j] + p[j + 1 :] == rest else 1 if p == rest else 0 for p in parts]
        if all(sizes) and sum(sizes) == w[j]:
            return kept[j], sizes
    return None


def merge_order(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """``axes_between``, and where several reorderings fit only by merging axes (a Conv2D's
    ``[o, c, k, e]`` against a Conv1d's ``[o, c * e, k]``: channels major or minor), the one that
    keeps the merged axes in their stored order (fewest pairs of axes swapped), when one does.
    Reorderings that fit without a merge (``[d, d]``) are never chosen between."""
    found = axes_candidates(a, b)
    if len(found) <= 1:
        return found[0] if found else None
    if any(squeezed(tuple(a[k] for k in q)) == squeezed(b) for q in found):
        return None
    ranked = sorted((inversions(q), q) for q in found)
    return ranked[0][1] if ranked[0][0] < ranked[1][0] else None


def inversions(q: tuple[int, ...]) -> int:
    """How many pairs of axes the reordering ``q`` swaps."""
    return sum(1 for i in range(len(q)) for j in range(i + 1, len(q)) if q[i] > q[j])


def _cut(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """How many axes of the shape with fewer axes a same-order reshape cuts into several of the
    other's (``same_order_reshape`` holds)."""
    small, big = (squeezed(a), squeezed(b)) if len(squeezed(a)) <= len(squeezed(b)) else (squeezed(b), squeezed(a))
    cuts, j = 0, 0
    for n in small:
        prod, used = 1, 0
        while j < len(big) and prod < n:
            prod, used, j = prod * big[j], used + 1, j + 1
        cuts += used > 1
    return cuts


def axis_permutation(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """The permutation taking shape ``a`` to shape ``b`` when the shapes are the same sizes in
    another order and exactly one permutation fits (axes of equal size make it ambiguous: None)."""
    if len(a) != len(b) or a == b or sorted(a) != sorted(b) or len(set(a)) != len(a):
        return None
    return tuple(a.index(n) for n in b)


def stable_permutation(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """The permutation taking shape ``a`` to shape ``b`` that keeps axes of equal size in their
    order (NCHW against NHWC with H == W moves C, it does not swap H and W): a layout moves an
    axis; swapping two equal ones is what a bug does, and then the values say so."""
    if len(a) != len(b) or a == b or sorted(a) != sorted(b):
        return None
    perm: list[int] = []
    for n in b:
        perm.append(next(i for i, m in enumerate(a) if m == n and i not in perm))
    return tuple(perm)


def same_order_reshape(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Whether one shape is the other with some axes split into consecutive axes (``[64, 64]``
    vs ``[64, 4, 16]``: a head split): the same elements in the same order, so a reshape is
    the whole conversion. Equal shapes and shapes of other element counts are not."""
    if a == b or len(a) == len(b):
        return False
    small, big = (a, b) if len(a) < len(b) else (b, a)
    j = 0
    for n in small:
        prod = 1
        start = j
        while j < len(big) and (prod < n or (j == start)):
            prod *= big[j]
            j += 1
            if prod == n:
                break
        if prod != n:
            return False
    # trailing axes of size 1 are allowed
    return all(x == 1 for x in big[j:])



def packed_rows(n: int, start: int, stop: int, groups: int = 1) -> np.ndarray:
    """The indices, along a packed axis of length ``n``, of the share ``[start, stop)``: of the
    whole axis (``groups`` 1), or of each of ``groups`` equal blocks (a tensor packed head by
    head, ``[kv_heads, q|k|v of that head]``), the blocks' shares in order."""
    per = n // groups
    return (np.arange(groups)[:, None] * per + np.arange(start, stop)[None, :]).reshape(-1)


def packed_part(arr: np.ndarray, start: int, stop: int, axis: int = 0, groups: int = 1) -> np.ndarray:
    """A packed tensor's share along ``axis`` (``packed_rows``), C-contiguous."""
    if groups == 1:
        idx = [slice(None)] * arr.ndim
        idx[axis] = slice(start, stop)
        return np.ascontiguousarray(arr[tuple(idx)])
    return np.ascontiguousarray(np.take(arr, packed_rows(arr.shape[axis], start, stop, groups), axis=axis))


def blocks_in_order(arr: np.ndarray, order: tuple[int, ...]) -> np.ndarray:
    """``arr`` cut along axis 0 into ``len(order)`` equal blocks, block ``i`` of the result being
    block ``order[i]`` of ``arr`` (an LSTM's gates stacked i, f, o, g by one port and i, f, g, o
    by the other: ``(0, 1, 3, 2)``), C-contiguous."""
    k = len(order)
    if k < 2 or arr.shape[0] % k or sorted(order) != list(range(k)):
        raise ValueError(f"cannot take {arr.shape[0]} rows as {k} blocks in the order {list(order)}")
    size = arr.shape[0] // k
    idx = np.concatenate([np.arange(b * size, (b + 1) * size) for b in order])
    return np.ascontiguousarray(arr[idx])


def put_packed_part(buf: np.ndarray, value: np.ndarray, start: int, stop: int, axis: int = 0, groups: int = 1) -> None:
    """Write ``value`` into ``buf`` where ``packed_part(buf, start, stop, axis, groups)`` reads."""
    idx: list[Any] = [slice(None)] * buf.ndim
    idx[axis] = slice(start, stop) if groups == 1 else packed_rows(buf.shape[axis], start, stop, groups)
    slot = buf[tuple(idx)].shape
    if value.shape != slot and squeezed(value.shape) == squeezed(slot):  # a part [1, H, D] of a [H, k*D] tensor
        value = value.reshape(slot)
    buf[tuple(idx)] = value

"""A value found as one share of a larger value of the other trace.

One port computes q, k and v with one fused projection (``[b, s, 3 * d]``), the other with
three (``[b, s, d]`` each, maybe viewed as ``[b, s, heads, head_dim]``). The three calls
pair with no call of the fused side, so nothing compares their outputs; a module only the
unfused side calls on them (an attention kernel of its own) receives values no pair says are
right. They are right when the fused side's output holds them: contiguous blocks along its last
axis, the same leading axes (``share_found``).

The other way round, one port computes several items with one call (experts batched in one
``[E, in, out]`` weight, both tasks' gates in one Linear) and the other with one call each: a
module only the batching side calls on the batch (a softmax over every task's gate) receives a
value that no pair compares. It is right when each of its blocks along one axis (a slice, or an
equal run of slices) is a value of the other trace (``stack_found``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Container
from typing import Any

import numpy as np

from padiff_trace import Record
from padiff_trace.arrays import is_number
from padiff_trace.matching import is_known_type

from ..alignment._calls import TraceView
from ._boundary import RELATION_REL, agrees

__all__ = ["block_found", "concat_found", "elements_within", "judge_batched", "share_found", "stack_found", "stack_parts", "with_ancestors"]

_MAX_READ = 1 << 22  # elements of a candidate read to look for the share
_MAX_PARTS = 8  # a fused value holds at most this many shares (q|k|v, gate|up, i|f|g|o)


def share_found(other: TraceView, r: Record, among: Callable[[Record], bool] | None = None) -> bool:
    """Whether ``r``'s value is a block along the last axis of a forward value of the same step
    in ``other`` that is 2 to 8 times as large, with the same leading axes (``r``'s trailing axes
    merged: a head split ``[b, s, h, d]`` against ``[b, s, 3 * h * d]``), to within
    ``RELATION_REL`` in relative L2. Blocks start at multiples of ``r``'s width. ``among``: only
    values it accepts (None: any)."""
    if not r.has_data or r.numel == 0 or r.numel > _MAX_READ:
        return False
    x: np.ndarray | None = None
    for c in other.calls.get(r.step, ()):
        for y in (*c.inputs, *c.outputs):
            if not y.is_tensor or not y.has_data or y.numel % r.numel or not 2 <= y.numel // r.numel <= _MAX_PARTS:
                continue
            if among is not None and not among(y):
                continue
            if y.numel > _MAX_READ:
                continue
            ax = _chunk_axis(tuple(r.shape), tuple(y.shape))
            if ax is not None:  # the same axes, one of them cut (``chunk(2, dim=1)`` of a map's channels)
                if x is None:
                    x = np.asarray(r.read(), dtype=np.float64)
                z = np.asarray(y.read(), dtype=np.float64)
                if any(agrees(x, b, RELATION_REL) for b in np.split(z, z.shape[ax] // x.shape[ax], axis=ax)):
                    return True
                continue
            lead = tuple(y.shape[:-1])
            if not lead or tuple(r.shape[:len(lead)]) != lead:
                continue
            width = r.numel // max(math.prod(lead), 1)
            if x is None:
                x = np.asarray(r.read(), dtype=np.float64)
            z = np.asarray(y.read(), dtype=np.float64)
            xs = x.reshape(*lead, width)
            if any(agrees(xs, z[..., j * width:(j + 1) * width], RELATION_REL) for j in range(z.shape[-1] // width)):
                return True
    return False


def _chunk_axis(small: tuple[int, ...], big: tuple[int, ...]) -> int | None:
    """The one axis, not the last, along which ``big`` holds whole blocks of ``small``'s size where
    every other axis is the same; None otherwise (the last axis is read as merged trailing axes)."""
    if len(small) != len(big) or len(small) < 2:
        return None
    cut = [k for k in range(len(small)) if small[k] != big[k]]
    if len(cut) != 1 or cut[0] == len(small) - 1 or not small[cut[0]] or big[cut[0]] % small[cut[0]]:
        return None
    return cut[0]


def _squeezed(a: np.ndarray) -> np.ndarray:
    return a.reshape(tuple(n for n in a.shape if n != 1))


def _blocks(x: np.ndarray, ax: int, m: int) -> list[np.ndarray]:
    w = x.shape[ax] // m
    return [_squeezed(np.take(x, range(j * w, (j + 1) * w), axis=ax)) for j in range(m)]


class _Pool:
    """The other trace's forward values of one step, by element count, read once each."""

    def __init__(self, other: TraceView, step: int, sizes: Callable[[int], bool], modules: Container[str] | None = None,
                 outputs: bool = False) -> None:
        self.by_size: dict[int, list[Record]] = {}
        for c in other.calls.get(step, ()):
            if modules is not None and c.module not in modules:
                continue
            for y in c.outputs if outputs else (*c.inputs, *c.outputs):
                if y.is_tensor and y.has_data and y.numel and y.numel <= _MAX_READ and sizes(y.numel):
                    self.by_size.setdefault(y.numel, []).append(y)
        self._read: dict[int, np.ndarray] = {}

    def value(self, y: Record) -> np.ndarray:
        z = self._read.get(y.row)
        if z is None:
            z = self._read[y.row] = _squeezed(np.asarray(y.read(), dtype=np.float64))
        return z

    def shaped(self, block: np.ndarray) -> list[Record]:
        """Values of the block's size whose shape, axes of size 1 dropped, is the block's."""
        shape = block.shape
        return [y for y in self.by_size.get(block.size, ()) if tuple(n for n in y.shape if n != 1) == shape]

    def holds(self, block: np.ndarray) -> bool:
        lo, hi, mean = float(block.min()), float(block.max()), float(block.mean())
        scale = max(abs(lo), abs(hi), 1e-30)
        for y in self.shaped(block):
            st = y.stats
            if not all(abs(st.get(k, math.nan) - v) <= 1e-3 * scale for k, v in (("min", lo), ("max", hi), ("mean", mean))):
                continue
            if agrees(block, self.value(y), RELATION_REL):
                return True
        return False


def stack_parts(other: TraceView, r: Record, modules: Container[str] | None = None) -> tuple[int, int] | None:
    """``r``'s value cut into 2 to 8 equal blocks along one of its axes (each a slice, stacked,
    or a run of slices, concatenated) where ``other`` holds, in the same step, at least as many
    values of a block's shape (axes of size 1 dropped): how many blocks it holds as they are
    (to within ``RELATION_REL`` in relative L2) and how many there are, for the cut that finds
    the most. None when no cut has that many values of its block's shape on the other side.
    ``modules``: only values of calls of these modules (None: any)."""
    if not r.has_data or r.numel == 0 or r.numel > _MAX_READ or len(r.shape) < 2:
        return None
    pool = _Pool(other, r.step, lambda n: r.numel % n == 0 and 2 <= r.numel // n <= _MAX_PARTS, modules)
    if not pool.by_size:
        return None
    x = np.asarray(r.read(), dtype=np.float64)
    best: tuple[int, int] | None = None
    for ax, n in enumerate(x.shape):
        for m in range(2, min(n, _MAX_PARTS) + 1):
            if n % m or (r.numel // m) not in pool.by_size:
                continue
            blocks = _blocks(x, ax, m)
            if len(pool.shaped(blocks[0])) < m:
                continue
            hits = sum(pool.holds(b) for b in blocks)
            if best is None or hits / m > best[0] / best[1]:
                best = (hits, m)
            if hits == m:
                return best
    return best


def stack_found(other: TraceView, r: Record) -> bool:
    """Whether ``r``'s value is 2 to 8 forward values of the same step in ``other`` set side by
    side along one of its axes, every block found there (``stack_parts``)."""
    got = stack_parts(other, r)
    return got is not None and got[0] == got[1]


def concat_found(other: TraceView, r: Record) -> bool:
    """Whether ``r``'s value is 2 to 8 forward values of the same step in ``other`` of other
    sizes, concatenated along one of its axes in some order of sizes (one 1x1 convolution's
    output holding three branches' reductions of 8, 8 and 4 channels, each a module of its own
    on the other side): walking the axis, each next run of slices is a value held there."""
    if not r.has_data or r.numel == 0 or r.numel > _MAX_READ or len(r.shape) < 2:
        return False
    x = _squeezed(np.asarray(r.read(), dtype=np.float64))
    for ax, n in enumerate(x.shape):
        unit, total = x.size // n, x.size

        def sizes(k: int, unit: int = unit, total: int = total) -> bool:
            return k % unit == 0 and k < total

        pool = _Pool(other, r.step, sizes)
        if not pool.by_size:
            continue
        start, parts = 0, 0
        while start < n and parts < _MAX_PARTS:
            for size in sorted({k // unit for k in pool.by_size if k // unit <= n - start}, reverse=True):
                if pool.holds(np.take(x, range(start, start + size), axis=ax)):
                    start, parts = start + size, parts + 1
                    break
            else:
                break
        if start == n and parts >= 2:
            return True
    return False


def block_found(other: TraceView, r: Record, modules: Container[str] | None = None, outputs: bool = False,
                parts: int | None = None) -> bool | None:
    """Whether ``r``'s value is one of 2 to 8 equal blocks along one axis of a forward value of
    the same step in ``other`` (one expert's output inside the other side's batched experts'),
    its axes in the same order, to within ``RELATION_REL`` in relative L2: True when one is,
    False when values there have blocks of ``r``'s shape but none holds its value, nor holds its
    elements set in another order (``elements_within``: then the arrangement differs, which
    says nothing of ``r``), None otherwise. ``modules``: only values of calls of these modules (None: any);
    ``outputs``: only what they returned; ``parts``: only values of exactly that many blocks."""
    if not r.has_data or r.numel == 0 or r.numel > _MAX_READ:
        return None
    x = _squeezed(np.asarray(r.read(), dtype=np.float64))
    pool = _Pool(other, r.step, lambda n: n % r.numel == 0 and 2 <= n // r.numel <= _MAX_PARTS
                 and (parts is None or n == parts * r.numel), modules, outputs)
    shaped = False
    moved = False
    for ys in pool.by_size.values():
        for y in ys:
            z = np.asarray(y.read(), dtype=np.float64)
            for ax, n in enumerate(z.shape):
                m = y.numel // r.numel
                if n % m:
                    continue
                for b in _blocks(z, ax, m):
                    if b.shape == x.shape:
                        if agrees(x, b, RELATION_REL):
                            return True
                        shaped = True
                        moved = moved or elements_within(x, z)
    return False if shaped and not moved else None


def elements_within(x: np.ndarray, z: np.ndarray) -> bool:
    """Whether every element of ``x`` is, to 1e-4 of ``z``'s largest magnitude, an element of
    ``z``: its values are there, set elsewhere (a batch laid out in another order)."""
    zs = np.sort(z.ravel())
    if zs.size < 2:
        return False
    xs = x.ravel()
    i = np.clip(np.searchsorted(zs, xs), 1, zs.size - 1)
    near = np.minimum(np.abs(zs[i] - xs), np.abs(zs[i - 1] - xs))
    return bool((near <= 1e-4 * max(float(np.abs(zs).max()), 1e-30)).all())


def with_ancestors(modules: set[str]) -> set[str]:
    """``modules`` and every module enclosing one of them, by name (the root is "")."""
    out = set(modules)
    for m in modules:
        up = m
        while up:
            up = up.rpartition(".")[0]
            out.add(up)
    return out


def judge_batched(other: TraceView, calls: list[Any], good: set[Any], bad: set[Any], key: Callable[[Record], Any],
                  partners: Callable[[Any], set[str]], held: Callable[[Record], bool], asked: set[Any]) -> None:
    """Outputs of calls that hold weights yet pair with no call, judged block by block.
    ``partners``: the other side's modules holding the partners of a call's weights. A call whose
    weights pair with several of the other side's modules batches them (experts in one
    ``[E, in, out]`` module, both tasks' gates in one Linear): its value cut into blocks is right
    when the other side holds every block (``good``), and is where the two sides part when the
    other side holds values of every block's shape but not all of these (``bad``). A call whose
    weights are one share of the other side's batch (one expert of a list) is right when that
    batch holds its value as a block, and where the two sides part when what that batch's own
    module returned has one block of its shape per call of this side sharing that batch and none
    of them is its value (one expert's output against the batched experts' output: as many blocks
    as experts; an attention whose q, k and v are the other side's fused projection returns no
    block of it; values of other modules of the shape say nothing). Only values of the partners' calls, and of the calls enclosing
    them, are looked at: values of other modules that merely share a shape say nothing. A
    framework's own layer class is never marked wrong this way (what it computes from agreeing
    weights is right; what it was handed is its caller's doing). ``key``: a value's identity
    (``value_id``).

    What a batching call received is right where the other side holds it (``held``; each value
    looked for once, ``asked``): floating values only (ids found on the other side may still lack
    this side's offsets)."""
    for c in calls:
        if len(partners(c)) < 2:
            continue
        for r in c.tensor_inputs():
            k = key(r)
            if k is None or k in good or k in bad or k in asked or not is_number(r.dtype):
                continue
            asked.add(k)
            if held(r):
                good.add(k)
    returned: dict[Any, int] = {}  # a value -> how many of ``calls`` return it (a module returning its child's output)
    for c in calls:
        for r in c.tensor_outputs():
            returned[key(r)] = returned.get(key(r), 0) + 1
    by_batch: dict[frozenset[str], set[str]] = {}  # a partner batch -> the modules of ``calls`` sharing it
    for c in calls:
        by_batch.setdefault(frozenset(partners(c)), set()).add(c.module)
    # how many share it, outermost only (an expert, not its layers inside, whose partners are the same)
    sharing = {b: sum(1 for m in ms if not any(m.startswith(o + ".") for o in ms)) for b, ms in by_batch.items()}
    for c in calls:
        direct = partners(c)
        near = with_ancestors(direct)
        for r in c.tensor_outputs():
            k = key(r)
            if k is None or k in good or k in bad:
                continue
            if returned.get(k, 0) > 1 and len(direct) >= 2:
                continue  # returned by a call inside it too: which of them made it is not this rule's to say
            if len(direct) >= 2:
                parts = stack_parts(other, r, near)
                # a framework's own layer (an Embedding) with weights and inputs that agree computes
                # what it is handed right: what it was handed (ids without their offsets) is not
                # this call's doing; only a class of the port's own may be where the sides part
                if parts is not None and (parts[0] == parts[1] or not is_known_type(c.module_type)):
                    (good if parts[0] == parts[1] else bad).add(k)
            else:
                verdict = block_found(other, r, near)
                if verdict:
                    good.add(k)
                elif (verdict is False and not is_known_type(c.module_type)
                      and block_found(other, r, direct, outputs=True, parts=sharing.get(frozenset(direct), 0)) is False):
                    bad.add(k)  # the batch's own output has one block per sharer of its shape, none its value

"""Parallel branches fused into one module: the weight matcher's pass over whole child modules
of two partnered modules (``_weightmatch``).

A CSP block holds two 1x1 conv+BN branches ``conv1`` and ``conv2`` in one port and a single
``cv12`` conv+BN with twice the channels, split after it, in the other; a tower keeps two
Linear+LayerNorm heads where the other fuses them. Tensor by tensor nothing tells which half is
which, and the names share no word. Module by module it is plain: inside two modules already
known to be one computation (their other tensors paired: ``partner_modules``), the child
modules still holding tensors left over are *units*; a unit's signature is its tensors' classes
(type, local name) in a fixed order, each class once (a unit holding two tensors of one class
cannot say which is which, and fits nothing). Each unit of one side is either one unit of the other (the
same signature and shapes) or a run of consecutive units there (in registration order) whose
tensors concatenate, position by position, along the first axis to its own (output channels,
features, per-channel statistics). The units pair when exactly one order-preserving
segmentation uses every unit of both sides; each tensor of a run takes its part of the fused
tensor, in order (``how`` "packed" for parts, "units" for whole tensors).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import cache

from ..arrays._layout import squeezed
from ._weighttensors import MTensor

__all__ = ["pair_packed_units"]

logger = logging.getLogger(__name__)

Pair = Callable[..., None]  # the matcher's ``pair(x, y, how, x_part, y_part, axis, used=...)``


def _units(live: list[MTensor], scope: str) -> list[list[MTensor]]:
    """The tensors left under ``scope``, by the child module of ``scope`` holding them (tensors
    of ``scope`` itself make no unit), units in registration order, each unit's tensors by
    (type, local name, registration)."""
    prefix = scope + "." if scope else ""
    by: dict[str, list[MTensor]] = {}
    for t in live:
        if not t.derived and t.info.module.startswith(prefix) and t.info.module != scope:
            child = t.info.module[len(prefix):].split(".", 1)[0]
            by.setdefault(prefix + child, []).append(t)
    units = sorted(by.values(), key=lambda ts: min(t.index for t in ts))
    return [sorted(u, key=lambda t: (t.type_key, t.local, t.index)) for u in units]


def _child(unit: list[MTensor], scope: str) -> str:
    """The path of the child module of ``scope`` holding ``unit``."""
    prefix = scope + "." if scope else ""
    return prefix + unit[0].info.module[len(prefix):].split(".", 1)[0]


def _sig(u: list[MTensor]) -> tuple[tuple[str, str], ...]:
    return tuple((t.type_key, t.local) for t in u)


def _fits(run: list[list[MTensor]], one: list[MTensor]) -> bool:
    """Whether the units ``run`` are ``one`` (a run of one: the same shapes) or, concatenated
    position by position along the first axis, make it. A unit holding two tensors of one class
    (two LayerNorms' weights) says nothing of which is which: it fits nothing."""
    sig = _sig(one)
    if len(set(sig)) != len(sig) or any(_sig(u) != sig for u in run):
        return False
    for k, y in enumerate(one):
        shapes = [u[k].cshape for u in run]
        if len(run) == 1:
            if squeezed(shapes[0]) != squeezed(y.cshape):
                return False
        elif (not y.cshape or any(len(s) != len(y.cshape) or s[1:] != y.cshape[1:] for s in shapes)
              or sum(s[0] for s in shapes) != y.cshape[0]):
            return False
    return True


def _segmentation(ua: list[list[MTensor]], ub: list[list[MTensor]]) -> list[tuple[int, int, int, int]] | None:
    """The one order-preserving segmentation of both unit lists into matched pieces, as
    (A start, A stop, B start, B stop) with one side's piece a single unit; None when there is
    none or more than one."""
    n, m = len(ua), len(ub)

    def steps(i: int, j: int) -> list[tuple[int, int]]:
        out = []
        for k in range(1, n - i + 1):  # k units of A against one of B
            if _fits(ua[i : i + k], ub[j]):
                out.append((k, 1))
        for k in range(2, m - j + 1):  # one unit of A against k of B
            if _fits(ub[j : j + k], ua[i]):
                out.append((1, k))
        return out

    @cache
    def ways(i: int, j: int) -> int:
        if i == n or j == m:
            return int(i == n and j == m)
        return min(2, sum(ways(i + di, j + dj) for di, dj in steps(i, j)))

    if ways(0, 0) != 1:
        return None
    out, i, j = [], 0, 0
    while i < n:
        di, dj = next((di, dj) for di, dj in steps(i, j) if ways(i + di, j + dj) == 1)
        out.append((i, i + di, j, j + dj))
        i, j = i + di, j + dj
    return out


def pair_packed_units(la: list[MTensor], lb: list[MTensor], partners: dict[str, str], pair: Pair) -> None:
    """Pair the units left in every two partnered modules, the models' roots included (see the
    module docstring). Where each side has one unit left, the two are one place: their own
    units are tried."""
    # deepest first (popped from the end): a unit left inside a unit is paired before its container
    todo = sorted({"": "", **partners}.items(), key=lambda kv: (kv[0].count(".") + bool(kv[0]), kv[0]))
    while todo:
        sa, sb = todo.pop()
        ua, ub = _units([t for t in la if not t.used], sa), _units([t for t in lb if not t.used], sb)
        if not ua or not ub or len(ua) + len(ub) > 24:
            continue
        plan = _segmentation(ua, ub)
        if plan is None:
            if len(ua) == len(ub) == 1:
                todo.append((_child(ua[0], sa), _child(ub[0], sb)))
            continue
        for i0, i1, j0, j1 in plan:
            many, one = (ua[i0:i1], ub[j0]) if j1 - j0 == 1 else (ub[j0:j1], ua[i0])
            for k, y in enumerate(one):
                if len(many) == 1:
                    pair(many[0][k], y, "units")
                    continue
                start = 0
                for u in many:
                    x = u[k]
                    stop = start + x.cshape[0]
                    logger.info("paired %s with part %d:%d of %s: branches fused into one module", x.info.name, start,
                                stop, y.info.name)
                    pair(x, y, "packed", None, (start, stop), 0, used=False)
                    x.used = True
                    start = stop
                y.used = True

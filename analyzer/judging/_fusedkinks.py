"""Kinks inside a module: an activation one library fuses into the module before it.

paddle's DenseNet runs BatchNorm with ``act="relu"``, torchvision a BatchNorm and then a ReLU
module; the output of the pair is ``relu(z)`` on one side and ``z`` on the other (a boundary
difference, ``_boundary``). The ReLU's kink is then inside one side's module: where rounding
puts an element of ``z`` on opposite sides of 0 in the two runs, one passes the gradient there
back and the other does not, as at a ReLU module of its own (``_carried.kink_flips``), and a
BatchNorm's backward (a small batch cancels) takes it from 1e-5 to percents in one call.

It is measured the same way, across the boundary: the fused side's output tells on which
side of each kink point its pre-activation value lay (for a non-decreasing activation, the
flat piece at the kink's value: ``relu(z) == 0`` means ``z <= 0``), the plain side's output is
that value itself. Where the two disagree, the gradient the fused side received there (its
output gradient: the gradient of the activation's output), against what passes back whole,
is the flip. The module's own backward follows the kink on both sides, so what it may pass
on is ``CARRY_FACTOR`` times that.

For the same call the two output gradients are different quantities (after the activation on
one side, before it on the other); the fused side's, times the activation's slope where its
output lies (0 on a flat piece), is the plain side's quantity, and their relative L2 error is
what the module's parameter gradients are made from (``FusedKink.pre_rel``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from padiff_trace.matching import canonical_type

from ._pairtable import PairTable
from ._relations import FUSED_ACTIVATIONS, fused_side

__all__ = ["FusedKink", "fused_kinks"]

_STEP = 1e-3  # to tell a flat piece beside a kink point, and a slope, numerically


@dataclass(frozen=True, slots=True)
class FusedKink:
    """A call pair whose output is, on one side, a kinked activation of the other side's."""

    call: int  # trace A's call id
    module: str  # trace A's module path
    name: str  # the activation (``FUSED_ACTIVATIONS``)
    flip: float  # the gradient at elements rounded to opposite sides of a kink, relative to what passes back
    grad_row: int  # the row of the call's output gradient
    pre_rel: float  # relative L2 error of the gradient before the activation (the fused side's: its own times the slope)


def _monotone(f: Callable[[np.ndarray], np.ndarray]) -> bool:
    return bool(np.all(np.diff(f(np.linspace(-12.0, 12.0, 4801))) >= 0))


def _left_of(y: np.ndarray, k: float, f: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """For a non-decreasing ``f`` and outputs ``y = f(z)``: whether ``z <= k`` (``z`` at the
    value ``f(k)`` counts on the side where ``f`` is flat)."""
    yk = float(f(np.array([k]))[0])
    flat_right = float(f(np.array([k + _STEP]))[0]) == yk
    return (y < yk) | ((y == yk) & (not flat_right))


def _slope(y: np.ndarray, z: np.ndarray, f: Callable[[np.ndarray], np.ndarray], live: tuple[float, float]) -> np.ndarray:
    """The activation's slope at each element of the fused side (output ``y``), evaluated at the
    plain side's pre-activation ``z`` inside the live interval; 0 where ``y`` lies on a flat piece."""
    lo, hi = (float(f(np.array([v]))[0]) if np.isfinite(v) else v for v in live)
    inside = (y > lo) & (y < hi)
    slope = (f(z + _STEP) - f(z - _STEP)) / (2 * _STEP)
    return np.where(inside, slope, 0.0)


def fused_kinks(t: PairTable, kink_points: dict[str, tuple[tuple[float, ...], tuple[float, float]]]) -> list[FusedKink]:
    """Each call pair whose inputs passed and whose one output is, on one side, a kinked
    activation (``kink_points``, non-decreasing) of the other side's, with output gradients on
    both sides: its flip and pre-activation gradient error (module docstring)."""
    names = [n for n in kink_points if n in FUSED_ACTIVATIONS and _monotone(FUSED_ACTIVATIONS[n])]
    if not names:
        return []
    cp_col, role_col = t.col("cp"), t.col("role")
    rows: dict[int, dict[str, list[int]]] = {}
    for i in np.flatnonzero(t.role_mask("input", "output", "grad_output") & (cp_col >= 0)).tolist():
        rows.setdefault(int(cp_col[i]), {}).setdefault(t.roles[int(role_col[i])], []).append(i)
    out: list[FusedKink] = []
    for c, got in rows.items():
        outs, grads, ins = got.get("output", []), got.get("grad_output", []), got.get("input", [])
        if len(outs) != 1 or len(grads) != 1 or t.passed[outs[0]] or not t.measured[outs[0]]:
            continue
        if not ins or not all(t.passed[i] for i in ins) or canonical_type(t.call_pairs[c].a.module_type) in kink_points:
            continue
        kink = _measure(t, outs[0], grads[0], names, kink_points)
        if kink is not None:
            out.append(FusedKink(t.call_pairs[c].a.id, t.call_pairs[c].a.module, kink[0], kink[1], grads[0], kink[2]))
    return out


def _measure(t: PairTable, o: int, g: int, names: list[str],
             kink_points: dict[str, tuple[tuple[float, ...], tuple[float, float]]]) -> tuple[str, float, float] | None:
    try:
        y = [np.asarray(t.record(o, s).read(), dtype=np.float64) for s in (0, 1)]
        dy = [np.asarray(t.record(g, s).read(), dtype=np.float64) for s in (0, 1)]
    except Exception:  # damaged or undecodable bytes: judged elsewhere
        return None
    if not (y[0].shape == y[1].shape == dy[0].shape == dy[1].shape) or not y[0].size:
        return None
    if not all(np.isfinite(v).all() for v in (*y, *dy)):
        return None
    for name in names:
        f = FUSED_ACTIVATIONS[name]
        fused = fused_side(y[0].ravel(), y[1].ravel(), f)
        if fused is None:
            continue
        post, z, g_post, g_pre = y[fused], y[1 - fused], dy[fused], dy[1 - fused]
        points, live = kink_points[name]
        crossed = np.zeros(z.shape, dtype=bool)
        for k in points:
            crossed |= _left_of(post, k, f) != (z <= k)
        whole = (z > live[0]) & (z < live[1])
        passed_back = float(np.linalg.norm(g_post[whole])) or float(np.linalg.norm(g_post))
        flip = float(np.linalg.norm(g_post[crossed])) / passed_back if passed_back > 0 else 0.0
        mine = g_post * _slope(post, z, f, live)
        ref = float(np.linalg.norm(g_pre))
        pre_rel = float(np.linalg.norm(mine - g_pre)) / ref if ref > 0 else float(np.linalg.norm(mine))
        return name, flip, pre_rel
    return None

"""A bias's gradient: its module's output gradient summed over every other axis.

A bias ``[C]`` receives the sum of the output gradient over the batch and every position
(``dy [N, C, H, W]`` summed over N, H, W for a convolution or BatchNorm, over every axis but
the last for a Linear or LayerNorm). That sum cancels: its terms have both signs, and a sum a
hundred times smaller than the sum of its terms' sizes carries the terms' rounding a hundred
times larger, relatively. Two runs whose output gradients agree to 1e-3 (a ReLU after the
residual add flipping a few elements) then give bias gradients 1e-2 apart, and nothing is
wrong.

This is measured, not assumed: where a failing parameter gradient is, on both sides, the sum of
its module's one recorded output gradient of the step (the call's, passed on its numbers) over
every axis but one, within the rounding of that sum, the two gradients differ by no more than
the summed differences of their terms (the triangle inequality): the call did not make the error.
A wrong bias gradient (scaled, one channel dropped, summed over the wrong axes) is not that sum
and keeps failing.
"""

from __future__ import annotations

import numpy as np

from ._pairtable import PairTable

__all__ = ["absorb_summed_grads"]

# the rounding of a float32 sum of n terms, against the sum of their sizes (a few units of 2**-24
# per level of a pairwise sum; generous, far below any error a wrong gradient makes)
_SUM_ROUNDING = 1e-5


def _one_call_grads(t: PairTable, by_numbers: tuple[str, ...]) -> dict[tuple[int, str], int | None]:
    """(step, module) -> the row of its one output gradient of the step, passed on its numbers;
    ``None`` where the module ran more than once in the step or its gradient did not pass so."""
    cp_col, step_col = t.col("cp"), t.col("step")
    out: dict[tuple[int, str], int | None] = {}
    for i in np.flatnonzero(t.role_mask("grad_output") & (cp_col >= 0) & t.measured).tolist():
        key = (int(step_col[i]), t.call_pairs[int(cp_col[i])].a.module)
        why = t.reasons.get(i, "")
        ok = bool(t.passed[i]) and (not why or why.startswith(by_numbers))
        out[key] = None if key in out or not ok else i
    return out


def _summed_axis(g: np.ndarray, dy: np.ndarray) -> int | None:
    """The axis of ``dy`` whose sum over every other axis is ``g`` (within the sum's rounding)."""
    for k in range(dy.ndim):
        if dy.shape[k] != g.shape[0]:
            continue
        rest = tuple(a for a in range(dy.ndim) if a != k)
        total, size = dy.sum(axis=rest), np.abs(dy).sum(axis=rest)
        if np.all(np.abs(total - g) <= _SUM_ROUNDING * size + 1e-30):
            return k
    return None


def absorb_summed_grads(t: PairTable, by_numbers: tuple[str, ...]) -> int:
    """See the module docstring; returns how many pairs passed. ``by_numbers``: the reasons of
    pairs that passed on their numbers."""
    grads = np.flatnonzero(t.role_mask("param_grad") & ~t.passed & t.measured)
    if not len(grads):
        return 0
    feeds = _one_call_grads(t, by_numbers)
    step_col, rel = t.col("step"), t.metric("rel_l2")
    n = 0
    for i in grads.tolist():
        j = feeds.get((int(step_col[i]), t.record(i, 0).module))
        if j is None or "shape" in t.reasons.get(i, ""):
            continue
        try:
            g = [np.asarray(t.record(i, s).read(), dtype=np.float64) for s in (0, 1)]
            dy = [np.asarray(t.record(j, s).read(), dtype=np.float64) for s in (0, 1)]
        except Exception:  # damaged or undecodable bytes: judged elsewhere
            continue
        if any(x.ndim != 1 or not np.isfinite(x).all() for x in g) or any(not np.isfinite(x).all() for x in dy):
            continue
        axes = [_summed_axis(x, y) for x, y in zip(g, dy)]
        if axes[0] is None or axes[1] is None:
            continue
        t.set_verdict(i, True, f"carried rounding: on both sides the sum of the module's output gradient over every "
                               f"axis but one (a bias's), which passed (rel-L2 {float(rel[j]):.2g}); the sum cancels, "
                               f"and differs by {float(rel[i]):.2g}")
        n += 1
    return n

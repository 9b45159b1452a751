"""A per-channel parameter's gradient: a sum over the batch that cancels.

A bias ``[C]`` receives its module's output gradient summed over the batch and every position
(``dy [N, C, H, W]`` summed over N, H, W for a convolution or BatchNorm, over every axis but the
last for a Linear or LayerNorm); a per-channel scale ``w`` of an output ``y = w * z + b`` receives
``dy * z`` summed the same way. Those sums cancel: their terms have both signs, and a sum a
hundred times smaller than the sum of its terms' sizes carries the terms' rounding a hundred
times larger, relatively. Two runs whose output gradients agree to 1e-3 (a ReLU after the
residual add flipping a few elements) then give a norm's scale and shift gradients 1e-2 apart,
and nothing is wrong.

This is measured, not assumed. Where a failing parameter gradient of one axis is, on both
sides, such a sum of its module's one recorded call of the step (output gradient and output
passed on their numbers, the module's parameters passed), over every axis but one, within the
rounding of that sum: ``dy`` summed (a shift), or ``dy * (y - b) / w`` summed (a scale, ``b``
the module's other parameter of that size, if any), the gradient is made from values that agree
by the module's own formula, and the difference is carried: two sums differ by no more than
their terms do. A gradient made otherwise (a hook scaling it, a channel dropped, a scale that is
not the module's last multiply) is no such sum and keeps failing.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ._pairtable import PairTable

__all__ = ["absorb_summed_grads"]

# the rounding of a float32 sum of products, against the sum of their sizes (a few units of 2**-24
# per level of a pairwise sum; generous, far below any error a wrong gradient makes)
_SUM_ROUNDING = 1e-5
_Z_ROUNDING = 1e-6  # recovering z = (y - b) / w from a float32 output: a few units of |y| / |w|


def _ok(t: PairTable, i: int, by_numbers: tuple[str, ...]) -> bool:
    why = t.reasons.get(i, "")
    return bool(t.passed[i]) and bool(t.measured[i]) and (not why or why.startswith(by_numbers))


def _calls(t: PairTable, by_numbers: tuple[str, ...]) -> dict[tuple[int, str], tuple[int, int] | None]:
    """(step, module) -> the rows of its one call's output gradient and output in the step, both
    passed on their numbers; ``None`` where the module ran more than once or either did not pass so."""
    cp_col, step_col = t.col("cp"), t.col("step")
    outs: dict[int, list[int]] = {}
    for i in np.flatnonzero(t.role_mask("output") & (cp_col >= 0)).tolist():
        outs.setdefault(int(cp_col[i]), []).append(i)
    got: dict[tuple[int, str], tuple[int, int] | None] = {}
    for j in np.flatnonzero(t.role_mask("grad_output") & (cp_col >= 0)).tolist():
        cp = int(cp_col[j])
        key = (int(step_col[j]), t.call_pairs[cp].a.module)
        y = outs.get(cp, [])
        good = len(y) == 1 and _ok(t, j, by_numbers) and _ok(t, y[0], by_numbers)
        got[key] = None if key in got or not good else (j, y[0])
    return got


def _params(t: PairTable) -> dict[tuple[int, str], dict[str, int]]:
    """(step, module) -> position -> the row of the parameter's value that step, where it passed."""
    step_col = t.col("step")
    out: dict[tuple[int, str], dict[str, int]] = {}
    for i in np.flatnonzero(t.role_mask("param")).tolist():
        rec = t.record(i, 0)
        if t.passed[i]:
            out.setdefault((int(step_col[i]), rec.module), {})[rec.position] = i
    return out


def _axes(c: int, dy: np.ndarray) -> Iterator[tuple[int, tuple[int, ...], tuple[int, ...]]]:
    """Each axis of ``dy`` of size ``c``: (axis, the other axes, the shape a ``[c]`` broadcasts as)."""
    for k in range(dy.ndim):
        if dy.shape[k] == c:
            yield k, tuple(a for a in range(dy.ndim) if a != k), tuple(c if a == k else 1 for a in range(dy.ndim))


def _is_sum(g: np.ndarray, terms: np.ndarray, rest: tuple[int, ...], slack: np.ndarray) -> bool:
    return bool(np.all(np.abs(terms.sum(axis=rest) - g) <= _SUM_ROUNDING * np.abs(terms).sum(axis=rest) + slack + 1e-30))


def _made_as(g: np.ndarray, dy: np.ndarray, y: np.ndarray, own: np.ndarray | None,
             others: list[np.ndarray]) -> set[str]:
    """How ``g`` is its module's sum on this side: {"shift"} and/or {"scale"} (possibly empty)."""
    found: set[str] = set()
    for _k, rest, shape in _axes(g.shape[0], dy):
        if _is_sum(g, dy, rest, np.zeros(g.shape)):
            found.add("shift")
        if own is None or y.shape != dy.shape or not np.all(np.abs(own) > 1e-12):
            continue
        w = own.reshape(shape)
        for b in [*others, np.zeros(g.shape)]:
            z = (y - b.reshape(shape)) / w
            slack = _Z_ROUNDING * (np.abs(dy) * np.abs(y) / np.abs(w)).sum(axis=rest)
            if _is_sum(g, dy * z, rest, slack):
                found.add("scale")
                break
    return found


def absorb_summed_grads(t: PairTable, by_numbers: tuple[str, ...]) -> int:
    """See the module docstring; returns how many pairs passed. ``by_numbers``: the reasons of
    pairs that passed on their numbers."""
    grads = np.flatnonzero(t.role_mask("param_grad") & ~t.passed & t.measured)
    if not len(grads):
        return 0
    calls, params = _calls(t, by_numbers), _params(t)
    step_col, rel = t.col("step"), t.metric("rel_l2")
    n = 0
    for i in grads.tolist():
        rec = t.record(i, 0)
        key = (int(step_col[i]), rec.module)
        rows = calls.get(key)
        if rows is None or "shape" in t.reasons.get(i, ""):
            continue
        j, o = rows
        mine = params.get(key, {})
        try:
            ways = []
            for s in (0, 1):
                g = np.asarray(t.record(i, s).read(), dtype=np.float64)
                dy = np.asarray(t.record(j, s).read(), dtype=np.float64)
                y = np.asarray(t.record(o, s).read(), dtype=np.float64)
                vals = {p: np.asarray(t.record(r, s).read(), dtype=np.float64).reshape(-1) for p, r in mine.items()}
                if g.ndim != 1 or not all(np.isfinite(x).all() for x in (g, dy, y)):
                    break
                own = vals.get(rec.position)
                others = [v for p, v in vals.items() if p != rec.position and v.shape == g.shape]
                ways.append(_made_as(g, dy, y, own if own is not None and own.shape == g.shape else None, others))
        except Exception:  # damaged or undecodable bytes: judged elsewhere
            continue
        both = ways[0] & ways[1] if len(ways) == 2 else set()
        if not both:
            continue
        what = "output gradient" if "shift" in both else "output gradient times what the parameter scales"
        t.set_verdict(i, True, f"carried rounding: on both sides the sum of the module's {what} over every axis but "
                               f"one, which passed (rel-L2 {float(rel[j]):.2g}); the sum cancels, and differs by "
                               f"{float(rel[i]):.2g}")
        n += 1
    return n

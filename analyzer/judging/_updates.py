"""Weights after an optimizer step: rounding carried through the update is not a divergence.

After step k, a weight is ``w_{k+1} = w_k - update(g_k)``. When the gradients ``g_k`` of both
sides agree to their own rounding (their pair passed), the updated weights differ by that
rounding passed through the optimizer, which a weight's tolerance (relative to the weight,
not to the update) may not admit: a bias whose update is a thousandth of its value fails
by 1e-8. Such a pair passes when the *update* of A agrees with the update of B as closely as
the gradients it came from agree (relative L2 within ``UPDATE_FACTOR`` times the gradients',
or 1e-6) — the optimizer may amplify rounding a little (Adam's division by sqrt(v)), never
turn a rounding difference into a bug. A gradient that is zero in exact arithmetic (a key
projection's bias under softmax) is pure rounding on both sides; Adam turns it into a step of
about +-lr, so the weights differ by lr while the updates still differ no more than the
gradients did. Packed tensors (q|k|v in one) are checked share by share. A wrong learning rate, momentum or weight decay makes
the updates differ by far more and the pair keeps failing.

Buffers a module updates in its forward (BatchNorm's running statistics) are the same story one
step earlier: the change of a running mean is a mean of the module's input, which agrees to its
relative error ``d`` on a scale of the input's RMS, so the two changes may differ by
``UPDATE_FACTOR`` x ``d`` x that scale (a mean of centred values is ~0 and its relative error
unbounded: the scale is the input's, not the buffer's). A momentum or an epsilon that differs
moves the running values by far more.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from padiff_trace import DamagedRecordError, Record

from ..alignment._calls import TraceView
from ..alignment._records import RecordLike
from ..alignment._slices import RowSlice
from ._conventions import running_var_prediction
from ._pairtable import PairTable

__all__ = ["UPDATE_FACTOR", "absorb_buffer_rounding", "absorb_update_rounding", "flag_hidden_updates"]

UPDATE_FACTOR = 10.0
_FLOOR = 1e-6
_HIDDEN = 1e-3  # an update this far apart (rel-L2) is never rounding of agreeing gradients ...
_HIDDEN_FACTOR = 100.0  # ... nor this many times further apart than they are (clean twins: ~12 where above 1e-3)
_NOISE_GRAD = 0.1  # gradients that differ by this much yet pass are noise around zero


def _previous(v: TraceView, table: Any, rec: Record) -> tuple[int, Record] | None:
    steps = sorted(s for s in table if s < rec.step)
    if not steps:
        return None
    r = table[steps[-1]].get((rec.module, rec.position))
    return (steps[-1], r) if r is not None else None


def _like(part: Any, base: Record) -> Any:
    """``base`` cut the way ``part`` is (a packed tensor's share), or ``base`` itself."""
    return RowSlice(base, part.lo, part.hi, part.perm, part.groups, part.axis) if isinstance(part, RowSlice) else base


def _base(r: Any) -> Record:
    return r.base if isinstance(r, RowSlice) else r


def _arr(r: Any, perm: tuple[int, ...] | None) -> np.ndarray:
    a = np.asarray(r.read(), np.float64)
    return np.transpose(a, perm) if perm is not None else a


def _rel(x: np.ndarray, y: np.ndarray) -> float:
    ny = float(np.linalg.norm(y))
    return float(np.linalg.norm(x - y)) / ny if ny > 0 else (0.0 if not np.any(x) else float("inf"))


def _stored_dtype(r: Any) -> np.dtype | None:
    """The dtype a weight record was stored in (its header's), None where numpy has none (bfloat16)."""
    try:
        return np.dtype(_base(r).dtype)
    except TypeError:
        return None


def _rel_stored(ua: np.ndarray, ub: np.ndarray, wa: np.ndarray, wb: np.ndarray, dtype: np.dtype | None) -> float:
    """rel-L2 of two updates beyond what storing the updated weights rounds: each side rounds
    ``w - u`` to its dtype (half a spacing of the new weight), so an update a few spacings
    of its weight wide (a small gradient under Adagrad) can be told apart no finer than that."""
    if dtype is None or not np.issubdtype(dtype, np.floating):
        return _rel(ua, ub)
    ny = float(np.linalg.norm(ub))
    spacing = np.spacing(np.maximum(np.abs(wa), np.abs(wb)).astype(dtype)).astype(np.float64)
    excess = max(float(np.linalg.norm(ua - ub)) - float(np.linalg.norm(spacing)), 0.0)
    return excess / ny if ny > 0 else (0.0 if excess == 0 else float("inf"))


def _grads_passed(t: PairTable) -> dict[tuple[int, int], bool]:
    """(A record seq, B record seq) of each parameter-gradient pair -> whether it passed."""
    rows = np.flatnonzero(t.role_mask("param_grad"))
    return {(int(a), int(b)): bool(p) for a, b, p in
            zip(t.col("seq_a")[rows].tolist(), t.col("seq_b")[rows].tolist(), t.passed[rows].tolist())}


def _update_and_grads(t: PairTable, i: int, va: TraceView, vb: TraceView,
                      grad_ok: dict[tuple[int, int], bool]) -> tuple[int, float, float] | None:
    """For the parameter pair in row ``i`` (weights after step k+1): (k, rel-L2 of the step-k
    updates, rel-L2 of the step-k gradients), when both are recorded and the gradients passed."""
    try:
        ra, rb = t.record(i, 0), t.record(i, 1)  # a packed tensor's share is a RowSlice
        if not (isinstance(_base(ra), Record) and isinstance(_base(rb), Record) and ra.has_data and rb.has_data):
            return None
        pa, pb = _previous(va, va.weights, _base(ra)), _previous(vb, vb.weights, _base(rb))
        if pa is None or pb is None or pa[0] != pb[0]:
            return None
        step = pa[0]
        ga = va.param_grads.get(step, {}).get((ra.module, _base(ra).position))
        gb = vb.param_grads.get(step, {}).get((rb.module, _base(rb).position))
        if ga is None or gb is None or not grad_ok.get((ga.seq, gb.seq), False) or not (ga.has_data and gb.has_data):
            return None
        perm = t.perms.get(i)
        rel_g = _rel(_arr(_like(ra, ga), perm), _arr(_like(rb, gb), None))
        wa, wb = _arr(ra, perm), _arr(rb, None)
        ua = wa - _arr(_like(ra, pa[1]), perm)
        ub = wb - _arr(_like(rb, pb[1]), None)
        if ua.shape != ub.shape:
            return None
        return step, _rel_stored(ua, ub, wa, wb, _stored_dtype(rb)), rel_g
    except (DamagedRecordError, KeyError, ValueError, TypeError, OSError):
        return None


def absorb_update_rounding(t: PairTable, va: TraceView, vb: TraceView) -> int:
    """Failing parameter pairs after an update whose updates agree as well as their gradients
    do (beyond the rounding of storing the new weights) pass, with both numbers named. Returns how many passed."""
    if not len(t):
        return 0
    rows = np.flatnonzero(t.role_mask("param") & ~t.passed & t.measured & (t.col("step") > 0))
    if not len(rows):
        return 0
    grad_ok = _grads_passed(t)
    n = 0
    for i in rows.tolist():
        m = _update_and_grads(t, i, va, vb, grad_ok)
        if m is None:
            continue
        step, rel_u, rel_g = m
        if rel_u <= max(UPDATE_FACTOR * rel_g, _FLOOR):
            noise = (" — the gradients are rounding noise (zero in exact arithmetic, likely), which an adaptive "
                     "optimizer scales up to the learning rate") if rel_g > _NOISE_GRAD else ""
            t.set_verdict(i, True, f"rounding through the update: the step-{step} updates differ by rel-L2 {rel_u:.2g}, "
                                   f"their gradients by {rel_g:.2g}{noise} ({t.reasons.get(i, '')})")
            n += 1
    return n


def flag_hidden_updates(t: PairTable, va: TraceView, vb: TraceView, differs_from: int) -> int:
    """Parameter pairs that pass at a step before the first failing row, yet whose update from
    a step at or after ``differs_from`` (where a recorded optimizer setting first differs)
    disagrees far beyond their gradients' rounding, fail: an adaptive optimizer can hide a
    setting's effect in the weights' own tolerance (Adam's first step is about +-lr whatever
    the gradient's scale), and the setting shows a step later as a forward difference. Only the
    earliest such step is flagged. Returns how many pairs failed."""
    if not len(t):
        return 0
    step_col = t.col("step")
    failing = np.flatnonzero(t.failing)
    until = int(step_col[failing].min()) if len(failing) else int(step_col.max(initial=0)) + 1
    rows = np.flatnonzero(t.role_mask("param") & t.passed & t.measured & (step_col > differs_from) & (step_col < until))
    if not len(rows):
        return 0
    grad_ok = _grads_passed(t)
    n, first = 0, None
    for i in rows[np.argsort(step_col[rows], kind="stable")].tolist():
        if first is not None and int(step_col[i]) > first:
            break
        m = _update_and_grads(t, i, va, vb, grad_ok)
        if m is None:
            continue
        step, rel_u, rel_g = m
        if rel_u > max(_HIDDEN_FACTOR * rel_g, _HIDDEN):
            t.set_verdict(i, False, f"the step-{step} updates differ by rel-L2 {rel_u:.2g} while their gradients agree "
                                    f"to {rel_g:.2g}: an optimizer setting that differs moved this weight")
            first = int(step_col[i])
            n += 1
    return n


def absorb_buffer_rounding(t: PairTable, va: TraceView, vb: TraceView) -> int:
    """Failing buffer pairs at step k >= 1 whose change since step k-1 agrees on both sides to
    the rounding of the module's inputs at step k-1 pass (module docstring). Returns how many."""
    if not len(t):
        return 0
    step_col, cp_col, rel = t.col("step"), t.col("cp"), t.metric("rel_l2")
    rows = np.flatnonzero(t.role_mask("buffer") & ~t.passed & t.measured & (step_col > 0))
    if not len(rows):
        return 0
    inputs: dict[tuple[int, str], tuple[float, bool, RecordLike]] = {}  # (step, A module) -> (worst rel, all passed, an input)
    for j in np.flatnonzero(t.role_mask("input") & (cp_col >= 0)).tolist():
        key = (int(step_col[j]), t.call_pairs[int(cp_col[j])].a.module)
        worst, ok, rec = inputs.get(key, (0.0, True, t.record(j, 0)))
        r = float(rel[j]) if t.measured[j] and np.isfinite(rel[j]) else 0.0
        inputs[key] = (max(worst, r), ok and bool(t.passed[j]), rec)
    n = 0
    for i in rows.tolist():
        try:
            ra, rb = t.record(i, 0), t.record(i, 1)
            if not (isinstance(ra, Record) and isinstance(rb, Record) and ra.has_data and rb.has_data):
                continue
            pa, pb = _previous(va, va.weights, ra), _previous(vb, vb.weights, rb)
            if pa is None or pb is None or pa[0] != pb[0] or (pa[0], ra.module) not in inputs:
                continue
            d, ok, x = inputs[(pa[0], ra.module)]
            if not ok or not x.has_data:
                continue
            perm = t.perms.get(i)
            ua = _arr(ra, perm) - _arr(pa[1], perm)
            ub = _arr(rb, None) - _arr(pb[1], None)
            if ua.shape != ub.shape:
                continue
            scale = max(float(np.linalg.norm(ub)), float(np.sqrt(np.mean(np.square(_arr(x, None))))) * np.sqrt(ub.size))
            diff = float(np.linalg.norm(ua - ub))
            # a convention between the two updates (BatchNorm's running variance, biased against
            # unbiased): B's new values predicted from A's, and what is left compared the same way
            conv = running_var_prediction(ra, rb, va, vb) if perm is None and diff > UPDATE_FACTOR * max(d, _FLOOR) * scale else None
            if conv is not None:
                diff = float(np.linalg.norm(conv[0] - conv[1]))
        except (DamagedRecordError, KeyError, ValueError, TypeError, OSError):
            continue
        if diff <= UPDATE_FACTOR * max(d, _FLOOR) * scale:
            under = f" under the convention ({conv[2]})" if conv is not None else ""
            t.set_verdict(i, True, f"rounding through the running update{under}: the step-{pa[0]} changes differ by "
                                   f"{diff:.2g}, within the rounding of {ra.module}'s inputs then (rel-L2 {d:.2g} on "
                                   f"their scale) ({t.reasons.get(i, '')})")
            n += 1
    return n

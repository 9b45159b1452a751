"""Rounding carried through a deep model: a call that does not amplify the error it received.

The noise floor (``_noise``) estimates how far two fp32 runs may drift apart; it does not
model every amplification, so a deep model (fifty residual blocks with BatchNorm) can drift
past it by rounding alone, one module at a time, each passing on what it received. This pass
follows the records of a step in execution order: a failing module output whose call's
inputs all passed, and whose relative error is at most ``CARRY_FACTOR`` times the largest
relative error of those inputs, is *carried rounding*: the call did not make the error, it
passed on what it got. The same value handed on (the next call's input) passes with it.

A call that makes an error of its own raises the relative error: a wrong epsilon, a missing
residual, a wrong activation all jump by far more than ``CARRY_FACTOR``; such outputs keep
failing and the first divergence is named there.

Training adds a second carrier: from step 1 on, both sides compute from weights that differ
by the rounding of every earlier step (``absorb_training_drift``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._boundary import value_key as _value_key
from ._pairtable import PairTable
from ._precision import pair_eps


def rounding_max(t: PairTable) -> np.ndarray:
    """Per row: the largest relative error that can be rounding (``ROUNDING_MAX``, or 8 eps of
    the pair's less precise dtype: 6e-2 bfloat16, 8e-3 float16)."""
    return np.maximum(ROUNDING_MAX, _ROUNDING_EPS * pair_eps(t))

__all__ = ["CARRY_FACTOR", "DRIFT_FACTOR", "ROUNDING_MAX", "absorb_carried_rounding", "absorb_training_drift"]

CARRY_FACTOR = 1.5
# a value computed from drifted weights may differ by this many times their drift: a sum that
# cancels (a bias gradient as training converges) amplifies relative error by its condition
DRIFT_FACTOR = 30.0
_DERIVED = ("output", "grad_output", "grad_input", "param_grad", "loss", "input")
ROUNDING_MAX = 1e-3  # relative errors above this are not fp32 rounding, carried or not
_ROUNDING_EPS = 8.0  # ... nor, in a pair where a side is bfloat16/float16 (autocast), above 8 eps of that dtype
# reasons of pairs that passed on their numbers (their relative error is rounding)
_BY_NUMBERS = ("within the noise floor", "carried rounding")


def absorb_carried_rounding(t: PairTable) -> int:
    """See the module docstring; returns how many pairs passed. Forward: a call's inputs feed
    its outputs. Backward, in the order it ran: a call's output gradients feed its input
    gradients."""
    if not len(t):
        return 0
    n = _walk(t, ("model_input", "input"), "output")
    n += _walk(t, ("grad_output",), "grad_input")
    return n


def _walk(t: PairTable, feed_roles: tuple[str, ...], made_role: str) -> int:
    if made_role not in t.roles:
        return 0
    rows_mask = t.role_mask(*feed_roles, made_role)
    made_code = t.roles.index(made_role)
    cp_col, step_col, roles = t.col("cp"), t.col("step"), t.col("role")
    rel = t.metric("rel_l2")
    rmax: np.ndarray | None = None
    n = 0
    for s in np.unique(step_col[rows_mask]).tolist():
        rows = np.flatnonzero(rows_mask & (step_col == s) & (cp_col >= 0))
        if not len(rows):
            continue
        passed, measured = t.passed, t.measured
        if passed[rows].all():
            continue
        if rmax is None:
            rmax = rounding_max(t)
        in_rel: dict[int, float] = {}
        in_bad: set[int] = set()
        carried: set[tuple[Any, ...]] = set()
        # A call id -> the largest relative error among its inputs and its children's outputs
        # that passed so far: what the inline code between its children received
        level: dict[int, float] = {}
        for i in rows.tolist():
            c = int(cp_col[i])
            call = t.call_pairs[c].a
            ok = bool(passed[i])
            r = float(rel[i]) if measured[i] and math.isfinite(rel[i]) else math.nan
            why_ok = t.reasons.get(i, "")
            if ok and why_ok and not why_ok.startswith(_BY_NUMBERS):
                r = math.nan  # passed for another reason (a mask, a flag): its error says nothing of rounding
            if r > rmax[i]:
                r = math.nan  # too large to be rounding, however it was judged: carries nothing
            if roles[i] != made_code:  # what the call receives
                if not ok and measured[i]:
                    key = _value_key(t.record(i, 0))
                    why = ""
                    if key is not None and key in carried:
                        why = "the same value passed where it was made"
                    elif r > 0 and r <= CARRY_FACTOR * level.get(call.parent, 0.0):
                        why = (f"made by the code between calls from values that differed by up to rel-L2 "
                               f"{level[call.parent]:.2g}, passed on without amplification")
                    if why:
                        t.set_verdict(i, True, f"carried rounding: {why} ({t.reasons.get(i, '')})")
                        n += 1
                        ok = True
                if not ok:
                    in_bad.add(c)
                elif math.isfinite(r):
                    in_rel[c] = max(in_rel.get(c, 0.0), r)
                    level[call.id] = max(level.get(call.id, 0.0), r)
                continue
            if ok and math.isfinite(r):
                level[call.parent] = max(level.get(call.parent, 0.0), r)
            if ok or c in in_bad or not measured[i] or not math.isfinite(rel[i]) or c not in in_rel:
                continue
            reason = t.reasons.get(i, "")
            if "NaN" in reason or "Inf" in reason or "shape" in reason:
                continue
            got = in_rel[c]
            if got > 0 and float(rel[i]) <= CARRY_FACTOR * got:
                t.set_verdict(i, True, f"carried rounding: what the call received already differed by rel-L2 {got:.2g} "
                                       f"(within the noise floor) and it passes on {float(rel[i]):.2g}, no amplification "
                                       f"({reason})")
                n += 1
                level[call.parent] = max(level.get(call.parent, 0.0), float(rel[i]))
                key = _value_key(t.record(i, 0))
                if key is not None:
                    carried.add(key)
    return n


def absorb_training_drift(t: PairTable) -> int:
    """Rounding carried through training: from step 1 on, both sides compute from weights that
    already differ by their rounding (the weight pairs of the step passed, at relative error
    ``drift``). A value computed from them (output, gradient, loss) that fails by at most
    ``DRIFT_FACTOR`` x ``drift`` (and ``rounding_max``) follows from that drift; the weights
    themselves are never excused here, so an optimizer bug (the weights leave their floor)
    keeps failing. Returns how many pairs passed."""
    if not len(t):
        return 0
    step_col, rel = t.col("step"), t.metric("rel_l2")
    weights = t.role_mask("param") & t.passed & t.measured & (step_col >= 1)
    if not weights.any():
        return 0
    derived = t.role_mask(*_DERIVED) & ~t.passed & t.measured & (step_col >= 1)
    if not derived.any():
        return 0
    n = 0
    rmax = rounding_max(t)
    for s in np.unique(step_col[derived]).tolist():
        w = rel[weights & (step_col == s)]
        w = w[np.isfinite(w)]
        drift = float(w.max()) if len(w) else 0.0
        if not drift > 0:
            continue
        for i in np.flatnonzero(derived & (step_col == s)).tolist():
            r, reason = float(rel[i]), t.reasons.get(i, "")
            bound = min(float(rmax[i]), DRIFT_FACTOR * drift)
            if not (math.isfinite(r) and r <= bound) or "NaN" in reason or "Inf" in reason or "shape" in reason:
                continue
            t.set_verdict(i, True, f"rounding carried by training: the weights of step {s} already differ by rel-L2 "
                                   f"{drift:.2g} (within their floor) and this differs by {r:.2g} ({reason})")
            n += 1
    return n

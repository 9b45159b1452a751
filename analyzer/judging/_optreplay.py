"""An optimizer convention checked on the numbers: each side's first update, replayed.

Where two frameworks define an algorithm differently (RMSProp's epsilon inside or outside the
square root, ``OPTIMIZER_UPDATE_RULES``), a correct twin's weights part after the first
optimizer step and every later step runs on other weights. Naming the convention is not
enough to excuse that: this module replays the first update of every parameter in numpy, each
side with its own framework's rule, from its own recorded weights and gradients of step 0
and its own settings. When both sides' recorded weights after the update are reproduced
(to float32 rounding of the update), the difference *is* the convention: the step-1 weights
pass with it named, and the later steps, computed from weights that differ by it, are shown
but not judged. A rule that does not reproduce one tensor excuses nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from padiff_trace import DamagedRecordError
from padiff_trace.matching import OPTIMIZER_CONVENTIONS, OPTIMIZER_UPDATE_RULES

from ..alignment._calls import TraceView
from ._optimizer import OptimizerDiff, lr_by_param, per_param, step_values
from ._pairtable import PairTable

__all__ = ["FIRST_UPDATE", "verify_update_convention"]

logger = logging.getLogger(__name__)

_EPS32 = float(np.finfo(np.float32).eps)
_REPRODUCED = 1e-3  # replayed vs recorded update, relative L2 (float32 state and rounding)

Rule = Callable[[np.ndarray, np.ndarray, dict[str, Any], float], np.ndarray]


def _grad(w: np.ndarray, g: np.ndarray, h: dict[str, Any]) -> np.ndarray:
    wd = float(h.get("weight_decay") or 0.0)  # coupled (L2) decay: both frameworks add it to g
    return g + wd * w if wd else g


def _rmsprop(eps_inside: bool) -> Rule:
    def step(w: np.ndarray, g: np.ndarray, h: dict[str, Any], lr: float) -> np.ndarray:
        g = _grad(w, g, h)
        rho, eps = float(h.get("rho", 0.99)), float(h.get("eps", 1e-8))
        v = (1 - rho) * g * g
        if h.get("centered"):
            v = v - ((1 - rho) * g) ** 2
        denom = np.sqrt(v + eps) if eps_inside else np.sqrt(v) + eps
        return w - lr * g / denom  # the first step: momentum buffers start at zero on both sides

    return step


def _adamax(eps_inside_max: bool) -> Rule:
    def step(w: np.ndarray, g: np.ndarray, h: dict[str, Any], lr: float) -> np.ndarray:
        g = _grad(w, g, h)
        eps = float(h.get("eps", 1e-8))
        u = np.abs(g) + eps if eps_inside_max else np.maximum(np.abs(g), eps)
        return w - lr * g / u  # m = (1-beta1) g, bias-corrected by 1/(1-beta1): beta1 cancels

    return step


# rule name (``OPTIMIZER_UPDATE_RULES``) -> the first update from zero optimizer state
FIRST_UPDATE: dict[str, Rule] = {
    "rmsprop_eps_outside_sqrt": _rmsprop(eps_inside=False),
    "rmsprop_eps_inside_sqrt": _rmsprop(eps_inside=True),
    "adamax_eps_inside_max": _adamax(eps_inside_max=True),
    "adamax_eps_outside_max": _adamax(eps_inside_max=False),
}


def _replayed(v: TraceView, opt: dict[str, Any], rule: Rule) -> tuple[int, float] | None:
    """(tensors checked, worst relative error of the update) of one side's first update, or
    None when something needed was not recorded with its values."""
    w0, w1, g0 = v.weights.get(0), v.weights.get(1), v.param_grads.get(0)
    lrs = lr_by_param(opt, step_values(v).get(0, {}))
    if not (w0 and w1 and g0 and lrs):
        return None
    names = {(f"{m}.{p}" if m else p): (m, p) for m, p in w0}
    n, worst = 0, 0.0
    for name, h in per_param(opt).items():
        key, lr = names.get(name), lrs.get(name)
        if key is None or lr is None or key not in w1 or key not in g0:
            return None
        ra, rb, rg = w0[key], w1[key], g0[key]
        if not (ra.has_data and rb.has_data and rg.has_data):
            return None
        before = np.asarray(ra.read(), np.float64)
        after = np.asarray(rb.read(), np.float64)
        pred = rule(before, np.asarray(rg.read(), np.float64), h, lr)
        du = float(np.linalg.norm(after - before))
        err = float(np.linalg.norm(pred - after))
        if err > _REPRODUCED * du + 4 * _EPS32 * float(np.linalg.norm(before)):
            logger.info("%s: %s's first update is not reproduced by its rule (%.2e of %.2e)", v.framework, name, err, du)
            return None
        worst = max(worst, err / du if du else 0.0)
        n += 1
    return n, worst


def verify_update_convention(t: PairTable, va: TraceView, vb: TraceView, diff: OptimizerDiff | None) -> dict[str, Any] | None:
    """When step 0 agrees whole, the settings agree, and both sides' first updates follow
    their frameworks' rules: the step-1 weights pass as the convention and the later steps'
    failures are marked not judged. Returns the convention entry, or None (nothing changed)."""
    if diff is None or diff.a is None or diff.b is None or diff.any or not len(t):
        return None
    kind = str(diff.a.get("type"))
    rules = OPTIMIZER_UPDATE_RULES.get(kind, {})
    ra, rb = rules.get(va.framework), rules.get(vb.framework)
    if ra is None or rb is None or ra == rb or kind not in OPTIMIZER_CONVENTIONS:
        return None
    step = t.col("step")
    failing = ~t.passed & (step >= 1)
    weights1 = failing & t.role_mask("param") & (step == 1)
    if not weights1.any() or not bool(t.passed[step == 0].all()):
        return None
    try:
        sa, sb = _replayed(va, diff.a, FIRST_UPDATE[ra]), _replayed(vb, diff.b, FIRST_UPDATE[rb])
    except (DamagedRecordError, KeyError, ValueError, TypeError, OSError):
        return None
    if sa is None or sb is None:
        return None
    what = (f"each side's first update replayed with its own rule reproduces its recorded weights "
            f"({sa[0]} + {sb[0]} tensors, worst rel-L2 {max(sa[1], sb[1]):.1e})")
    later = 0
    for i in np.flatnonzero(failing).tolist():
        if weights1[i]:
            t.set_verdict(i, True, f"convention: {what} ({t.reasons.get(i, '')})")
        else:
            later += 1
            t.set_verdict(i, True, f"not judged: computed from weights that differ by the optimizer convention "
                                   f"({t.reasons.get(i, '')})")
    last = int(step.max())
    text = (f"{int(weights1.sum())} weight(s) after step 0's update: {OPTIMIZER_CONVENTIONS[kind]}; {what}. "
            f"Steps 1-{last} ran on weights that differ by it: {later} failing pair(s) there are shown, not judged")
    logger.info("optimizer convention: %s", text)
    return {"kind": "convention", "check": "optimizer_first_update", "pairs": int(weights1.sum()), "text": text,
            "not_judged": later}

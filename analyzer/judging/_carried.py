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

Gradients cross kinks. Where a module's derivative jumps at a point (ReLU at 0, ReLU6 at 0
and 6, hard-swish at -3 and 3: ``KINK_POINTS``) and the two runs' rounding puts an input on
opposite sides of it, the gradient there is all of the incoming gradient on one side and none
(or another slope's share) on the other. Forward values that agree to 1e-5 then give
gradients that differ by 1e-3 and more; that is rounding too, and it is measured, not assumed:
for each kinked call whose input and output gradient are recorded, ``kink_flips`` finds the
elements whose two inputs lie on opposite sides of a kink point and takes the size of the
gradient there relative to the gradient the call passes back. That *flip* is added in
quadrature to what a call carries (``CARRY_FACTOR`` times what it received) after the kink, and
the gradients of the step may reach ``rounding_max`` and the flips added in quadrature, carried
once (``kink_ceiling``).

Training adds a second carrier: from step 1 on, both sides compute from weights that differ
by the rounding of every earlier step (``absorb_training_drift``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from padiff_trace.matching import canonical_type

from ._biasgrads import absorb_summed_grads
from ._boundary import value_key as _value_key
from ._fusedkinks import fused_kinks
from ._pairtable import PairTable
from ._precision import pair_eps

__all__ = ["CARRY_FACTOR", "DRIFT_FACTOR", "DRIFT_REASON", "KINK_POINTS", "ROUNDING_MAX", "absorb_carried_rounding", "absorb_training_drift",
           "kink_ceiling"]

CARRY_FACTOR = 1.5
# a value computed from drifted weights may differ by this many times their drift: a sum that
# cancels (a bias gradient as training converges) amplifies relative error by its condition
DRIFT_FACTOR = 30.0
DRIFT_REASON = "rounding carried by training"
_DERIVED = ("output", "grad_output", "grad_input", "param_grad", "loss", "input")
_GRADIENTS = ("grad_output", "grad_input", "param_grad")
# where each module type's derivative jumps (canonical_type names, default arguments), and the
# interval where it passes the gradient back whole: an input the two runs round to opposite sides
# of a kink point takes another slope of the gradient
_INF = float("inf")
KINK_POINTS: dict[str, tuple[tuple[float, ...], tuple[float, float]]] = {
    "relu": ((0.0,), (0.0, _INF)), "relu6": ((0.0, 6.0), (0.0, 6.0)), "hardtanh": ((-1.0, 1.0), (-1.0, 1.0)),
    "hardswish": ((-3.0, 3.0), (-3.0, _INF)), "hardsigmoid": ((-3.0, 3.0), (-3.0, 3.0)),
    "leakyrelu": ((0.0,), (-_INF, _INF)), "prelu": ((0.0,), (-_INF, _INF)), "rrelu": ((0.0,), (-_INF, _INF)),
}
ROUNDING_MAX = 1e-3  # relative errors above this are not fp32 rounding, carried or not
_ROUNDING_EPS = 8.0  # ... nor, in a pair where a side is bfloat16/float16 (autocast), above 8 eps of that dtype
# reasons of pairs that passed on their numbers (their relative error is rounding)
_BY_NUMBERS = ("within the noise floor", "carried rounding")


def rounding_max(t: PairTable) -> np.ndarray:
    """Per row: the largest relative error that can be rounding (``ROUNDING_MAX``, or 8 eps of
    the pair's less precise dtype: 6e-2 bfloat16, 8e-3 float16)."""
    return np.maximum(ROUNDING_MAX, _ROUNDING_EPS * pair_eps(t))


def kink_flips(t: PairTable) -> dict[int, tuple[float, str]]:
    """Trace A's call id of each kinked call (``KINK_POINTS``) whose input passed and whose output
    gradient is recorded on both sides -> (flip, module path): the relative L2 size of the
    gradient at the elements whose two inputs lie on opposite sides of a kink point, against the
    gradient the call passes back (module docstring). Calls without such an element are left out."""
    cp_col, role_col = t.col("cp"), t.col("role")
    rows = np.flatnonzero(t.role_mask("input", "grad_output") & (cp_col >= 0))
    by_call: dict[int, dict[str, int]] = {}
    for i in rows.tolist():
        cp = t.call_pairs[int(cp_col[i])]
        if canonical_type(cp.a.module_type) in KINK_POINTS:
            role = t.roles[int(role_col[i])]
            by_call.setdefault(int(cp_col[i]), {}).setdefault(role, i)  # the first input: what the kink acts on
    out: dict[int, tuple[float, str]] = {}
    for c, got in by_call.items():
        x_row, g_row = got.get("input"), got.get("grad_output")
        if x_row is None or g_row is None or not (t.passed[x_row] and t.measured[x_row]):
            continue
        call = t.call_pairs[c].a
        flip = _flip(t, x_row, g_row, *KINK_POINTS[canonical_type(call.module_type)])
        if flip > 0:
            out[call.id] = (flip, call.module)
    return out


def _flip(t: PairTable, i: int, j: int, points: tuple[float, ...], live: tuple[float, float]) -> float:
    try:
        xa, xb = (np.asarray(t.record(i, s).read(), dtype=np.float64) for s in (0, 1))
        ga, gb = (np.asarray(t.record(j, s).read(), dtype=np.float64) for s in (0, 1))
    except Exception:  # damaged or undecodable bytes: judged elsewhere, no flip measured here
        return 0.0
    if not (xa.shape == xb.shape == ga.shape == gb.shape) or not xa.size:
        return 0.0
    crossed = np.zeros(xa.shape, dtype=bool)
    for k in points:
        crossed |= ((xa - k) * (xb - k) <= 0) & (xa != xb)
    if not crossed.any():
        return 0.0
    g = np.maximum(np.abs(ga), np.abs(gb))
    whole = (xb > live[0]) & (xb < live[1])  # where the call passes the gradient back whole
    passed_back = float(np.linalg.norm(gb[whole])) or float(np.linalg.norm(gb))
    return float(np.linalg.norm(g[crossed])) / passed_back if passed_back > 0 else 0.0


def kink_ceiling(t: PairTable, flips: dict[int, tuple[float, str]]) -> np.ndarray:
    """Per row: ``rounding_max``; for the gradients of a step with flips (``kink_flips``), that and
    the flips added in quadrature, as independent errors add, times ``CARRY_FACTOR``: what one
    call after them may pass on (a parameter gradient's sum over the batch cancels)."""
    rmax = rounding_max(t)
    grads = t.role_mask(*_GRADIENTS)
    if not flips or not grads.any():
        return rmax
    total2: dict[int, float] = {}
    for cp in t.call_pairs:
        got = flips.get(cp.a.id)
        if got is not None:
            total2[cp.a.step] = total2.get(cp.a.step, 0.0) + got[0] ** 2
    step_col = t.col("step")
    out = rmax.copy()
    for s, f2 in total2.items():
        rows = grads & (step_col == s)
        out[rows] = CARRY_FACTOR * np.sqrt(out[rows] ** 2 + f2)
    return out


def absorb_carried_rounding(t: PairTable) -> int:
    """See the module docstring; returns how many pairs passed. Forward: a call's inputs feed
    its outputs. Backward, in the order it ran: a call's output gradients feed its input
    gradients."""
    if not len(t):
        return 0
    n = _walk(t, ("model_input", "input"), "output", rounding_max(t), {}, backward=False)
    if (t.role_mask("grad_output", "grad_input", "param_grad") & ~t.passed).any():  # flips read tensors: only when needed
        flips = kink_flips(t)
        fused = fused_kinks(t, KINK_POINTS)  # a kink inside one side's module (BatchNorm with act="relu")
        # the module's own backward follows its kink: it passes on CARRY_FACTOR times the flip
        flips.update({k.call: (CARRY_FACTOR * k.flip, f"the {k.name} fused into {k.module}") for k in fused if k.flip > 0})
        ceiling = kink_ceiling(t, flips)
        n += _walk(t, ("grad_output",), "grad_input", ceiling, flips, backward=True)
        n += _param_grads(t, ceiling, {k.grad_row: k.pre_rel for k in fused})
        n += absorb_summed_grads(t, _BY_NUMBERS)  # a bias's gradient, a sum that cancels
    return n


def _param_grads(t: PairTable, rmax: np.ndarray, pre_act: dict[int, float]) -> int:
    """A parameter's gradient is made from its module's inputs and output gradients (a weight's:
    their product summed over the batch). When every such record of the module's calls in the
    step passed on its numbers, a failing parameter gradient within ``CARRY_FACTOR`` of the
    largest of their relative errors (and the ceiling) is carried rounding. ``pre_act``: the row
    of an output gradient taken after an activation fused on one side -> the relative error of
    the gradient before it (``fused_kinks``), what the parameters' gradients are made from."""
    grads = np.flatnonzero(t.role_mask("param_grad") & ~t.passed & t.measured)
    if not len(grads):
        return 0
    cp_col, step_col, rel = t.col("cp"), t.col("step"), t.metric("rel_l2")
    feeds = np.flatnonzero(t.role_mask("input", "grad_output") & (cp_col >= 0))
    made_of: dict[tuple[int, str], tuple[float, bool]] = {}  # (step, module) -> (largest rel-L2, all passed on numbers)
    for i in feeds.tolist():
        call = t.call_pairs[int(cp_col[i])].a
        key = (int(step_col[i]), call.module)
        worst, clean = made_of.get(key, (0.0, True))
        r = float(rel[i])
        why = t.reasons.get(i, "")
        ok = bool(t.passed[i]) and (not t.measured[i] or (math.isfinite(r) and (not why or why.startswith(_BY_NUMBERS))))
        if i in pre_act:
            r = pre_act[i]
            ok = math.isfinite(r) and r <= rmax[i]
        made_of[key] = (max(worst, r) if t.measured[i] and math.isfinite(r) else worst, clean and ok)
    n = 0
    for i in grads.tolist():
        r, reason = float(rel[i]), t.reasons.get(i, "")
        got = made_of.get((int(step_col[i]), t.record(i, 0).module))
        if got is None or not got[1] or not got[0] > 0 or not math.isfinite(r) or r > rmax[i]:
            continue
        if "NaN" in reason or "Inf" in reason or "shape" in reason or r > CARRY_FACTOR * got[0]:
            continue
        t.set_verdict(i, True, f"carried rounding: made from the module's inputs and output gradients, which "
                               f"differ by up to rel-L2 {got[0]:.2g} (within the noise floor), and differs by "
                               f"{r:.2g}, no amplification ({reason})")
        n += 1
    return n


def _walk(t: PairTable, feed_roles: tuple[str, ...], made_role: str, rmax: np.ndarray,
          flips: dict[int, tuple[float, str]], *, backward: bool) -> int:
    """One direction of the carry. Backward, ``flips`` (kinked calls' flip allowance) is added in
    quadrature to what a call, or the code around its kinked child calls, passes on; and the
    gradient that passed last is received too: a call's input gradient (rarely recorded) is made
    from the gradients computed just before it, and is what the call that ran before it receives."""
    if made_role not in t.roles:
        return 0
    rows_mask = t.role_mask(*feed_roles, made_role)
    made_code = t.roles.index(made_role)
    cp_col, step_col, roles = t.col("cp"), t.col("step"), t.col("role")
    rel = t.metric("rel_l2")
    n = 0
    for s in np.unique(step_col[rows_mask]).tolist():
        rows = np.flatnonzero(rows_mask & (step_col == s) & (cp_col >= 0))
        if not len(rows):
            continue
        passed, measured = t.passed, t.measured
        if passed[rows].all():
            continue
        in_rel: dict[int, float] = {}
        in_bad: set[int] = set()
        carried: set[tuple[Any, ...]] = set()
        # (A's value, B's value) of an output that passed on its numbers -> the module that returned it
        judged: dict[tuple[Any, ...], int] = {}
        # A call id -> the largest relative error among its inputs and its children's outputs
        # that passed so far: what the inline code between its children received
        level: dict[int, float] = {}
        # a call id -> the largest flip allowance among its kinked children seen so far
        kinked: dict[int, tuple[float, str]] = {}
        last = 0.0  # backward: the relative error of the gradient that passed last
        # backward: the kinked call seen last and its flip; the gradient computed next is made from
        # what its backward passed on (with a kink fused into one side's module, in another parent)
        after: tuple[int, tuple[float, str]] | None = None
        for i in rows.tolist():
            c = int(cp_col[i])
            call = t.call_pairs[c].a
            own_flip = flips.get(call.id)
            if own_flip is not None and own_flip[0] > kinked.get(call.parent, (0.0, ""))[0]:
                kinked[call.parent] = own_flip
            near = kinked.get(call.parent)
            if after is not None and after[0] != c:
                if backward and (near is None or after[1][0] > near[0]):
                    near = after[1]
                after = None
            if own_flip is not None and backward:
                after = (c, own_flip)
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
                    elif r > 0 and r <= _allowed(received := max(level.get(call.parent, 0.0), last), near):
                        why = (f"made by the code between calls from values that differed by up to rel-L2 "
                               f"{received:.2g}, passed on without amplification{_flip_note(r, received, near)}")
                    if why:
                        t.set_verdict(i, True, f"carried rounding: {why} ({t.reasons.get(i, '')})")
                        n += 1
                        ok = True
                if not ok:
                    in_bad.add(c)
                elif math.isfinite(r):
                    in_rel[c] = max(in_rel.get(c, 0.0), r)
                    level[call.id] = max(level.get(call.id, 0.0), r)
                    if backward:
                        last = r
                continue
            if ok and math.isfinite(r):
                level[call.parent] = max(level.get(call.parent, 0.0), r)
                same = _pair_key(t, i)
                if same is not None:
                    judged.setdefault(same, i)
            elif (not ok and measured[i] and (same := _pair_key(t, i)) is not None and same in judged
                  and _same_values(t, i, judged[same])):
                # a container returns what its last child returned: the same values on both sides,
                # already judged rounding where the child made them
                made = t.record(judged[same], 0).module or "<root>"
                t.set_verdict(i, True, f"carried rounding: the same values as the output of {made}, which "
                                       f"passed on its numbers ({t.reasons.get(i, '')})")
                n += 1
                level[call.parent] = max(level.get(call.parent, 0.0), float(rel[i]))
                continue
            if ok or c in in_bad or not measured[i] or not math.isfinite(rel[i]) or c not in in_rel:
                continue
            reason = t.reasons.get(i, "")
            if "NaN" in reason or "Inf" in reason or "shape" in reason:
                continue
            got = in_rel[c]
            if got > 0 and float(rel[i]) <= _allowed(got, own_flip):
                t.set_verdict(i, True, f"carried rounding: what the call received already differed by rel-L2 {got:.2g} "
                                       f"(within the noise floor) and it passes on {float(rel[i]):.2g}, no amplification"
                                       f"{_flip_note(float(rel[i]), got, own_flip)} ({reason})")
                n += 1
                level[call.parent] = max(level.get(call.parent, 0.0), float(rel[i]))
                key = _value_key(t.record(i, 0))
                if key is not None:
                    carried.add(key)
                same = _pair_key(t, i)
                if same is not None:
                    judged.setdefault(same, i)
    return n


def _pair_key(t: PairTable, i: int) -> tuple[Any, ...] | None:
    """Row ``i``'s values on both sides (``value_key``), None where either has none."""
    ka, kb = _value_key(t.record(i, 0)), _value_key(t.record(i, 1))
    return None if ka is None or kb is None else (ka, kb)


def _same_values(t: PairTable, i: int, j: int) -> bool:
    """Whether rows ``i`` and ``j`` hold the very same values on each side, element by element
    (statistics alone cannot tell a square tensor from its transpose)."""
    try:
        return all(np.array_equal(t.record(i, s).read(), t.record(j, s).read()) for s in (0, 1))
    except Exception:  # values not kept (statistics only) or undecodable: not the same for certain
        return False


def _allowed(received: float, flip: tuple[float, str] | None) -> float:
    """The most relative error passing on ``received`` can give: ``CARRY_FACTOR`` times it, plus
    in quadrature what rounding across a kink adds."""
    return math.hypot(CARRY_FACTOR * received, flip[0] if flip is not None else 0.0)


def _flip_note(r: float, received: float, flip: tuple[float, str] | None) -> str:
    if flip is None or r <= CARRY_FACTOR * received:
        return ""
    return (f" but for inputs the two runs round to opposite sides of the kink of {flip[1]} (the gradient "
            f"there: rel-L2 {flip[0]:.2g})")


def absorb_training_drift(t: PairTable) -> int:
    """Rounding carried through training: from step 1 on, both sides compute from weights that
    already differ by their rounding (the weight pairs of the step passed, at relative error
    ``drift``). A value computed from them (output, gradient, loss) that fails by at most
    ``DRIFT_FACTOR`` x ``drift`` follows from that drift, however far past ``ROUNDING_MAX``: a
    small-batch BatchNorm network amplifies one update's rounding to percents within two steps
    (float64 agrees). The weights themselves are never excused here, so an optimizer bug (the
    weights leave their floor) keeps failing. Returns how many pairs passed."""
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
    for s in np.unique(step_col[derived]).tolist():
        w = rel[weights & (step_col == s)]
        w = w[np.isfinite(w)]
        drift = float(w.max()) if len(w) else 0.0
        if not drift > 0:
            continue
        for i in np.flatnonzero(derived & (step_col == s)).tolist():
            r, reason = float(rel[i]), t.reasons.get(i, "")
            bound = DRIFT_FACTOR * drift
            if not (math.isfinite(r) and r <= bound) or "NaN" in reason or "Inf" in reason or "shape" in reason:
                continue
            t.set_verdict(i, True, f"{DRIFT_REASON}: the weights of step {s} already differ by rel-L2 "
                                   f"{drift:.2g} (within their floor) and this differs by {r:.2g} ({reason})")
            n += 1
    return n

"""Tolerances and verdicts: the per-dtype defaults, the user's atol/rtol, and the verdict
modes as a table (``MODES``: name -> rule, description).

* ``mean``:   mean|a-b| <= atol + rtol*mean|b| (the default).
* ``strict``: every element satisfies |a-b| <= atol + rtol*|b| (numpy allclose).
* ``rel-l2``: ||a-b||_2 <= atol*sqrt(n) + rtol*||b||_2.

Before any mode: a pair that could not be compared (undecodable dtype) passes with that
reason; a NaN/Inf on one side only fails; integer and bool pairs (``Tolerance.exact``) pass
only when every element is equal; a stats-only pair is judged on its statistics.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from padiff_trace import InternalError

if TYPE_CHECKING:
    from ._metric_table import Metrics

__all__ = ["DEFAULT_TOLERANCES", "MODES", "Tolerance", "VerdictMode", "tolerance_for", "verdict"]


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float
    mode: str
    exact: bool = False  # integers and bools: equal or not, whatever the mode, the noise floor or a referee


Judge = Callable[["Metrics", Tolerance], tuple[bool, str]]


@dataclass(frozen=True)
class VerdictMode:
    name: str
    judge: Judge  # (metrics, tolerance) -> (passed, reason when not)
    description: str


def _mean(m: Metrics, tol: Tolerance) -> tuple[bool, str]:
    bound = tol.atol + tol.rtol * m.mean_abs_b
    ok = m.mean_abs <= bound
    return ok, "" if ok else f"mean|a-b| {m.mean_abs:.3g} > {bound:.3g}"


def _strict(m: Metrics, tol: Tolerance) -> tuple[bool, str]:
    ok = m.frac_fail == 0.0
    return ok, "" if ok else f"{m.frac_fail:.2%} of elements outside atol+rtol*|b|"


def _rel_l2(m: Metrics, tol: Tolerance) -> tuple[bool, str]:
    err = m.rel_l2 * m.norm_b if m.norm_b > 0 else m.max_abs * math.sqrt(max(m.n, 1))
    bound = tol.atol * math.sqrt(max(m.n, 1)) + tol.rtol * m.norm_b
    ok = err <= bound
    return ok, "" if ok else f"relative L2 error {m.rel_l2:.3g} > {bound / m.norm_b if m.norm_b else 0:.3g}"


MODES: dict[str, VerdictMode] = {
    v.name: v
    for v in (
        VerdictMode("mean", _mean, "mean|a-b| <= atol + rtol*mean|b|"),
        VerdictMode("strict", _strict, "every element |a-b| <= atol + rtol*|b| (numpy allclose)"),
        VerdictMode("rel-l2", _rel_l2, "||a-b|| <= atol*sqrt(n) + rtol*||b||"),
    )
}

# (mode, dtype class) -> (atol, rtol). See docs/analyzer.md for the reasoning.
DEFAULT_TOLERANCES: dict[str, dict[str, tuple[float, float]]] = {
    "mean": {"float64": (1e-13, 1e-9), "float32": (1e-9, 1e-5), "float16": (1e-6, 5e-3), "bfloat16": (1e-5, 3e-2)},
    "rel-l2": {"float64": (1e-13, 1e-9), "float32": (1e-9, 2e-5), "float16": (1e-6, 5e-3), "bfloat16": (1e-5, 3e-2)},
    "strict": {"float64": (1e-10, 1e-7), "float32": (1e-5, 1e-4), "float16": (1e-3, 1e-2), "bfloat16": (1e-2, 5e-2)},
}
_PRECISION = {"float64": 3, "complex128": 3, "float32": 2, "complex64": 2, "float16": 1, "bfloat16": 0}


def _dtype_class(a: str, b: str) -> str | None:
    """The lower-precision float class of the two dtypes; None when both are exact (int/bool)."""
    ranks = [_PRECISION[d] for d in (a, b) if d in _PRECISION]
    if not ranks:
        return None
    return {3: "float64", 2: "float32", 1: "float16", 0: "bfloat16"}[min(ranks)]


def tolerance_for(dtype_a: str, dtype_b: str, mode: str, atol: float | None, rtol: float | None) -> Tolerance:
    """Tolerance for a pair: user values override the per-dtype defaults; integers compare exactly."""
    cls = _dtype_class(dtype_a, dtype_b)
    if cls is None:
        return Tolerance(0.0, 0.0, mode, exact=True)
    da, dr = DEFAULT_TOLERANCES[mode][cls]
    return Tolerance(da if atol is None else atol, dr if rtol is None else rtol, mode)


def verdict(m: Metrics, tol: Tolerance) -> tuple[bool, str]:
    """(passed, reason) of a pair under ``tol``."""
    if m.uncomparable:
        return True, f"not compared: {m.uncomparable}"
    if m.nan_mismatch or m.inf_mismatch:
        return False, f"NaN/Inf on one side only ({m.nan_mismatch} NaN, {m.inf_mismatch} Inf mismatches)"
    if m.stats_only:
        bound = tol.atol + tol.rtol * max(m.mean_abs_b, 1e-300)
        worst = max(m.extra.get(k, 0.0) for k in ("mean", "std", "mean_abs"))
        ok = worst <= bound * 10 and m.extra.get("l2", 0.0) <= tol.atol * math.sqrt(max(m.n, 1)) + tol.rtol * 10 * (
            m.mean_abs_b * math.sqrt(max(m.n, 1))
        )
        return ok, "statistics only (no tensor data stored)" + ("" if ok else ": statistics differ")
    if tol.exact:
        ok = m.frac_fail == 0.0
        differ = round(m.frac_fail * max(m.n, 1))
        return ok, "" if ok else f"{differ} of {m.n} elements differ (exact dtypes; max |a-b| {m.max_abs:.6g})"
    mode = MODES.get(tol.mode)
    if mode is None:  # CompareOptions checks the mode: a caller built this Tolerance by hand
        raise InternalError(f"unknown verdict mode {tol.mode!r}; one of {', '.join(MODES)}")
    return mode.judge(m, tol)

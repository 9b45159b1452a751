"""Per-pair error metrics (float64, streamed in chunks) and the pass/fail verdict.

Side B is the reference: relative quantities divide by |b|.

* ``strict``: every element satisfies |a-b| <= atol + rtol*|b| (numpy allclose).
* ``mean``:   mean|a-b| <= atol + rtol*mean|b|.
* ``rel-l2``: ||a-b||_2 <= atol*sqrt(n) + rtol*||b||_2.

In every mode a NaN/Inf present on one side only fails the pair.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from padiff_trace import Record

__all__ = ["MODES", "Tolerance", "DEFAULT_TOLERANCES", "tolerance_for", "Metrics", "measure", "verdict"]

MODES = ("mean", "strict", "rel-l2")


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float
    mode: str


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
        return Tolerance(0.0, 0.0, mode)
    da, dr = DEFAULT_TOLERANCES[mode][cls]
    return Tolerance(da if atol is None else atol, dr if rtol is None else rtol, mode)


@dataclass
class Metrics:
    """Errors of one pair. ``stats_only``: computed from the stored statistics."""

    n: int = 0
    max_abs: float = 0.0
    argmax: tuple[int, ...] = ()
    mean_abs: float = 0.0
    max_rel: float = 0.0
    mean_rel: float = 0.0
    cosine: float = 1.0
    rel_l2: float = 0.0
    frac_fail: float = 0.0
    nan_mismatch: int = 0
    inf_mismatch: int = 0
    mean_abs_b: float = 0.0
    norm_b: float = 0.0
    nan_a: int = 0
    nan_b: int = 0
    inf_a: int = 0
    inf_b: int = 0
    stats_only: bool = False
    extra: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        d = {k: _jsonable(v) for k, v in self.__dict__.items() if k != "extra"}
        d["argmax"] = list(self.argmax)
        if self.extra:
            d["stat_diffs"] = {k: _jsonable(v) for k, v in self.extra.items()}
        return d


def _jsonable(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v


class _Acc:
    """Streaming accumulator over aligned flat chunks of A and B."""

    def __init__(self, tol: Tolerance, tiny: float) -> None:
        self.tol = tol
        self.tiny = tiny
        self.n = 0
        self.max_abs = -1.0
        self.arg = 0
        self.sum_abs = 0.0
        self.max_rel = 0.0
        self.sum_rel = 0.0
        self.ab = self.aa = self.bb = self.dd = 0.0
        self.sum_abs_b = 0.0
        self.fail = 0
        self.nan_mis = self.inf_mis = 0
        self.nan_a = self.nan_b = self.inf_a = self.inf_b = 0

    def add(self, a: np.ndarray, b: np.ndarray, offset: int) -> None:
        if a.dtype.kind == "c" or b.dtype.kind == "c":
            a = a.astype(np.complex128)
            b = b.astype(np.complex128)
        n = a.size
        self.n += n
        aa = float(np.vdot(a, a).real)
        bb = float(np.vdot(b, b).real)
        if not math.isfinite(aa + bb):
            a, b = self._nonfinite(a, b)
            aa = float(np.vdot(a, a).real)
            bb = float(np.vdot(b, b).real)
        d = a - b
        self.ab += float(np.vdot(a, b).real)
        self.aa += aa
        self.bb += bb
        self.dd += float(np.vdot(d, d).real)
        d = np.abs(d)
        absb = np.abs(b)
        if d.dtype.kind == "c":  # pragma: no cover - abs() is real
            d = d.real
        mx = float(d.max()) if n else 0.0
        if mx > self.max_abs:
            self.max_abs = mx
            self.arg = offset + int(d.argmax())
        self.sum_abs += float(d.sum())
        self.sum_abs_b += float(absb.sum())
        thr = absb * self.tol.rtol
        thr += self.tol.atol
        self.fail += int(np.count_nonzero(d > thr))
        absb += self.tiny
        np.divide(d, absb, out=d)
        if n:
            self.max_rel = max(self.max_rel, float(d.max()))
        self.sum_rel += float(d.sum())

    def _nonfinite(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        na, nb = np.isnan(a), np.isnan(b)
        ia, ib = np.isinf(a), np.isinf(b)
        self.nan_a += int(na.sum())
        self.nan_b += int(nb.sum())
        self.inf_a += int(ia.sum())
        self.inf_b += int(ib.sum())
        self.nan_mis += int(np.count_nonzero(na ^ nb))
        inf_bad = (ia | ib) & ~(na | nb) & (a != b)
        self.inf_mis += int(np.count_nonzero(inf_bad))
        bad = ~(np.isfinite(a) & np.isfinite(b))
        a = np.where(bad, 0.0, a)
        b = np.where(bad, 0.0, b)
        return a, b

    def result(self, shape: tuple[int, ...]) -> Metrics:
        n = max(self.n, 1)
        na, nb = math.sqrt(self.aa), math.sqrt(self.bb)
        if na == 0.0 and nb == 0.0:
            cos = 1.0
        elif na == 0.0 or nb == 0.0:
            cos = 0.0
        else:
            cos = self.ab / (na * nb)
        rel_l2 = math.sqrt(self.dd) / nb if nb > 0 else (0.0 if self.dd == 0 else math.inf)
        argmax = tuple(int(i) for i in np.unravel_index(self.arg, shape)) if self.n and shape else ()
        return Metrics(
            n=self.n,
            max_abs=max(self.max_abs, 0.0),
            argmax=argmax,
            mean_abs=self.sum_abs / n,
            max_rel=self.max_rel,
            mean_rel=self.sum_rel / n,
            cosine=cos,
            rel_l2=rel_l2,
            frac_fail=(self.fail + self.nan_mis + self.inf_mis) / n,
            nan_mismatch=self.nan_mis,
            inf_mismatch=self.inf_mis,
            mean_abs_b=self.sum_abs_b / n,
            norm_b=nb,
            nan_a=self.nan_a,
            nan_b=self.nan_b,
            inf_a=self.inf_a,
            inf_b=self.inf_b,
        )


def _tiny(dtype: str) -> float:
    try:
        return float(np.finfo(np.dtype(dtype)).tiny)
    except TypeError:
        return float(np.finfo(np.float32).tiny)


def measure(a: Record, b: Record, tol: Tolerance, perm: tuple[int, ...] | None = None) -> Metrics:
    """Metrics of A vs B; ``perm`` permutes A's axes into B's layout (needs a full read of A)."""
    if not (a.has_data and b.has_data):
        return _measure_stats(a, b)
    acc = _Acc(tol, _tiny(b.dtype if b.dtype in ("float16", "float64") else "float32"))
    if perm is not None:
        full = np.ascontiguousarray(np.transpose(a.read(), perm)).reshape(-1)
        full = full.astype(np.complex128 if full.dtype.kind == "c" else np.float64)
        off = 0
        for cb in b.iter_chunks():
            acc.add(full[off : off + cb.size], cb, off)
            off += cb.size
    else:
        off = 0
        for ca, cb in zip(a.iter_chunks(), b.iter_chunks()):
            acc.add(ca, cb, off)
            off += cb.size
    return acc.result(b.shape)


def _measure_stats(a: Record, b: Record) -> Metrics:
    sa, sb = a.stats, b.stats
    extra = {k: abs(sa[k] - sb[k]) for k in ("min", "max", "mean", "std", "mean_abs", "l2")}
    n = b.numel
    dl2 = extra["l2"]
    return Metrics(
        n=n,
        max_abs=max(extra["min"], extra["max"]),
        mean_abs=extra["mean_abs"],
        rel_l2=dl2 / sb["l2"] if sb["l2"] > 0 else (0.0 if dl2 == 0 else math.inf),
        cosine=math.nan,
        mean_abs_b=sb["mean_abs"],
        norm_b=sb["l2"],
        nan_a=int(sa["nan"]),
        nan_b=int(sb["nan"]),
        inf_a=int(sa["inf"]),
        inf_b=int(sb["inf"]),
        nan_mismatch=int(abs(sa["nan"] - sb["nan"])),
        inf_mismatch=int(abs(sa["inf"] - sb["inf"])),
        stats_only=True,
        extra=extra,
    )


def verdict(m: Metrics, tol: Tolerance) -> tuple[bool, str]:
    """(passed, reason) of a pair under ``tol``."""
    if m.nan_mismatch or m.inf_mismatch:
        return False, f"NaN/Inf on one side only ({m.nan_mismatch} NaN, {m.inf_mismatch} Inf mismatches)"
    if m.stats_only:
        bound = tol.atol + tol.rtol * max(m.mean_abs_b, 1e-300)
        worst = max(m.extra.get(k, 0.0) for k in ("mean", "std", "mean_abs"))
        ok = worst <= bound * 10 and m.extra.get("l2", 0.0) <= tol.atol * math.sqrt(max(m.n, 1)) + tol.rtol * 10 * (
            m.mean_abs_b * math.sqrt(max(m.n, 1))
        )
        return ok, "statistics only (no tensor data stored)" + ("" if ok else ": statistics differ")
    if tol.mode == "strict":
        ok = m.frac_fail == 0.0
        return ok, "" if ok else f"{m.frac_fail:.2%} of elements outside atol+rtol*|b|"
    if tol.mode == "mean":
        bound = tol.atol + tol.rtol * m.mean_abs_b
        ok = m.mean_abs <= bound
        return ok, "" if ok else f"mean|a-b| {m.mean_abs:.3g} > {bound:.3g}"
    if tol.mode == "rel-l2":
        err = m.rel_l2 * m.norm_b if m.norm_b > 0 else m.max_abs * math.sqrt(max(m.n, 1))
        bound = tol.atol * math.sqrt(max(m.n, 1)) + tol.rtol * m.norm_b
        ok = err <= bound
        return ok, "" if ok else f"relative L2 error {m.rel_l2:.3g} > {bound / m.norm_b if m.norm_b else 0:.3g}"
    raise ValueError(f"unknown mode {tol.mode!r}")

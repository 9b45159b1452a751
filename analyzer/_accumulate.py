"""The streaming accumulator of one pair's metrics (C kernel, or numpy blocks) and its result."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from padiff_trace._native import kernel, kind_of

from ._tolerance import Tolerance

__all__ = ["BLOCK", "Accumulator", "Metrics"]

BLOCK = 1 << 15  # float64 elements per kernel block: 256 KB per buffer, the kernel's working set stays in L2
_SEG = 1 << 13  # dot products run on rows of this length: OpenBLAS threads dots above 10000 elements,
# and its spinning threads on a busy machine made a 32k-element dot 50x slower


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


class Accumulator:
    """Streaming accumulator over aligned flat chunks of A and B (any real or complex dtype).

    Real float data goes through the C kernel when it is built (``padiff_trace._native``).
    Otherwise (and for ints and bools) a numpy kernel runs: each block of ``BLOCK`` elements is upcast
    once into two reused float64 buffers (small enough for L2), then every metric is
    taken from them with in-place ufuncs and BLAS dot products (sums are dots with a
    ones vector): about 17 in-cache passes, no temporary arrays.
    """

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
        self._buf: tuple[np.ndarray, ...] | None = None

    def add(self, a: np.ndarray, b: np.ndarray, offset: int) -> None:
        if a.dtype.kind == "c" or b.dtype.kind == "c":
            self._add_complex(a.astype(np.complex128), b.astype(np.complex128), offset)
            return
        k = kernel()
        ka, kb = (kind_of(a), kind_of(b)) if k is not None else (None, None)
        if ka is not None and kb is not None and a.size:
            self._fold(k.pair(a, ka, b, kb, self.tol.atol, self.tol.rtol, self.tiny), offset)
            return
        self.add_numpy(a, b, offset)

    def _fold(self, r: tuple[Any, ...], offset: int) -> None:
        """Fold the C kernel's sums over one chunk (see ``_ckernel.c``: ``pair``) into this accumulator."""
        n, arg, max_abs, sum_abs, max_rel, sum_rel, ab, aa, bb, dd, sum_abs_b = r[:11]
        fail, nan_a, nan_b, inf_a, inf_b, nan_mis, inf_mis = r[11:]
        if max_abs > self.max_abs:
            self.max_abs, self.arg = max_abs, offset + arg
        self.max_rel = max(self.max_rel, max_rel)
        self.n += n
        self.sum_abs += sum_abs
        self.sum_rel += sum_rel
        self.ab += ab
        self.aa += aa
        self.bb += bb
        self.dd += dd
        self.sum_abs_b += sum_abs_b
        self.fail += fail
        self.nan_a += nan_a
        self.nan_b += nan_b
        self.inf_a += inf_a
        self.inf_b += inf_b
        self.nan_mis += nan_mis
        self.inf_mis += inf_mis

    def add_numpy(self, a: np.ndarray, b: np.ndarray, offset: int) -> None:
        """``add`` for real data in numpy only (fallback of the C kernel, and its reference in tests)."""
        if self._buf is None:
            m = min(BLOCK, max(a.size, 1))
            self._buf = (np.empty(m), np.empty(m), np.empty(m), np.empty(m, dtype=bool))
        for s in range(0, a.size, BLOCK):
            e = min(a.size, s + BLOCK)
            self._block(a[s:e], b[s:e], offset + s)

    def _block(self, a: np.ndarray, b: np.ndarray, offset: int) -> None:
        assert self._buf is not None
        m = a.size
        x, y, t, mask = (v[:m] for v in self._buf)
        np.copyto(x, a, casting="unsafe")
        np.copyto(y, b, casting="unsafe")
        self.n += m
        aa, bb = _dot(x, x), _dot(y, y)
        if not math.isfinite(aa + bb):
            self._nonfinite(x, y, mask)
            aa, bb = _dot(x, x), _dot(y, y)
        self.aa += aa
        self.bb += bb
        self.ab += _dot(x, y)
        np.subtract(x, y, out=x)  # x = a - b
        self.dd += _dot(x, x)
        np.abs(x, out=x)
        np.abs(y, out=y)
        self.sum_abs += float(x.sum())
        self.sum_abs_b += float(y.sum())
        i = int(x.argmax())
        mx = float(x[i])
        if mx > self.max_abs:
            self.max_abs, self.arg = mx, offset + i
        if mx > self.tol.atol:  # else no element can be outside atol + rtol*|b|
            np.multiply(y, self.tol.rtol, out=t)
            t += self.tol.atol
            np.greater(x, t, out=mask)
            self.fail += int(np.count_nonzero(mask))
        y += self.tiny
        np.divide(x, y, out=x)
        self.max_rel = max(self.max_rel, float(x.max()))
        self.sum_rel += float(x.sum())

    def merge(self, o: Accumulator) -> None:
        """Fold another accumulator (of other elements of the same pair) into this one."""
        if o.max_abs > self.max_abs or (o.max_abs == self.max_abs and o.n and o.arg < self.arg):
            self.max_abs, self.arg = o.max_abs, o.arg
        self.max_rel = max(self.max_rel, o.max_rel)
        for k in ("n", "sum_abs", "sum_rel", "ab", "aa", "bb", "dd", "sum_abs_b", "fail", "nan_mis", "inf_mis",
                  "nan_a", "nan_b", "inf_a", "inf_b"):
            setattr(self, k, getattr(self, k) + getattr(o, k))

    def _nonfinite(self, x: np.ndarray, y: np.ndarray, bad: np.ndarray) -> None:
        """Count NaN/Inf (mismatches too) and zero every element non-finite on either side, in place."""
        na, nb, ia, ib = self._count_nonfinite(x, y)
        np.logical_or(na | ia, nb | ib, out=bad)
        x[bad] = 0.0
        y[bad] = 0.0

    def _count_nonfinite(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
        """Add the NaN/Inf counts of both sides and their mismatches; return the four masks."""
        na, nb, ia, ib = np.isnan(x), np.isnan(y), np.isinf(x), np.isinf(y)
        self.nan_a += int(na.sum())
        self.nan_b += int(nb.sum())
        self.inf_a += int(ia.sum())
        self.inf_b += int(ib.sum())
        self.nan_mis += int(np.count_nonzero(na ^ nb))
        self.inf_mis += int(np.count_nonzero((ia | ib) & ~(na | nb) & (x != y)))
        return na, nb, ia, ib

    def _add_complex(self, a: np.ndarray, b: np.ndarray, offset: int) -> None:
        n = a.size
        self.n += n
        aa = float(np.vdot(a, a).real)
        bb = float(np.vdot(b, b).real)
        if not math.isfinite(aa + bb):
            bad = ~(np.isfinite(a) & np.isfinite(b))
            self._count_nonfinite(a, b)
            a, b = np.where(bad, 0, a), np.where(bad, 0, b)
            aa, bb = float(np.vdot(a, a).real), float(np.vdot(b, b).real)
        self.aa += aa
        self.bb += bb
        self.ab += float(np.vdot(a, b).real)
        d = a - b
        self.dd += float(np.vdot(d, d).real)
        d = np.abs(d)
        absb = np.abs(b)
        if n:
            i = int(d.argmax())
            if d[i] > self.max_abs:
                self.max_abs, self.arg = float(d[i]), offset + i
        self.sum_abs += float(d.sum())
        self.sum_abs_b += float(absb.sum())
        self.fail += int(np.count_nonzero(d > absb * self.tol.rtol + self.tol.atol))
        rel = d / (absb + self.tiny)
        if n:
            self.max_rel = max(self.max_rel, float(rel.max()))
        self.sum_rel += float(rel.sum())

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


def _dot(x: np.ndarray, y: np.ndarray) -> float:
    """x . y in float64 on single-threaded BLAS calls (rows of ``_SEG``), whatever the machine's load."""
    k = x.size - x.size % _SEG
    s = float(np.vecdot(x[:k].reshape(-1, _SEG), y[:k].reshape(-1, _SEG)).sum()) if k else 0.0
    return s + float(np.dot(x[k:], y[k:])) if k < x.size else s

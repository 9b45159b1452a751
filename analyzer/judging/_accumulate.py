"""The streaming accumulator of one pair: chunks of A and B in, a sums record out.

Every kernel produces the same record (``_sums.py``: ``SUM_FIELDS``) for the
chunk it measured - the C kernel fills it, the numpy kernel and the complex path build
it - and the accumulator folds chunk records by the fields' merge rules. The metrics are
formulas over the finished record (``Metrics.from_sums``, ``_metric_table.py``).
"""

from __future__ import annotations

import math

import numpy as np

from padiff_trace.arrays import kind_of

from ._metric_table import Metrics
from ._sums import INDEX, SUM_FIELDS, empty_sums, merge, pair_kernel, shift_index
from ._tolerance import Tolerance
from ._ulp import FORMAT_KINDS, array_format, fill_ulp, ulp_format

__all__ = ["BLOCK", "Accumulator", "Metrics"]

BLOCK = 1 << 15  # float64 elements per kernel block: 256 KB per buffer, the kernel's working set stays in L2
_SEG = 1 << 13  # dot products run on rows of this length: OpenBLAS threads dots above 10000 elements,
# and its spinning threads on a busy machine made a 32k-element dot 50x slower
_N, _ARG, _MAX_ABS, _SUM_ABS = INDEX["n"], INDEX["arg"], INDEX["max_abs"], INDEX["sum_abs"]
_MAX_REL, _SUM_REL, _AB, _AA, _BB, _DD = (INDEX[k] for k in ("max_rel", "sum_rel", "ab", "aa", "bb", "dd"))
_SUM_ABS_B, _FAIL = INDEX["sum_abs_b"], INDEX["fail"]
_NAN_A, _NAN_B, _INF_A, _INF_B, _NAN_MIS, _INF_MIS = (INDEX[k] for k in ("nan_a", "nan_b", "inf_a", "inf_b", "nan_mis", "inf_mis"))
_ULP = tuple(INDEX[k] for k in ("bits_n", "same_bits", "ulp_n", "ulp_max", "ulp_sum"))
_EXACT_KINDS = "iub"  # integer, unsigned, bool: compared exactly, in their own dtype


class Accumulator:
    """Streaming accumulator over aligned flat chunks of A and B (any real or complex dtype).

    Real float data goes through the C kernel when it is built (``padiff_trace.arrays._native``);
    ``generic`` makes it take its portable path even where AVX2 runs (for tests).
    Otherwise (and for ints and bools) a numpy kernel runs: each block of ``BLOCK`` elements is
    upcast once into two reused float64 buffers (small enough for L2), then every sum is taken
    from them with in-place ufuncs and BLAS dot products: about 17 in-cache passes, no
    temporary arrays. Integer and bool pairs under an exact tolerance count the elements that
    differ in their own dtype (an int64 off by one above 2**53 still differs).

    ULP distances and bit-identical elements (``_ulp.py``) are measured in the format
    of ``dtypes`` (the pair's logical dtypes: bfloat16 arrives decoded as float32), or of the
    arrays' dtypes when not given; the C kernel measures them where it converts to that format,
    else ``fill_ulp`` does.
    """

    def __init__(self, tol: Tolerance, tiny: float, generic: bool = False,
                 dtypes: tuple[str, str] | None = None) -> None:
        self.tol = tol
        self.tiny = tiny
        self.generic = generic
        self._ulp_given = dtypes is not None
        self.ulp_format = ulp_format(*dtypes) if dtypes is not None else None
        self.sums = empty_sums()  # the record of every element folded so far
        self._empty = True  # nothing folded yet: the first chunk's record is copied (merging into the identity)
        self._chunk = np.empty(len(SUM_FIELDS))
        self._buf: tuple[np.ndarray, ...] | None = None

    def add(self, a: np.ndarray, b: np.ndarray, offset: int) -> None:
        """Fold elements [offset, offset + len) of the pair."""
        if a.dtype.kind == "c" or b.dtype.kind == "c":
            self._fold(self._complex(a.astype(np.complex128), b.astype(np.complex128)), offset)
            return
        k = pair_kernel()
        if k is not None and a.size:
            ka, kb = kind_of(a), kind_of(b)
            if ka is not None and kb is not None:
                fmt = self._format(a, b)
                ukind = FORMAT_KINDS[fmt] if fmt is not None else ""
                if not k.pair(a, ka, b, kb, self.tol.atol, self.tol.rtol, self.tiny, self._chunk, self.generic, ukind) \
                        and fmt is not None:  # a conversion the kernel does not make
                    fill_ulp(self._chunk, a, b, fmt, _ULP)
                self._fold(self._chunk, offset)
                return
        self.add_numpy(a, b, offset)

    def _format(self, a: np.ndarray, b: np.ndarray) -> str | None:
        """The format this pair's ULP distances are measured in (None: not measured)."""
        return self.ulp_format if self._ulp_given else array_format(a, b)

    def _fold(self, chunk: np.ndarray, offset: int) -> None:
        shift_index(chunk, offset)
        if self._empty:
            np.copyto(self.sums, chunk)
            self._empty = False
        else:
            merge(self.sums, chunk)

    def add_numpy(self, a: np.ndarray, b: np.ndarray, offset: int) -> None:
        """``add`` for real data in numpy only (fallback of the C kernel, and its reference in tests)."""
        if self._buf is None:
            m = min(BLOCK, max(a.size, 1))
            self._buf = (np.empty(m), np.empty(m), np.empty(m), np.empty(m, dtype=bool))
        exact = self.tol.exact and a.dtype.kind in _EXACT_KINDS and b.dtype.kind in _EXACT_KINDS
        for s in range(0, a.size, BLOCK):
            e = min(a.size, s + BLOCK)
            self._fold(self._block(a[s:e], b[s:e], exact), offset + s)

    def _block(self, a: np.ndarray, b: np.ndarray, exact: bool) -> np.ndarray:
        assert self._buf is not None
        r = self._chunk
        r[:] = 0.0
        m = a.size
        x, y, t, mask = (v[:m] for v in self._buf)
        if exact:
            r[_FAIL] = np.count_nonzero(_differ(a, b))
        np.copyto(x, a, casting="unsafe")
        np.copyto(y, b, casting="unsafe")
        r[_N] = m
        aa, bb = _dot(x, x), _dot(y, y)
        if not math.isfinite(aa + bb):
            _nonfinite(x, y, mask, r)
            aa, bb = _dot(x, x), _dot(y, y)
        r[_AA], r[_BB], r[_AB] = aa, bb, _dot(x, y)
        np.subtract(x, y, out=x)  # x = a - b
        r[_DD] = _dot(x, x)
        np.abs(x, out=x)
        np.abs(y, out=y)
        r[_SUM_ABS] = float(x.sum())
        r[_SUM_ABS_B] = float(y.sum())
        i = int(x.argmax())
        mx = float(x[i])
        r[_ARG], r[_MAX_ABS] = i, mx
        if not exact and mx > self.tol.atol:  # else no element can be outside atol + rtol*|b|
            np.multiply(y, self.tol.rtol, out=t)
            t += self.tol.atol
            np.greater(x, t, out=mask)
            r[_FAIL] = np.count_nonzero(mask)
        y += self.tiny
        np.divide(x, y, out=x)
        r[_MAX_REL] = float(x.max())
        r[_SUM_REL] = float(x.sum())
        fmt = self._format(a, b)
        if fmt is not None:
            fill_ulp(r, a, b, fmt, _ULP)
        return r

    def merge(self, o: Accumulator) -> None:
        """Fold another accumulator (of other elements of the same pair) into this one."""
        merge(self.sums, o.sums)
        self._empty = self._empty and o._empty

    def _complex(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        r = np.zeros(len(SUM_FIELDS))
        n = a.size
        r[_N] = n
        aa = float(np.vdot(a, a).real)
        bb = float(np.vdot(b, b).real)
        if not math.isfinite(aa + bb):
            bad = ~(np.isfinite(a) & np.isfinite(b))
            _count_nonfinite(a, b, r)
            a, b = np.where(bad, 0, a), np.where(bad, 0, b)
            aa, bb = float(np.vdot(a, a).real), float(np.vdot(b, b).real)
        r[_AA], r[_BB], r[_AB] = aa, bb, float(np.vdot(a, b).real)
        d = a - b
        r[_DD] = float(np.vdot(d, d).real)
        d = np.abs(d)
        absb = np.abs(b)
        if n:
            i = int(d.argmax())
            r[_ARG], r[_MAX_ABS] = i, float(d[i])
        r[_SUM_ABS] = float(d.sum())
        r[_SUM_ABS_B] = float(absb.sum())
        r[_FAIL] = np.count_nonzero(d > absb * self.tol.rtol + self.tol.atol)
        rel = d / (absb + self.tiny)
        if n:
            r[_MAX_REL] = float(rel.max())
        r[_SUM_REL] = float(rel.sum())
        return r

    def result(self, shape: tuple[int, ...]) -> Metrics:
        return Metrics.from_sums(self.sums, shape)


def _nonfinite(x: np.ndarray, y: np.ndarray, bad: np.ndarray, r: np.ndarray) -> None:
    """Count NaN/Inf (mismatches too) into ``r`` and zero every element non-finite on either side, in place."""
    na, nb, ia, ib = _count_nonfinite(x, y, r)
    np.logical_or(na | ia, nb | ib, out=bad)
    x[bad] = 0.0
    y[bad] = 0.0


def _count_nonfinite(x: np.ndarray, y: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, ...]:
    """Add the NaN/Inf counts of both sides and their mismatches to ``r``; return the four masks."""
    na, nb, ia, ib = np.isnan(x), np.isnan(y), np.isinf(x), np.isinf(y)
    r[_NAN_A] += int(na.sum())
    r[_NAN_B] += int(nb.sum())
    r[_INF_A] += int(ia.sum())
    r[_INF_B] += int(ib.sum())
    r[_NAN_MIS] += int(np.count_nonzero(na ^ nb))
    r[_INF_MIS] += int(np.count_nonzero((ia | ib) & ~(na | nb) & (x != y)))
    return na, nb, ia, ib


def _differ(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where two integer/bool arrays differ, compared in integers (numpy would compare int64
    with uint64 in float64, where neighbours above 2**53 are equal)."""
    ka, kb = a.dtype.kind, b.dtype.kind
    if {ka, kb} == {"i", "u"}:
        s, u = (a, b) if ka == "i" else (b, a)
        return (s < 0) | (s.astype(np.uint64) != u.astype(np.uint64))
    return np.not_equal(a, b)


def _dot(x: np.ndarray, y: np.ndarray) -> float:
    """x . y in float64 on single-threaded BLAS calls (rows of ``_SEG``), whatever the machine's load."""
    k = x.size - x.size % _SEG
    s = float(np.vecdot(x[:k].reshape(-1, _SEG), y[:k].reshape(-1, _SEG)).sum()) if k else 0.0
    return s + float(np.dot(x[k:], y[k:])) if k < x.size else s

"""Per-tensor statistics, accumulated in float64 over bounded-size chunks.

min, max, mean, std (population), mean |x| and the L2 norm are taken over the
finite elements only; ``nan`` and ``inf`` count the others. For complex tensors
all of them describe the magnitudes |x|. An empty tensor has l2 = 0, counts 0
and NaN elsewhere; a dtype whose values cannot be decoded (float8) has NaN everywhere.

Speed matters here (every recorded tensor passes through). Float tensors go through
the one-pass C kernel when it is built (``_native``); otherwise values are converted
to float64 one cache-sized block at a time, sums use numpy's pairwise/SIMD loops (not BLAS), and the
variance is ``E[x^2] - mean^2`` unless that would cancel (``mean^2 > 1e4 var``),
in which case a second, two-pass sweep computes it exactly.
"""

from __future__ import annotations

import math

import numpy as np

from ..trace._schema import STAT_FIELDS
from ._dtypes import to_float64
from ._native import kernel, kind_of

__all__ = ["CHUNK_ELEMS", "copy_with_stats", "tensor_stats", "stats_tuple", "stats_numpy", "stats_dict"]

CHUNK_ELEMS = 1 << 20
_BLOCK = 1 << 16  # float64 block that stays in L2 cache
_NAN8 = (math.nan,) * len(STAT_FIELDS)
_EMPTY = (math.nan, math.nan, math.nan, math.nan, math.nan, 0.0, 0.0, 0.0)
_DIRECT = frozenset(
    ("float16", "float32", "float64", "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")
)
_CANCEL = 1e4  # mean^2 / var above which the one-pass variance is recomputed


def _sums(v: np.ndarray) -> tuple[int, float, float, float, float, float, int, int]:
    """(n, sum, sum of squares, sum |x|, min, max, nan, inf) of a float64 block."""
    mn = v.min()
    mx = v.max()
    nan = inf = 0
    if not (-math.inf < mn <= mx < math.inf):
        isnan = np.isnan(v)
        nan = int(isnan.sum())
        finite = np.isfinite(v)
        inf = int(v.size - nan - int(finite.sum()))
        v = v[finite]
        if v.size == 0:
            return 0, 0.0, 0.0, 0.0, math.inf, -math.inf, nan, inf
        mn = v.min()
        mx = v.max()
    n = v.size
    # numpy's own loops, not BLAS: multi-threaded BLAS dot collapses on a busy machine
    s = float(np.add.reduce(v))
    ss = float(np.einsum("i,i->", v, v))
    sa = s if mn >= 0 else float(np.add.reduce(np.abs(v)))
    return n, s, ss, sa, float(mn), float(mx), nan, inf


def _finish(
    n: int, s: float, ss: float, sa: float, mn: float, mx: float, nan: int, inf: int, m2: float | None
) -> tuple[float, ...]:
    l2 = math.sqrt(ss)
    if n == 0:
        return (math.nan, math.nan, math.nan, math.nan, math.nan, l2, float(nan), float(inf))
    mean = s / n
    var = m2 / n if m2 is not None else max(ss / n - mean * mean, 0.0)
    return (mn, mx, mean, math.sqrt(var), sa / n, l2, float(nan), float(inf))


def _needs_two_pass(n: int, s: float, ss: float, mn: float, mx: float) -> bool:
    if n == 0 or mn == mx:
        return False
    mean = s / n
    var = ss / n - mean * mean
    return var <= 0.0 or mean * mean > _CANCEL * var


def stats_tuple(stored: np.ndarray, logical: str) -> tuple[float, ...]:
    """Statistics of a stored (see ``_dtypes``) array, in ``STAT_FIELDS`` order."""
    k = kernel()
    kind = kind_of(stored, logical) if k is not None and stored.size else None
    if k is not None and kind is not None:
        return k.summary(stored, kind)  # the same formulas, in C
    return stats_numpy(stored, logical)


def copy_with_stats(stored: np.ndarray, logical: str) -> tuple[np.ndarray, tuple[float, ...] | None]:
    """A private copy of a stored array and, when the C kernel takes it, its statistics computed
    in the same pass (a copy alone costs nearly as much); otherwise (copy, None)."""
    k = kernel()
    kind = kind_of(stored, logical) if k is not None and stored.size else None
    if k is None or kind is None:
        return np.array(stored, copy=True, order="C"), None
    out = np.empty_like(stored, order="C")
    return out, k.summary(stored, kind, out)


def stats_numpy(stored: np.ndarray, logical: str) -> tuple[float, ...]:
    """``stats_tuple`` in numpy only (the fallback of the C kernel, and its reference in tests)."""
    flat = stored.reshape(-1)
    if flat.size == 0:
        return _NAN8 if to_float64(flat, logical) is None else _EMPTY
    if flat.size <= _BLOCK:
        vals = to_float64(flat, logical)
        if vals is None:
            return _NAN8
        if vals.dtype.kind == "c":
            vals = np.abs(vals)
        n, s, ss, sa, mn, mx, nan, inf = _sums(vals)
        m2 = None
        if _needs_two_pass(n, s, ss, mn, mx):
            fin = vals[np.isfinite(vals)] if nan or inf else vals
            d = fin - s / n
            m2 = float(np.einsum("i,i->", d, d))
        return _finish(n, s, ss, sa, mn, mx, nan, inf, m2)
    return _large(flat, logical)


def _large(flat: np.ndarray, logical: str) -> tuple[float, ...]:
    if to_float64(flat[:0], logical) is None:
        return _NAN8
    direct = logical in _DIRECT
    buf = np.empty(_BLOCK)
    n = 0
    s = ss = sa = 0.0
    mn, mx = math.inf, -math.inf
    nan = inf = 0

    def block(start: int) -> np.ndarray:
        piece = flat[start : start + _BLOCK]
        if direct:
            out = buf[: piece.size]
            np.copyto(out, piece, casting="unsafe")
            return out
        vals = to_float64(piece, logical)
        assert vals is not None
        return np.abs(vals) if vals.dtype.kind == "c" else vals

    for start in range(0, flat.size, _BLOCK):
        bn, bs, bss, bsa, bmn, bmx, bnan, binf = _sums(block(start))
        n += bn
        s += bs
        ss += bss
        sa += bsa
        mn = min(mn, bmn)
        mx = max(mx, bmx)
        nan += bnan
        inf += binf
    m2 = None
    if _needs_two_pass(n, s, ss, mn, mx):
        mean = s / n
        m2 = 0.0
        for start in range(0, flat.size, _BLOCK):
            v = block(start)
            if nan or inf:
                v = v[np.isfinite(v)]
            d = v - mean
            m2 += float(np.einsum("i,i->", d, d))
    return _finish(n, s, ss, sa, mn, mx, nan, inf, m2)


def tensor_stats(stored: np.ndarray, logical: str) -> np.ndarray:
    """Statistics of a stored array as a float64 array in ``STAT_FIELDS`` order."""
    return np.array(stats_tuple(stored, logical), dtype=np.float64)


def stats_dict(row: np.ndarray) -> dict[str, float]:
    return {name: float(v) for name, v in zip(STAT_FIELDS, row)}


MANY_MAX_ELEMS = 4096  # tensors up to this size may be summarised in batches


def stats_many(arrays: list[np.ndarray]) -> list[tuple[float, ...]] | None:
    """Statistics of many small non-empty float arrays in one vectorised pass (segment
    reductions over their concatenation, two-pass variance). None when any value is NaN
    or Inf: the caller then summarises one by one."""
    sizes = np.fromiter((a.size for a in arrays), dtype=np.int64, count=len(arrays))
    cat = np.concatenate([a.reshape(-1) for a in arrays]).astype(np.float64)
    if not np.isfinite(cat).all():
        return None
    idx = np.zeros(len(arrays), dtype=np.int64)
    np.cumsum(sizes[:-1], out=idx[1:])
    mean = np.add.reduceat(cat, idx) / sizes
    d = cat - np.repeat(mean, sizes)
    cols = (
        np.minimum.reduceat(cat, idx),
        np.maximum.reduceat(cat, idx),
        mean,
        np.sqrt(np.add.reduceat(d * d, idx) / sizes),
        np.add.reduceat(np.abs(cat), idx) / sizes,
        np.sqrt(np.add.reduceat(cat * cat, idx)),
    )
    return [(*row, 0.0, 0.0) for row in zip(*(c.tolist() for c in cols))]

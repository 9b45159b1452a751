"""Per-tensor statistics, computed in float64 and in bounded-size chunks.

min, max, mean, std (population), mean |x| and the L2 norm are taken over the
finite elements only; ``nan`` and ``inf`` count the others. For complex tensors
min/max/mean/std describe the magnitudes |x|. An empty tensor has l2 = 0, counts 0
and NaN elsewhere.
"""

from __future__ import annotations

import math

import numpy as np

from ._dtypes import to_float64
from ._schema import STAT_FIELDS

__all__ = ["CHUNK_ELEMS", "tensor_stats", "stats_dict"]

CHUNK_ELEMS = 1 << 20


class _Acc:
    """Mergeable accumulator (Chan et al. parallel variance)."""

    __slots__ = ("n", "mean", "m2", "mn", "mx", "sabs", "ssq", "nan", "inf")

    def __init__(self) -> None:
        self.n = 0
        self.mean = 0.0
        self.m2 = 0.0
        self.mn = math.inf
        self.mx = -math.inf
        self.sabs = 0.0
        self.ssq = 0.0
        self.nan = 0
        self.inf = 0

    def add(self, vals: np.ndarray) -> None:
        if vals.dtype.kind == "c":
            vals = np.abs(vals)
        if vals.size == 0:
            return
        mn = vals.min()
        mx = vals.max()
        if not (math.isfinite(mn) and math.isfinite(mx)):
            nan = np.isnan(vals)
            finite = np.isfinite(vals)
            self.nan += int(nan.sum())
            self.inf += int(vals.size - finite.sum() - nan.sum())
            vals = vals[finite]
            if vals.size == 0:
                return
            mn = vals.min()
            mx = vals.max()
        n = vals.size
        mean = float(vals.sum()) / n
        d = vals - mean
        m2 = float(np.dot(d, d))
        self.sabs += float(np.abs(vals).sum())
        self.ssq += float(np.dot(vals, vals))
        self.mn = min(self.mn, float(mn))
        self.mx = max(self.mx, float(mx))
        if self.n == 0:
            self.n, self.mean, self.m2 = n, mean, m2
        else:
            tot = self.n + n
            delta = mean - self.mean
            self.mean += delta * n / tot
            self.m2 += m2 + delta * delta * self.n * n / tot
            self.n = tot

    def result(self) -> np.ndarray:
        out = np.full(len(STAT_FIELDS), np.nan)
        out[5] = math.sqrt(self.ssq)
        out[6] = self.nan
        out[7] = self.inf
        if self.n:
            out[0] = self.mn
            out[1] = self.mx
            out[2] = self.mean
            out[3] = math.sqrt(max(self.m2, 0.0) / self.n)
            out[4] = self.sabs / self.n
        return out


def tensor_stats(stored: np.ndarray, logical: str) -> np.ndarray:
    """Statistics of a stored (see ``_dtypes``) array, in ``STAT_FIELDS`` order."""
    flat = stored.reshape(-1)
    acc = _Acc()
    if to_float64(flat[:0], logical) is None:
        out = acc.result()
        out[5] = np.nan
        return out
    for start in range(0, flat.size, CHUNK_ELEMS):
        vals = to_float64(flat[start : start + CHUNK_ELEMS], logical)
        assert vals is not None
        acc.add(vals)
    return acc.result()


def stats_dict(row: np.ndarray) -> dict[str, float]:
    return {name: float(v) for name, v in zip(STAT_FIELDS, row)}

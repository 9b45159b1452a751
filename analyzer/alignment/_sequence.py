"""Ordered alignment of two call sequences under a score: the pairs, increasing on both sides,
that maximise the summed score (``padiff_trace.matching.align``), in one matrix when small and in
overlapping windows when large; and the non-crossing subset of fixed pins (``monotone``).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

import numpy as np

from padiff_trace.matching import align

from ._calls import Call

__all__ = ["DENSE_CELLS", "monotone", "order"]

DENSE_CELLS = 65_536  # a piece up to this many score cells is aligned in one matrix
WINDOW_ROWS = 256  # larger pieces: windows of this many A calls...
WINDOW_COLS_MAX = 4096  # ...against at least twice as many B calls (more where B is longer), at most this

_Scorer = Callable[[list[Call], list[Call]], np.ndarray]


def monotone(fixed: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest subset of ``(i, j)`` pairs increasing in both (pins that do not cross)."""
    fixed = sorted(fixed)
    tails: list[int] = []  # smallest j ending an increasing run of each length
    tail_at: list[int] = []  # index in ``fixed`` of that run's last pair
    prev = [-1] * len(fixed)
    for k, (_, j) in enumerate(fixed):
        pos = bisect.bisect_left(tails, j)
        prev[k] = tail_at[pos - 1] if pos else -1
        if pos == len(tails):
            tails.append(j)
            tail_at.append(k)
        else:
            tails[pos], tail_at[pos] = j, k
    out: list[tuple[int, int]] = []
    k = tail_at[-1] if tail_at else -1
    while k != -1:
        out.append(fixed[k])
        k = prev[k]
    return out[::-1]


def order(xs: list[Call], ys: list[Call], scorer: _Scorer) -> list[tuple[int, int]]:
    """Monotone pairs of ``xs`` and ``ys`` maximising the summed score; windowed when large."""
    n, m = len(xs), len(ys)
    if n * m > DENSE_CELLS:
        return _windowed(xs, ys, scorer)
    s = scorer(xs, ys)
    if n == m and _diagonal_optimal(s):
        return [(i, i) for i in range(n)]
    return align(s)


def _diagonal_optimal(s: np.ndarray) -> bool:
    """Whether pairing the k-th with the k-th is an optimal alignment of a square score: every
    diagonal score positive and the largest of its row (any monotone pairing then sums to at
    most the diagonal's sum). The common case of two identical sequences, without the DP."""
    d = np.diagonal(s)
    return bool((d > 0).all() and (d >= s.max(axis=1)).all())


def _windowed(xs: list[Call], ys: list[Call], scorer: _Scorer) -> list[tuple[int, int]]:
    """Alignment of a long piece in overlapping windows: ``WINDOW_ROWS`` A calls against a
    B window at least twice as wide (wider in proportion where B is longer); the pairs in
    the first half of each window are kept and the next window starts after the last of
    them. O((n + m) * window) time and memory. A run of more than a window's width of calls
    present on one side only is where it may miss pairs (a mapping or anchors split there)."""
    n, m = len(xs), len(ys)
    rows = WINDOW_ROWS
    cols = int(min(WINDOW_COLS_MAX, max(2 * rows, np.ceil(2 * rows * m / max(n, 1)))))
    out: list[tuple[int, int]] = []
    i0 = j0 = 0
    while i0 < n and j0 < m:
        i1, j1 = min(n, i0 + rows), min(m, j0 + cols)
        got = align(scorer(xs[i0:i1], ys[j0:j1]))
        last = i1 == n
        keep = got if last else [(i, j) for i, j in got if i < rows // 2] or got[:1]
        if not keep:
            i0 += rows // 2
            continue
        out.extend((i0 + i, j0 + j) for i, j in keep)
        if last:
            break
        i0, j0 = out[-1][0] + 1, out[-1][1] + 1
    return out

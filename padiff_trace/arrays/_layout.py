"""Array layout helpers shared by the recorder and the analyzer."""

from __future__ import annotations

import numpy as np

__all__ = ["same_order_reshape", "transposed_rows"]


def transposed_rows(m: np.ndarray, r0: int = 0, r1: int | None = None, tile: int = 64) -> np.ndarray:
    """Rows [r0, r1) of ``m.T`` (``m`` 2-D) as a C-contiguous array, copied in tiles that stay
    in cache: numpy's strided copy of a transposed 4 MB matrix is ~6x slower (Linear weights,
    stored [in, out] by paddle and [out, in] by torch, are transposed on every transfer)."""
    if r1 is None:
        r1 = m.shape[1]
    out = np.empty((r1 - r0, m.shape[0]), dtype=m.dtype)
    for c in range(0, m.shape[0], tile):
        out[:, c : c + tile] = m[c : c + tile, r0:r1].T
    return out


def same_order_reshape(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Whether one shape is the other with some axes split into consecutive axes (``[64, 64]``
    vs ``[64, 4, 16]``: a head split): the same elements in the same order, so a reshape is
    the whole conversion. Equal shapes and shapes of other element counts are not."""
    if a == b or len(a) == len(b):
        return False
    small, big = (a, b) if len(a) < len(b) else (b, a)
    j = 0
    for n in small:
        prod = 1
        start = j
        while j < len(big) and (prod < n or (j == start)):
            prod *= big[j]
            j += 1
            if prod == n:
                break
        if prod != n:
            return False
    # trailing axes of size 1 are allowed
    return all(x == 1 for x in big[j:])

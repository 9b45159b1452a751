"""Space-to-depth: an image's ``r x r`` pixel phases stacked as channels, and the convolution
over them written as the strided convolution it equals.

Phase ``(dy, dx)`` of image channel ``c`` is ``x[:, c, dy::r, dx::r]``; where it lands among the
``C * r * r`` channels is the order's choice (``SPACE_TO_DEPTH_ORDERS``). A ``k x k`` convolution
with padding ``p`` over the stacked phases reads, at tap ``(ki, kj)`` of phase ``(dy, dx)``,
image pixel ``(r * (i + ki - p) + dy, ...)``: tap ``(r * ki + dy, r * kj + dx)`` of a stride-``r``
convolution with an ``r * k`` kernel and padding ``r * p`` over the image. The two kernels hold
the same elements, moved (``kernel_from_depth``, ``depth_from_kernel``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["SPACE_TO_DEPTH_ORDERS", "depth_fits", "depth_from_kernel", "kernel_from_depth", "space_to_depth"]

# name -> the stacked channel holding image channel c at phase (dy, dx) of an r x r block, C channels
SPACE_TO_DEPTH_ORDERS: dict[str, Callable[[int, int, int, int, int], int]] = {
    "CRD (PixelUnshuffle)": lambda c, dy, dx, r, n: c * r * r + dy * r + dx,
    "DCR (TensorFlow space_to_depth)": lambda c, dy, dx, r, n: (dy * r + dx) * n + c,
    # YOLOv5's Focus: cat(x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2])
    "Focus (YOLOv5)": lambda c, dy, dx, r, n: (dx * r + dy) * n + c,
}


def _channels(order: str, r: int, n: int) -> np.ndarray:
    """``out[c, dy, dx]``: the stacked channel of image channel ``c`` at phase ``(dy, dx)``."""
    at = SPACE_TO_DEPTH_ORDERS[order]
    return np.array([[[at(c, dy, dx, r, n) for dx in range(r)] for dy in range(r)] for c in range(n)], dtype=np.int64)


def space_to_depth(x: np.ndarray, r: int, order: str) -> np.ndarray:
    """``x`` ``[N, C, H, W]`` (H and W multiples of ``r``) as ``[N, C * r * r, H / r, W / r]``."""
    n, c, h, w = x.shape
    out = np.empty((n, c * r * r, h // r, w // r), dtype=x.dtype)
    ch = _channels(order, r, c)
    for k in range(c):
        for dy in range(r):
            for dx in range(r):
                out[:, ch[k, dy, dx]] = x[:, k, dy::r, dx::r]
    return out


def kernel_from_depth(w: np.ndarray, r: int, order: str) -> np.ndarray:
    """The ``[O, C * r * r, k, k]`` kernel of a convolution over stacked phases as the
    ``[O, C, r * k, r * k]`` kernel of the stride-``r`` convolution it equals."""
    o, cr, kh, kw = w.shape
    c = cr // (r * r)
    out = np.empty((o, c, r * kh, r * kw), dtype=w.dtype)
    ch = _channels(order, r, c)
    for k in range(c):
        for dy in range(r):
            for dx in range(r):
                out[:, k, dy::r, dx::r] = w[:, ch[k, dy, dx]]
    return out


def depth_from_kernel(w: np.ndarray, r: int, order: str) -> np.ndarray:
    """The inverse of ``kernel_from_depth``: ``[O, C, r * k, r * k]`` -> ``[O, C * r * r, k, k]``,
    which is the strided kernel's own space-to-depth (tap ``(r * ki + dy, r * kj + dx)`` is phase
    ``(dy, dx)`` at ``(ki, kj)``)."""
    return space_to_depth(w, r, order)


def depth_fits(small: tuple[int, ...], big: tuple[int, ...]) -> int | None:
    """``r`` when ``small`` is ``[O, C * r * r, k, k]`` and ``big`` ``[O, C, r * k, r * k]``
    (``r`` >= 2), else None."""
    if len(small) != 4 or len(big) != 4 or small[0] != big[0] or small[2] < 1 or small[3] < 1:
        return None
    r, rest = divmod(big[2], small[2])
    if rest or r < 2 or big[3] != r * small[3] or small[1] != big[1] * r * r:
        return None
    return r

"""A value one side computed in half precision and cast back: its fingerprint in the bits.

A float32 tensor made by a bfloat16 (or float16) computation and cast back to float32 holds
only numbers that dtype can represent: bfloat16 keeps 8 significant bits (the low 16 bits of
every float32 are zero), float16 keeps 11 within its range. A float32 computation almost never
does (about 1 value in 65,000 is a bfloat16 number by chance, 1 in 8,000 a float16 one). So
when, at the first divergence, one side's output is made of such numbers only and the other's
is not, that side computed the call in the lower precision — a missing upcast, or an autocast
region the other side lacks: a precision difference, whose cost is the difference measured
there, rather than a formula that differs (the two can also come together).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from padiff_trace import DamagedRecordError

__all__ = ["HalfPrint", "half_fingerprint"]

_MIN_VALUES = 64  # fewer values than this (or only zeros and small integers) prove nothing
_ALL = 0.99  # "only such numbers": this share of the finite values
_FEW = 0.5  # ... and the other side at most this share


@dataclass(frozen=True)
class HalfPrint:
    side: str  # "A" or "B": the side whose values are all `dtype` numbers
    dtype: str  # "bfloat16" or "float16"
    share: float  # of that side's telling values
    other_share: float  # of the other side's

    def sentence(self, rel_l2: float | None) -> str:
        other = "B" if self.side == "A" else "A"
        cost = f", of rel-L2 {rel_l2:.2g} here," if rel_l2 is not None else ""
        return (f"{self.side}'s values here are {self.dtype} numbers ({self.share:.0%} of them; {other}'s: "
                f"{self.other_share:.0%}): {self.side} computes this call in {self.dtype} and casts back (a missing "
                f"upcast, or an autocast region {other} lacks) — a precision difference{cost} rather than a "
                "formula that differs, unless both")


def _shares(a: np.ndarray) -> dict[str, float] | None:
    """Share of the telling values of ``a`` that are exact bfloat16 / float16 numbers, or None
    when ``a`` has too few telling values (zeros and small integers are every dtype's)."""
    v = a[np.isfinite(a)].astype(np.float32, copy=False)
    v = v[(v != np.round(v)) | (np.abs(v) > 2048)]  # zeros, masks, small counts: representable anywhere
    if v.size < _MIN_VALUES:
        return None
    bits = v.view(np.uint32)
    with np.errstate(over="ignore"):
        f16 = v.astype(np.float16).astype(np.float32)
    return {"bfloat16": float(np.mean((bits & 0xFFFF) == 0)), "float16": float(np.mean(f16 == v))}


def _values(r: Any) -> np.ndarray | None:
    if getattr(r, "dtype", None) != "float32" or not getattr(r, "has_data", False):
        return None
    try:
        return np.asarray(r.read(), np.float32)
    except (DamagedRecordError, OSError, ValueError):  # a damaged or unreadable record tells nothing here
        return None


def half_fingerprint(a: Any, b: Any) -> HalfPrint | None:
    """The side whose float32 values are all bfloat16 (else float16) numbers while the other
    side's are not, or None."""
    va, vb = _values(a), _values(b)
    if va is None or vb is None:
        return None
    sa, sb = _shares(va), _shares(vb)
    if sa is None or sb is None:
        return None
    for dtype in ("bfloat16", "float16"):  # a bfloat16 number in range is a float16 one too
        for side, mine, other in (("A", sa, sb), ("B", sb, sa)):
            if mine[dtype] >= _ALL and other[dtype] <= _FEW:
                return HalfPrint(side, dtype, mine[dtype], other[dtype])
    return None

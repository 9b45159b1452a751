"""Distance in units of the format: ULP distance and bit-identical elements of a pair.

The numpy reference of what the C kernel (``padiff_trace/arrays/_ckernel.c``, ``pair(..., ulp)``)
computes into the ``bits_n``, ``same_bits``, ``ulp_n``, ``ulp_max`` and ``ulp_sum`` fields
of a sums record (``_sums.py``); both give the same values.

Definitions (docs/analyzer.md, "Metrics"):

* The **format** a pair is measured in is its common storage dtype (float16, bfloat16,
  float32, float64). When the two sides differ, the one with fewer significand bits
  (bfloat16 < float16 < float32 < float64) is the format and the other side is rounded to it
  (round to nearest even; float64 -> bfloat16 goes through float32, as numpy's casts do).
  Integer, bool and complex pairs are not measured in ULP (their ULP metrics are NaN).
* **identical**: the two bit patterns (in the format) are equal. NaN against NaN with the
  same bits counts; +0.0 against -0.0 does not (the bits differ).
* **ULP distance**: each bit pattern is mapped to a monotone integer (sign bit set:
  ``-(bits & ~sign)``, else ``bits``) and the distance is the absolute difference. +0.0 and
  -0.0 both map to 0: their distance is 0 although they are not identical. Consecutive
  floats are 1 apart; the largest finite value and infinity are 1 apart.
* Elements where either side is NaN, or one side is infinite and the other is not the same
  infinity, have no ULP distance (they are counted by ``nan_mismatch``/``inf_mismatch``);
  equal infinities are 0 apart. ``ulp_n`` counts the elements that have one.
* Sums of distances are exact integers per chunk (converted to float64 once per chunk), so
  they are exact while a pair's total stays below 2**53.
"""

from __future__ import annotations

import numpy as np

__all__ = ["FORMAT_KINDS", "array_format", "fill_ulp", "ulp_format"]

# significand bits: the format with fewer is the one two different dtypes are measured in
_PRECISION = {"bfloat16": 8, "float16": 11, "float32": 24, "float64": 53}
FORMAT_KINDS = {"float32": "f", "float64": "d", "float16": "e", "bfloat16": "b"}  # the C kernel's codes
_WIDTH = {"bfloat16": 16, "float16": 16, "float32": 32, "float64": 64}
_EXP = {"bfloat16": 0x7F80, "float16": 0x7C00, "float32": 0x7F800000, "float64": 0x7FF0000000000000}
_UINT = {16: np.uint16, 32: np.uint32, 64: np.uint64}
_SINT = {16: np.int16, 32: np.int32, 64: np.int64}
_ARRAY_FORMATS = {np.dtype(np.float16): "float16", np.dtype(np.float32): "float32", np.dtype(np.float64): "float64"}


def ulp_format(da: str, db: str) -> str | None:
    """The format a pair of logical dtypes is measured in, or None (not both binary floats)."""
    pa, pb = _PRECISION.get(da), _PRECISION.get(db)
    if pa is None or pb is None:
        return None
    return da if pa <= pb else db


def array_format(a: np.ndarray, b: np.ndarray) -> str | None:
    """``ulp_format`` of two decoded arrays (bfloat16 cannot be told from float32 here)."""
    fa, fb = _ARRAY_FORMATS.get(a.dtype.newbyteorder("=")), _ARRAY_FORMATS.get(b.dtype.newbyteorder("="))
    return ulp_format(fa, fb) if fa is not None and fb is not None else None


def _bits(x: np.ndarray, fmt: str) -> np.ndarray:
    """The bit patterns of ``x`` (decoded values) in ``fmt``, as unsigned integers."""
    if fmt == "bfloat16":
        u = x.astype(np.float32, copy=False).view(np.uint32)
        r = ((u + (0x7FFF + ((u >> 16) & 1)).astype(np.uint32)) >> 16).astype(np.uint16)  # round to nearest even
        nan = (u & 0x7FFFFFFF) > 0x7F800000
        if nan.any():  # NaN: keep sign and upper payload, quiet where the payload would vanish
            h = (u[nan] >> 16).astype(np.uint16)
            r[nan] = np.where(h & 0x7F, h, h | 0x40)
        return r
    w = _WIDTH[fmt]
    return x.astype(np.dtype(fmt), copy=False).view(_UINT[w])


def _ordered(bits: np.ndarray, w: int) -> np.ndarray:
    """Monotone int64 of each pattern: -(bits & ~sign) when the sign bit is set, else bits."""
    s = bits.view(_SINT[w]).astype(np.int64)
    np.subtract(np.int64(-(1 << (w - 1))), s, out=s, where=s < 0)
    return s


def fill_ulp(r: np.ndarray, a: np.ndarray, b: np.ndarray, fmt: str, idx: tuple[int, ...]) -> None:
    """Write the ULP fields of a chunk record ``r`` for elements ``a`` vs ``b`` (decoded, same
    length) measured in ``fmt``. ``idx``: the positions of bits_n, same_bits, ulp_n, ulp_max, ulp_sum."""
    i_bits, i_same, i_n, i_max, i_sum = idx
    m = a.size
    w = _WIDTH[fmt]
    ba, bb = _bits(a, fmt), _bits(b, fmt)
    r[i_bits] = m
    r[i_same] = np.count_nonzero(ba == bb)
    exp = _UINT[w](_EXP[fmt])
    fa, fb = (ba & exp) != exp, (bb & exp) != exp
    oa, ob = _ordered(ba, w), _ordered(bb, w)
    if w < 64:
        d = np.abs(oa - ob).view(np.uint64)
    else:  # the difference of two int64 may not fit one: wrap in uint64, exact since |d| < 2**64
        d = oa.view(np.uint64) - ob.view(np.uint64)
        np.negative(d, out=d, where=oa < ob)
    valid = fa & fb
    if not valid.all():  # equal infinities are 0 apart; NaN, or a one-sided infinity, has no distance
        valid |= ~fa & (ba == bb) & ((ba & _UINT[w]((1 << (w - 1)) - 1)) == exp)
        d[~valid] = 0
    n = int(np.count_nonzero(valid))
    r[i_n] = n
    r[i_max] = float(d.max()) if n else 0.0
    if w < 64:
        r[i_sum] = float(int(d.sum(dtype=np.uint64)))  # < 2**33 each: exact for any length below 2**31
    else:  # exact: the 32-bit halves summed apart
        hi, lo = int((d >> np.uint64(32)).sum(dtype=np.uint64)), int((d & np.uint64(0xFFFFFFFF)).sum(dtype=np.uint64))
        r[i_sum] = float((hi << 32) + lo)

"""The optional C kernels (``_ckernel.c``): one-pass statistics, pair metrics, CRC-32.

Built by ``pip install`` when a C compiler is present; without one the package still
installs and every caller uses its numpy implementation (same results to rounding,
3-5x slower). Setting ``PADIFF_TRACE_NUMPY_KERNELS=1`` forces the numpy path (to
compare the two or to rule the C code out when something looks wrong).

On x86-64 the kernels have AVX2 paths, taken when the CPU has AVX2 (``kernel().avx2()``);
``summary(..., generic=True)`` and ``pair(..., generic=True)`` take the portable path
instead, so tests compare both paths on one machine. ``crc32(buffer, value, level)`` is
``zlib.crc32`` computed with PCLMULQDQ (level 1) or VPCLMULQDQ on AVX-512 (level 2) where the
CPU has them (``kernel().crc32_level()``); ``padiff_trace.trace._integrity.crc32`` picks it.
"""

from __future__ import annotations

import functools
import importlib
import logging
import os
from types import ModuleType

import numpy as np

__all__ = ["DISABLE_ENV", "KINDS", "kernel", "kind_of"]

DISABLE_ENV = "PADIFF_TRACE_NUMPY_KERNELS"
KINDS = {"float32": "f", "float64": "d", "float16": "e", "bfloat16": "b"}  # logical dtype -> kernel element code
_STORED = {"f": np.dtype("=f4"), "d": np.dtype("=f8"), "e": np.dtype("=f2"), "b": np.dtype("=u2")}
_KIND_OF_DTYPE = {np.dtype("=f4"): "f", np.dtype("=f8"): "d", np.dtype("=f2"): "e"}
_API = 5  # the _ckernel.c this code expects (an older build is stale): 3 = pair() fills a sums record, 4 = crc32(),
# 5 = pair(..., ulp) measures ULP distances
_log = logging.getLogger(__name__)


@functools.cache
def kernel() -> ModuleType | None:
    """The compiled kernel module, or None (not built, or disabled by the environment)."""
    if os.environ.get(DISABLE_ENV, "") not in ("", "0"):
        return None
    try:
        _ckernel = importlib.import_module(f"{__package__}._ckernel")
    except ImportError:
        _log.debug("padiff_trace.arrays._ckernel not built; using the numpy kernels")
        return None
    if getattr(_ckernel, "API", 1) < _API or not all(hasattr(_ckernel, f) for f in ("summary", "pair", "fletcher32", "avx2", "crc32", "crc32_chunks", "crc32_level")):  # stale
        _log.warning("padiff_trace.arrays._ckernel is out of date (reinstall the package); using the numpy kernels")
        return None
    return _ckernel


def kind_of(arr: np.ndarray, logical: str | None = None) -> str | None:
    """The kernel's element code for a stored array of this logical dtype, or None when the
    kernels do not take it (ints, bool, complex, float8, byte-swapped or non-contiguous data)."""
    if logical is None:
        kind = _KIND_OF_DTYPE.get(arr.dtype)
    else:
        kind = KINDS.get(logical)
        if kind is not None and arr.dtype != _STORED[kind]:
            return None
    if kind is None or not arr.flags.c_contiguous:
        return None
    return kind

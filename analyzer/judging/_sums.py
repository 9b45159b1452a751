"""The sums a pair's metrics are derived from: one record type, declared once.

``SUM_FIELDS`` names every accumulated quantity and how two partial records merge
(``sum``, ``max``, ``min``, or ``argmax:<field>``: the index of the first largest
``<field>``, which follows that field). The C kernel (``padiff_trace/arrays/_ckernel.c``,
``PAIR_SUMS``) fills one such record per chunk, the numpy kernel builds the same record,
and ``merge`` folds records by these rules: chunks of one worker, then the workers of one
pair. Every metric a report shows is a formula over a finished record
(``_metric_table.py``).

A record is a float64 vector in field order (counts and indices are exact below 2**53);
``SUMS`` is the same layout as a numpy structured dtype, for reading it by name.
"""

from __future__ import annotations

import functools
import logging
import math
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from padiff_trace.arrays import kernel

__all__ = ["SUM_FIELDS", "SUMS", "SumField", "empty_sums", "merge", "pair_kernel", "sums_dict", "shift_index"]

logger = logging.getLogger(__name__)

_RULES = ("sum", "max", "min")


@dataclass(frozen=True)
class SumField:
    name: str
    merge: str  # sum | max | min | argmax:<field>
    description: str


SUM_FIELDS: tuple[SumField, ...] = (
    SumField("n", "sum", "elements measured"),
    SumField("arg", "argmax:max_abs", "flat index of the first largest |a-b|"),
    SumField("max_abs", "max", "largest |a-b|"),
    SumField("sum_abs", "sum", "sum of |a-b|"),
    SumField("max_rel", "max", "largest |a-b| / (|b| + tiny)"),
    SumField("sum_rel", "sum", "sum of |a-b| / (|b| + tiny)"),
    SumField("ab", "sum", "sum of a*b"),
    SumField("aa", "sum", "sum of a*a"),
    SumField("bb", "sum", "sum of b*b"),
    SumField("dd", "sum", "sum of (a-b)**2"),
    SumField("sum_abs_b", "sum", "sum of |b|"),
    SumField("fail", "sum", "elements outside atol + rtol*|b| (exact dtypes: elements that differ)"),
    SumField("nan_a", "sum", "NaN in A"),
    SumField("nan_b", "sum", "NaN in B"),
    SumField("inf_a", "sum", "Inf in A"),
    SumField("inf_b", "sum", "Inf in B"),
    SumField("nan_mis", "sum", "NaN on one side only"),
    SumField("inf_mis", "sum", "Inf on one side only, or Infs of opposite sign"),
    # distance in units of the format (_ulp.py): float pairs only, 0 for others
    SumField("bits_n", "sum", "elements whose bit patterns were compared"),
    SumField("same_bits", "sum", "elements with identical bit patterns"),
    SumField("ulp_n", "sum", "elements with a ULP distance (no NaN, no one-sided Inf)"),
    SumField("ulp_max", "max", "largest ULP distance (0 when ulp_n is 0)"),
    SumField("ulp_sum", "sum", "sum of ULP distances"),
)
NAMES: tuple[str, ...] = tuple(f.name for f in SUM_FIELDS)
SUMS = np.dtype([(name, "<f8") for name in NAMES])
INDEX = {name: i for i, name in enumerate(NAMES)}


def _mask(rule: str) -> np.ndarray:
    return np.array([f.merge == rule for f in SUM_FIELDS])


_MASKS = {rule: _mask(rule) for rule in _RULES}
# (index field, key field): the index of the first largest key
_ARGS = tuple((INDEX[f.name], INDEX[f.merge.split(":", 1)[1]]) for f in SUM_FIELDS if f.merge.startswith("argmax:"))
_IDENTITY = np.array([-math.inf if f.merge == "max" else math.inf if f.merge == "min" else 0.0 for f in SUM_FIELDS])


def empty_sums() -> np.ndarray:
    """The record of no elements (the identity of ``merge``)."""
    return _IDENTITY.copy()


def shift_index(chunk: np.ndarray, offset: int) -> None:
    """Make a chunk's index fields absolute (the chunk started at element ``offset``)."""
    if offset:
        for i, _ in _ARGS:
            chunk[i] += offset


def merge(dst: np.ndarray, src: np.ndarray) -> None:
    """Fold record ``src`` into ``dst`` in place, field by field by its rule. Ties of an
    argmax keep the smaller index, so the result does not depend on the merge order."""
    for i, key in _ARGS:
        if src[key] > dst[key] or (src[key] == dst[key] and src[i] < dst[i]):
            dst[i] = src[i]
    np.add(dst, src, out=dst, where=_MASKS["sum"])
    np.maximum(dst, src, out=dst, where=_MASKS["max"])
    np.minimum(dst, src, out=dst, where=_MASKS["min"])


def sums_dict(rec: np.ndarray) -> dict[str, float]:
    """A record by field name."""
    return dict(zip(NAMES, rec.tolist()))


@functools.cache
def pair_kernel() -> ModuleType | None:
    """The C kernel when it fills this record layout; None (numpy kernel) otherwise."""
    k = kernel()
    if k is None:
        return None
    fields = getattr(k, "PAIR_FIELDS", "")
    if fields != ",".join(NAMES):
        logger.warning("padiff_trace.arrays._ckernel fills the sums %r, the analyzer expects %r; using the numpy kernel "
                       "(reinstall the package)", fields, ",".join(NAMES))
        return None
    return k

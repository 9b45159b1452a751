"""Matching primitives shared by the analyzer and the recorder's ``--weights-from``.

numpy only. What lives here:

* ``canonical_type`` / ``types_equivalent``: which paddle layer class is which
  torch module class (``Conv2D`` ~ ``Conv2d``, ``SimpleRNN`` ~ ``RNN``...). The
  tables are data (``_knowledge.py``); a class name found nowhere in them is a
  user-defined class, for which equivalence is unknown (``None``).
* ``TypeResolver``: the same through a trace's recorded class hierarchy, so a
  library's ``GPTLayerNorm(paddle.nn.LayerNorm)`` is a LayerNorm, and the stored
  layout of each tensor (``LAYOUTS``).
* ``align``: global sequence alignment (Needleman-Wunsch, gaps free) of two
  sequences given a pairwise score matrix, as diff tools do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._knowledge import EQUIVALENT_TYPES, FRAMEWORK_PACKAGES, LAYOUTS, LIBRARY_TYPES, POINTWISE_AS, TYPE_GROUPS, UNQUALIFIED_CLASSES

__all__ = ["pointwise_key",
    "EQUIVALENT_TYPES",
    "ResolvedType",
    "TypeResolver",
    "align",
    "canonical_type",
    "group_key",
    "is_known_type",
    "same_canonical",
    "types_equivalent",
]

_CANON: dict[str, str] = {alias.lower(): canon for canon, names in EQUIVALENT_TYPES.items() for alias in names}
_EXACT: dict[str, str] = {alias: canon for canon, names in EQUIVALENT_TYPES.items() for alias in names}
_GROUP_OF: dict[str, frozenset[str]] = {c: g for g in TYPE_GROUPS for c in g}
_TOP_TO_FRAMEWORK: dict[str, str] = {top: fw for fw, tops in FRAMEWORK_PACKAGES.items() for top in tops}


def canonical_type(type_name: str) -> str:
    """The framework-neutral name of a layer class: ``Conv2D``/``Conv2d`` -> ``conv2d``.

    Known classes map through ``EQUIVALENT_TYPES``; any other name is lower-cased.
    """
    key = type_name.strip().lower()
    return _CANON.get(key, key)


def group_key(canonical: str) -> str:
    """One name for a group of equivalent canonical types (``batchnorm2d`` -> ``batchnorm``):
    the first of the group in sorted order; a type outside any group is itself."""
    group = _GROUP_OF.get(canonical)
    return min(group) if group is not None else canonical


def is_known_type(type_name: str) -> bool:
    """Whether ``type_name`` is a built-in layer class of paddle or torch we know."""
    return type_name.strip().lower() in _CANON


def same_canonical(ca: str, cb: str) -> bool:
    """Whether two canonical type names denote the same layer (``batchnorm`` ~ ``batchnorm2d``)."""
    if ca == cb:
        return True
    group = _GROUP_OF.get(ca)
    return group is not None and cb in group


def types_equivalent(a: str, b: str) -> bool | None:
    """True/False for two known framework layer classes; None if either is user-defined."""
    if not (is_known_type(a) and is_known_type(b)):
        return None
    return same_canonical(canonical_type(a), canonical_type(b))


@dataclass(frozen=True)
class ResolvedType:
    """A module class as the matchers see it."""

    canonical: str  # e.g. "linear"; a user class: its lower-cased name
    known: bool  # a framework layer or a library class from the knowledge tables
    owner: str  # key into LAYOUTS: "paddle:linear", a qualified library class, or ""


class TypeResolver:
    """Resolves the class names of one trace (or model) through their recorded hierarchy.

    ``classes`` maps a class name to its qualified MRO (trace meta ``module_classes``);
    without it (older traces) names are looked up as they are.
    """

    def __init__(self, framework: str, classes: Mapping[str, Sequence[str]] | None = None) -> None:
        self.framework = framework
        self._classes = dict(classes or {})
        self._cache: dict[str, ResolvedType] = {}

    def resolve(self, type_name: str) -> ResolvedType:
        got = self._cache.get(type_name)
        if got is None:
            got = self._cache[type_name] = self._resolve(type_name)
        return got

    def _resolve(self, name: str) -> ResolvedType:
        for qual in self._classes.get(name, ()):
            if qual in LIBRARY_TYPES:
                return ResolvedType(LIBRARY_TYPES[qual], True, qual)
            top, _, rest = qual.partition(".")
            fw = _TOP_TO_FRAMEWORK.get(top)
            simple = qual.rsplit(".", 1)[-1]
            if fw is not None and rest and simple in _EXACT:
                return ResolvedType(_EXACT[simple], True, f"{fw}:{_EXACT[simple]}")
        # a bare name the tables know denotes that class, also where a user defines it (GPT-2
        # ports copy transformers' Conv1D into their own code: a Linear stored [in, out])
        known = UNQUALIFIED_CLASSES.get((self.framework, name))
        if known is not None:
            return ResolvedType(LIBRARY_TYPES[known], True, known)
        if self._classes.get(name):
            return ResolvedType(name.strip().lower(), False, "")  # a user class, hierarchy known
        canon = _EXACT.get(name) or _CANON.get(name.strip().lower())
        if canon is not None:
            return ResolvedType(canon, True, f"{self.framework}:{canon}")
        return ResolvedType(name.strip().lower(), False, "")

    def layout(self, type_name: str, local: str) -> tuple[int, ...] | None:
        """Permutation from the stored to the canonical layout of tensor ``local``, if any."""
        return LAYOUTS.get((self.resolve(type_name).owner, local))


# traceback codes
_UP, _DIAG, _LEFT = 0, 1, 2


def align(score: np.ndarray) -> list[tuple[int, int]]:
    """Monotone pairs ``(i, j)`` maximising the summed ``score[i, j]``; gaps cost nothing.

    Global sequence alignment (Needleman-Wunsch with zero gap cost, i.e. a
    maximum-weight common subsequence). Only pairs with ``score > 0`` may match;
    NaN counts as no match. Rows are vectorised: O(n*m) time in numpy, an int8
    traceback of n*m bytes. Ties prefer matching, then the earlier ``j``.
    """
    s = np.asarray(score)
    if s.ndim != 2:
        raise ValueError(f"align: score must be 2-D, got shape {s.shape}")
    n, m = s.shape
    if n == 0 or m == 0:
        return []
    back = np.empty((n, m), dtype=np.int8)
    prev = np.zeros(m + 1)
    row = np.empty(m + 1)
    for i in range(n):
        up = prev[1:]
        srow = s[i].astype(np.float64)
        diag = prev[:-1] + np.where(srow > 0, srow, -np.inf)  # NaN > 0 is False: no match
        best = np.maximum(up, diag)
        row[0] = 0.0
        row[1:] = best
        np.maximum.accumulate(row, out=row)
        code = np.where(diag >= up, _DIAG, _UP).astype(np.int8)
        code[row[1:] > best] = _LEFT
        back[i] = code
        prev, row = row, prev
    pairs: list[tuple[int, int]] = []
    i, j = n, m
    while i > 0 and j > 0:
        c = back[i - 1, j - 1]
        if c == _DIAG:
            pairs.append((i - 1, j - 1))
            i -= 1
            j -= 1
        elif c == _UP:
            i -= 1
        else:
            j -= 1
    pairs.reverse()
    return pairs


def pointwise_key(t: Any, side: dict[str, Any]) -> str:
    """The class key of ``t``, a pointwise convolution's (its weight's kernel all ones) as the
    linear map it is."""
    as_type = POINTWISE_AS.get(t.ctype)
    w = side.get(f"{t.info.module}.weight")
    if as_type is None or w is None or len(w.cshape) < 3 or any(d != 1 for d in w.cshape[2:]):
        return t.type_key
    return group_key(as_type)

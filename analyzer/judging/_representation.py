"""Inputs handed over in another representation: not numbers to compare.

Two ports may hand a module the same data in different forms: a graph as an edge list
(``int64 [2, E]``) on one side and as a dense adjacency (``float32 [N, N]``) on the other, labels
as class ids against one-hot rows, a mask as booleans against additive floats of another shape.
Their values cannot be compared element by element, and a difference between them says nothing
about which side is wrong: such an input pair (shapes that no reconciler fits, values of two kinds:
integers, booleans or floating point, ``value_kind``) passes as *another representation*, and the call
is judged by its other inputs and by what it returns. A bug in building either form still shows
at the first comparable value it reaches.
"""

from __future__ import annotations

import numpy as np

from padiff_trace.arrays import value_kind

from ._pairtable import PairTable

__all__ = ["absorb_representations"]


def absorb_representations(t: PairTable) -> None:
    """Input pairs of another representation pass, not compared (see the module docstring)."""
    if not len(t):
        return
    rows = np.flatnonzero(t.role_mask("input", "model_input") & ~t.passed)
    for i in rows.tolist():
        why = t.reasons.get(i, "")
        if "shape mismatch: " not in why:
            continue
        ra, rb = t.record(i, 0), t.record(i, 1)
        kinds = {value_kind(ra.dtype), value_kind(rb.dtype)}
        if len(kinds) < 2 or "other" in kinds:
            continue
        t.set_verdict(i, True, f"another representation of the same data (A {ra.dtype} {list(ra.shape)}, B {rb.dtype} "
                               f"{list(rb.shape)}): not compared as numbers; the call is judged by its other inputs and "
                               "its outputs")

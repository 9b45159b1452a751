"""Inputs handed over in another representation: not numbers to compare.

Two ports may hand a module the same data in different forms: a graph as an edge list
(``int64 [2, E]``) on one side and as a dense adjacency (``float32 [N, N]``) on the other, labels
as class ids against one-hot rows, a mask as booleans against additive floats of another shape.
Their values cannot be compared element by element, and a difference between them says nothing
about which side is wrong: such an input pair (shapes that no reconciler fits, values of two kinds:
integers, booleans or floating point, ``value_kind``) passes as *another representation*, and the call
is judged by its other inputs and by what it returns. A bug in building either form still shows
at the first comparable value it reaches.

A complex input against a real one of the same shape is another representation too when the
real one is the complex one's real or imaginary part: rotary angles handed over as ``cis``
(``freqs_cis``) on one side and as their cosines and sines on the other. That part is compared;
a table built wrong on either side still fails there.
"""

from __future__ import annotations

import numpy as np

from padiff_trace import DamagedRecordError
from padiff_trace.arrays import value_kind

from ._pairtable import PairTable
from ._relations import agrees

__all__ = ["absorb_representations"]

_READ_LIMIT = 1 << 22  # elements: larger complex pairs are not read


def absorb_representations(t: PairTable) -> None:
    """Input pairs of another representation pass, not compared (see the module docstring)."""
    if not len(t):
        return
    rows = np.flatnonzero(t.role_mask("input", "model_input") & ~t.passed)
    for i in rows.tolist():
        part = _complex_part(t, i)
        if part is not None:
            t.set_verdict(i, True, part)
            continue
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


def _complex_part(t: PairTable, i: int) -> str | None:
    """Row ``i`` holds a complex value on one side and, on the other, a real value of the same
    shape that is its real or imaginary part: the sentence saying so, else None."""
    ra, rb = t.record(i, 0), t.record(i, 1)
    cplx = [str(r.dtype).startswith("complex") for r in (ra, rb)]
    if (cplx[0] == cplx[1] or tuple(ra.shape) != tuple(rb.shape) or not (ra.has_data and rb.has_data)
            or not ra.numel or ra.numel > _READ_LIMIT or t.perms.get(i) is not None):
        return None
    real, whole = (rb, ra) if cplx[0] else (ra, rb)
    if not str(real.dtype).startswith(("float", "bfloat")):
        return None
    try:
        x = np.asarray(real.read(), np.float64)
        z = np.asarray(whole.read(), np.complex128)
    except (DamagedRecordError, KeyError, ValueError, TypeError, OSError):
        return None
    for name, part in (("real", z.real), ("imaginary", z.imag)):
        if agrees(x, part):
            side = "A" if real is ra else "B"
            return (f"another representation: {side}'s {real.dtype} value is the {name} part of the other side's "
                    f"{whole.dtype} one (angles as cos and sin against cis); compared as that part, it agrees")
    return None

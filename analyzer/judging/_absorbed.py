"""Differences a consumer absorbs where both libraries draw the boundary in one place: the
values differ, and nothing that uses them does (``_boundary`` holds the boundaries drawn
elsewhere).

* **Absorbed inputs (values).** An input that differs while every output of the call that
  received it agrees was not used as a number (a saturated mask constant, a shape passed as
  a tensor). The same value (the same dtype, shape and statistics on both sides) received by any other call
  of the step is absorbed too: once one consumer shows the difference is immaterial, it is
  not blamed where a real bug elsewhere makes the enclosing call differ. Unless a call that
  received it carried the difference, unchanged, into the first value of its shape that differs
  inside it (a residual sum around a norm blind to a scale): that value was used as a number,
  and no copy of it passes (``_carried_inside``).
* **A layer moved across a boundary.** A layer at the edge of a call on one side and next to
  its partner on the other (a block ending with its own GELU against one whose caller applies
  it: alignment pairs them, ``how`` ``"moved"``) makes the two calls hand over values on either
  side of it. Where the moved pair agrees, a record of the enclosing pair that holds one of the
  moved layer's values on each side (A's block output is its GELU's output, B's block output
  that GELU's input) passes: the values were compared across the moved layer.
* **Operations ordered another way.** Op-level pairs (``--ops``) inside a module call whose
  outputs all agree did not let the difference leave the module.

Each pass only ever turns a failing pair into a pass with its reason; a difference any later
record shows is left for the first-divergence locator.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from padiff_trace import DamagedRecordError

from ._pairtable import PairTable
from ._values import value_key

__all__ = ["absorb_inner_ops", "absorb_moved", "absorb_unused_inputs"]


def absorb_unused_inputs(t: PairTable) -> None:
    """Inputs whose value no consumer uses as a number pass (see the module docstring)."""
    if not len(t):
        return
    step, cp, passed = t.col("step"), t.col("cp"), t.passed
    calls = np.array([(c.a.id, c.b.id) for c in t.call_pairs], dtype=np.int64).reshape(-1, 2)
    has_cp = cp >= 0
    outs = t.role_mask("output") & has_cp
    ins = t.role_mask("input", "model_input") & has_cp & ~passed
    if not ins.any() or not outs.any():
        return

    def keys(rows: np.ndarray) -> list[tuple[int, int, int]]:
        ab = calls[cp[rows]]
        return list(zip(step[rows].tolist(), ab[:, 0].tolist(), ab[:, 1].tolist()))

    out_rows = np.flatnonzero(outs)
    all_ok: dict[tuple[int, int, int], bool] = {}
    for k, ok in zip(keys(out_rows), passed[out_rows].tolist()):
        all_ok[k] = all_ok.get(k, True) and ok
    in_rows = np.flatnonzero(ins)
    unused: dict[tuple[Any, ...], str] = {}  # (step, A value, B value) -> the call that showed it
    absorbed: list[tuple[int, tuple[Any, ...] | None]] = []
    rest = []
    for i, k in zip(in_rows.tolist(), keys(in_rows)):
        ka, kb = value_key(t.record(i, 0)), value_key(t.record(i, 1))
        key = (k[0], ka, kb) if ka is not None and kb is not None else None
        if all_ok.get(k, False):
            absorbed.append((i, key))
            if key is not None:
                unused.setdefault(key, t.call_pairs[int(cp[i])].a.label)
        elif key is not None:
            rest.append((i, key))
    # a value some call received and carried, as it differs, into what it computed (a residual
    # sum) was used as a number, whichever other consumer absorbed it
    used = {key for i, key in rest if key in unused and _carried_inside(t, i)}
    for i, key in absorbed:
        if key not in used:
            t.set_verdict(i, True, f"differs but every output of the call agrees: not used as a number "
                                   f"({t.reasons.get(i, '')})")
    for i, key in rest:
        if key in unused and key not in used:
            t.set_verdict(i, True, f"the same value is received by {unused[key]}, whose outputs all agree: not used "
                                   f"as a number ({t.reasons.get(i, '')})")


_CARRIED = 0.05  # the later difference within 5% of the input's (rel-L2): the same difference
_MAX_CARRIED = 1 << 22  # elements read to tell


def _carried_inside(t: PairTable, i: int) -> bool:
    """Whether input row ``i``'s difference reaches, unchanged, the first value of its shape that
    differs inside the call that received it (a residual adds the input to what the call's children
    return: RMSNorm absorbs a scaled input, the sum does not). The input was then used as a
    number, whatever another consumer shows."""
    cp, seq = t.col("cp"), t.col("seq_a")
    c = int(cp[i])
    own_out = np.flatnonzero((cp == c) & t.role_mask("output"))
    if not len(own_out) or t.passed[own_out].all():
        return False
    end = int(seq[own_out].min())
    inside = np.flatnonzero(t.role_mask("input", "output") & (cp >= 0) & ~t.passed & (seq > seq[i]) & (seq < end)
                            & (t.col("step") == t.col("step")[i]))
    ra, rb = t.record(i, 0), t.record(i, 1)
    shape = tuple(ra.shape)
    if not (ra.is_tensor and ra.has_data and rb.has_data) or ra.numel > _MAX_CARRIED or tuple(rb.shape) != shape:
        return False
    same = value_key(ra)  # the value itself, handed on to a child, is no later value
    later = next((j for j in inside[np.argsort(seq[inside], kind="stable")].tolist()
                  if value_key(t.record(j, 0)) != same and all(tuple(t.record(j, s).shape) == shape for s in (0, 1))),
                 None)
    if later is None:  # values of another shape (a mask handed on) are other quantities
        return False
    fa, fb = t.record(later, 0), t.record(later, 1)
    if not (fa.has_data and fb.has_data):
        return False
    try:
        d_in = np.asarray(ra.read(), np.float64) - np.asarray(rb.read(), np.float64)
        d_out = np.asarray(fa.read(), np.float64) - np.asarray(fb.read(), np.float64)
    except (DamagedRecordError, ValueError, TypeError, OSError):  # unreadable: tells nothing here
        return False
    size = float(np.linalg.norm(d_in))
    return size > 0 and float(np.linalg.norm(d_out - d_in)) <= _CARRIED * size


def absorb_moved(t: PairTable) -> int:
    """Records of a call pair that hold, on each side, a value of an agreeing moved layer's pair
    pass (see the module docstring). Returns how many passed."""
    if not len(t):
        return 0
    cp_col = t.col("cp")
    fwd = t.role_mask("input", "output")
    moved = [c for c, p in enumerate(t.call_pairs) if p.how == "moved"]
    n = 0
    for c in moved:
        rows = np.flatnonzero((cp_col == c) & fwd)
        if not len(rows) or not t.passed[rows].all():
            continue
        ka = {k for i in rows.tolist() if (k := value_key(t.record(i, 0))) is not None}
        kb = {k for i in rows.tolist() if (k := value_key(t.record(i, 1))) is not None}
        mp = t.call_pairs[c]
        for i in np.flatnonzero((cp_col >= 0) & (cp_col != c) & fwd & ~t.passed).tolist():
            if value_key(t.record(i, 0)) in ka and value_key(t.record(i, 1)) in kb:
                t.set_verdict(i, True, f"boundary difference: {mp.a.label} / {mp.b.label} is one layer at the edge of a "
                                       f"call on one side and next to it on the other; compared across it, the values "
                                       f"agree ({t.reasons.get(i, '')})")
                n += 1
    return n


def absorb_inner_ops(t: PairTable) -> int:
    """Op-level pairs (``--ops``) inside a module call whose outputs all agree pass: the
    difference did not leave the module, so the two libraries ordered or placed the operations
    differently (embeddings summed in another order, a scale applied before the matmul on one
    side and after it on the other). Inside a module whose output differs they stay as they
    are and locate the op. Returns how many passed."""
    if not len(t):
        return 0
    ops = np.flatnonzero(t.role_mask("op_input", "op_output", "op_grad_output") & ~t.passed)
    if not len(ops):
        return 0
    cp = t.col("cp")
    outs = np.flatnonzero(t.role_mask("output") & (cp >= 0))
    all_ok: dict[int, bool] = {}
    for i, ok in zip(outs.tolist(), t.passed[outs].tolist()):
        a = t.call_pairs[int(cp[i])].a.id
        all_ok[a] = all_ok.get(a, True) and ok
    n = 0
    for i in ops.tolist():
        parent = getattr(t.record(i, 0), "parent", -1)
        if all_ok.get(int(parent), False):
            t.set_verdict(i, True, f"inside a module call whose outputs agree: the libraries order or place this "
                                   f"operation differently ({t.reasons.get(i, '')})")
            n += 1
    return n


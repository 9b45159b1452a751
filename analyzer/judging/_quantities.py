"""Two different quantities handed to paired calls in the same argument slot.

Two libraries draw the boundary of a computation elsewhere: one computes a cosine cutoff in a
module of its own and hands every interaction block the cutoff weights, the other hands the
blocks the distances and computes the cutoff inside them. Alignment pairs the two arguments
by position and shape, yet they are two quantities: the values say so. An input pair that
differs is *another quantity* on the two sides when

* the other side computed its value in a call of a module of its own (no call of it pairs with
  the first side's; a shared ReLU called once more is not one) from the first side's value: that call received, within fp32 rounding, the first side's
  value and returned the other side's (paddle's ``cutoff_fn`` received the distances torch
  hands over and returned the cutoff weights paddle hands over),
* the other side's value agrees in no compared pair (no torch module computes the cutoff), and
* the first side hands its value on inside the call (torch's block passes the distances to its
  convolution, where the cutoff is computed). A call that uses the value as it is (a classifier
  Linear handed the features one side forgot to normalise) leaves the difference to it, and so
  does one that hands both values on to a paired call inside it (a block passing its input to
  its convolution on both sides: the convolution is handed two quantities, a real difference).

Such a pair is not compared as a divergence: what the call returns decides, and a call that
receives agreeing inputs where they are the same quantity and returns a differing output is
where the error is made. A value one side computes inline (an SE module handed the block's
output after the residual add instead of before it) or one the other side also holds (BLOOM's
residual argument: the normed input handed where the block input belongs) stays a real
difference of what the call receives.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..alignment._calls import TraceView
from ._pairtable import PairTable
from ._values import value_key

__all__ = ["absorb_other_quantities"]

_MAX_ROWS = 16  # failing inputs looked at per comparison (the earliest first)
_MAX_READS = 32  # values of the other side read per input
_SAME = 1e-4  # relative L2 within which two values are one quantity (far above fp32 rounding)


def absorb_other_quantities(t: PairTable, views: tuple[TraceView, TraceView]) -> int:
    """Failing input pairs that hold two different quantities pass (see the module docstring).
    Returns how many."""
    cp_col, passed, step_col = t.col("cp"), t.passed, t.col("step")
    ins = t.role_mask("input") & (cp_col >= 0)
    failing = np.flatnonzero(ins & ~passed)[:_MAX_ROWS]
    if not len(failing):
        return 0
    agreed = np.flatnonzero(passed)
    held = [{value_key(t.record(j, side)) for j in agreed.tolist()} - {None} for side in (0, 1)]
    # each side's calls paired with the other's
    paired = [{c.a.id for c in t.call_pairs}, {c.b.id for c in t.call_pairs}]
    # the two values of each failing input pair: a pair of values set against each other again
    # inside the call is one quantity there, handed to one computation on both sides
    compared: dict[tuple[Any, Any], list[int]] = {}
    for j in np.flatnonzero(ins & ~passed).tolist():
        compared.setdefault((value_key(t.record(j, 0)), value_key(t.record(j, 1))), []).append(j)
    n = 0
    for i in failing.tolist():
        step = int(step_col[i])
        pair = t.call_pairs[int(cp_col[i])]
        if _compared_inside(t, i, compared, views[0]):
            continue
        for side in (0, 1):  # ``side``'s value is a quantity the other side holds elsewhere
            mine, theirs = t.record(i, side), t.record(i, 1 - side)
            if (value_key(theirs) in held[1 - side] or tuple(mine.shape) != tuple(theirs.shape)
                    or not _carried_inside(views[side], pair.b if side else pair.a, mine)):
                continue
            found = _recorded_elsewhere(views[1 - side], step, mine, theirs, paired[1 - side])
            if found is not None:
                t.set_verdict(i, True, f"another quantity: {'AB'[1 - side]} hands this call what its own {found} "
                                       f"returned for {'AB'[side]}'s value, which {'AB'[side]} hands on inside the call "
                                       f"({t.reasons.get(i, '')})")
                n += 1
                break
    return n


def _compared_inside(t: PairTable, i: int, compared: dict[Any, list[int]], va: TraceView) -> bool:
    """Whether the two values of input pair ``i`` are set against each other again, as the
    inputs of a paired call nested in ``i``'s call (a convolution inside the block on both
    sides): the two sides hand that computation different values, a real difference."""
    keys = (value_key(t.record(i, 0)), value_key(t.record(i, 1)))
    if None in keys:
        return False
    outer = t.call_pairs[int(t.col("cp")[i])].a
    inside = {c.id for c in va.tree(outer.step).descendants(outer)}
    cp = t.col("cp")
    return any(j != i and t.call_pairs[int(cp[j])].a.id in inside for j in compared.get(keys, ()))


def _carried_inside(v: TraceView, call: Any, value: Any) -> bool:
    """Whether a call nested in ``call`` receives ``value`` again: the side handing over the
    value the other side processes before the boundary processes it inside (a block that hands
    the distances to its convolution), not nowhere (a step one side left out)."""
    key = value_key(value)
    return key is not None and any(value_key(r) == key for c in v.tree(call.step).descendants(call)
                                   for r in c.tensor_inputs())


def _recorded_elsewhere(v: TraceView, step: int, value: Any, theirs: Any, paired: set[int]) -> str | None:
    """The label of a call of ``v`` in ``step`` of a module none of whose calls pairs with the
    other side's, which received ``value`` (within fp32 rounding) and returned ``theirs``: the
    step one side computes in a module of its own. None if there is none."""
    try:
        want = np.asarray(value.read(), dtype=np.float64)
    except (OSError, ValueError, KeyError):
        return None
    scale = float(np.linalg.norm(want))
    if not np.isfinite(scale) or scale == 0.0:
        return None
    own = value_key(theirs)
    calls = v.calls.get(step, [])
    # a module of that side's own: no call of it pairs (a shared ReLU called once more is the
    # enclosing code's difference, not a step the other side moved)
    shared = {c.module for c in calls if c.id in paired}
    reads = 0
    for call in calls:
        if call.module in shared or not any(value_key(r) == own for r in call.tensor_outputs()):
            continue
        for r in call.tensor_inputs():
            if tuple(r.shape) != tuple(value.shape):
                continue
            reads += 1
            if reads > _MAX_READS:
                return None
            try:
                got = np.asarray(r.read(), dtype=np.float64)
            except (OSError, ValueError, KeyError):
                continue
            if float(np.linalg.norm(got - want)) <= _SAME * scale:
                return call.label
    return None

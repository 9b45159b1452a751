"""An input checked inside the call (``_boundary`` module docstring): a differing input whose
very value one side hands over is received again inside the call and agrees there, the other side
transforming it on the other side of the boundary."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..alignment._calls import TraceView
from ._pairtable import PairTable
from ._values import value_key

__all__ = ["absorb_checked_inside"]


def absorb_checked_inside(t: PairTable, views: tuple[TraceView, TraceView]) -> int:
    """Differing inputs whose value, on one side, a call inside the receiving call receives
    again and there agrees with its partner pass (see the module docstring). Returns how many."""
    cp_col, passed = t.col("cp"), t.passed
    ins = t.role_mask("input") & (cp_col >= 0)
    failing = np.flatnonzero(ins & ~passed)
    if not len(failing):
        return 0
    agreed = np.flatnonzero(ins & passed)
    n = 0
    for side, v in enumerate(views):
        index: dict[tuple[Any, ...], list[int]] = {}
        for j in agreed.tolist():
            k = value_key(t.record(j, side))
            if k is not None:
                index.setdefault(k, []).append(j)
        for i in failing.tolist():
            if passed[i]:
                continue
            k = value_key(t.record(i, side))
            pair = t.call_pairs[int(cp_col[i])]
            outer = (pair.b if side else pair.a).id
            handed = {value_key(r) for r in (pair.a if side else pair.b).tensor_inputs()}  # the other side's
            for j in index.get(k, []) if k is not None else []:
                inner = t.call_pairs[int(cp_col[j])]
                call = inner.b if side else inner.a
                # the partner value must be made inside the other side's call: one it was handed as
                # another argument (a residual passed where the normed input is) is a real difference
                if (j > i and any(x.id == outer for x in v.ancestors(call))
                        and value_key(t.record(j, 1 - side)) not in handed):
                    t.set_verdict(i, True, f"boundary difference: the same value is compared inside, where "
                                           f"{inner.a.label} / {inner.b.label} receives it, and agrees; the other "
                                           f"side transforms it on the other side of this boundary "
                                           f"({t.reasons.get(i, '')})")
                    n += 1
                    break
    return n

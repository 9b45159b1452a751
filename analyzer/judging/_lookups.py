"""A lookup named where the ids it looked up were made.

A lookup table (an embedding: ``LOOKUP_TABLES``) returns rows of its table at the ids it is
handed, and nothing else. Where such a call is named for the first divergence (its output
differs while nothing compared says its inputs differ: ids one side makes inline, a table of
position biases indexed by buckets the caller computes) and its output is exactly its table's
rows at those ids, the lookup did its part: the ids differ, and the code that made them is
named instead - the call that returned them, or, where none did, the caller's own code.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from padiff_trace.arrays import is_number
from padiff_trace.matching import LOOKUP_TABLES, canonical_type

from ..alignment._calls import Call, TraceView
from ._located import PairResult, Side
from ._values import value_key

__all__ = ["ids_maker"]

_MAX_ROWS = 1 << 20  # elements of a table read to check a lookup
_NAMED = frozenset({"own code", "one side only", "unverified", "counterpart"})


def _looked_up(v: TraceView, call: Call) -> bool:
    """Whether ``call`` (a lookup) returned exactly its table's rows at the ids it received."""
    ids = [r for r in call.tensor_inputs() if not is_number(r.dtype)]
    outs = call.tensor_outputs()
    if len(ids) != 1 or len(outs) != 1 or not ids[0].has_data or not outs[0].has_data:
        return False
    steps = [s for s in sorted(v.weights) if s <= call.step] or sorted(v.weights)
    table = next((t for s in reversed(steps) if (t := v.weights[s].get((call.module, "weight"))) is not None), None)
    if table is None or not table.has_data or len(table.shape) != 2 or table.numel > _MAX_ROWS:
        return False
    idx = np.asarray(ids[0].read()).astype(np.int64)
    rows = np.asarray(table.read())
    if idx.size == 0 or idx.min() < 0 or idx.max() >= rows.shape[0]:
        return False
    out = np.asarray(outs[0].read())
    want = rows[idx]
    return out.shape == want.shape and bool(np.array_equal(out, want))


def ids_maker(v: TraceView, s: Side, fwd: Sequence[PairResult], side: str) -> Side:
    """``s`` as it is, or, where it names a lookup that returned its table's rows at the ids it
    was handed, the call that made those ids (module docstring): the innermost call of the step
    that returned them, else the lookup's caller. ``fwd``: the step's forward pairs, ``side``
    this side's record of each ("a", "b"); ids that agree where one of them compares them are no
    other ids, and the lookup stays named (a padding row one library zeroes)."""
    c = s.call
    if s.why not in _NAMED or canonical_type(c.module_type) not in LOOKUP_TABLES or not _looked_up(v, c):
        return s
    ids = next(r for r in c.tensor_inputs() if not is_number(r.dtype))  # ``_looked_up``: there is one
    key = value_key(ids)
    if any(key == value_key(getattr(p, side)) for p in fwd
           if p.passed and p.a.numel == p.b.numel):
        return s
    makers = [x for x in v.calls.get(c.step, ()) if x.id != c.id and key is not None
              and any(value_key(r) == key and r.seq <= ids.seq for r in x.tensor_outputs())]
    if makers:
        return Side(makers[-1], "ids", s.first, ())
    parent = v.by_id.get(c.parent)
    if parent is None:
        return s
    return Side(parent, "ids", s.first, ())

"""Evidence that a difference was absorbed: which later records could show it at all
(``_boundary``, boundary differences). A record whose value is *beside* the difference (recorded
before it outside the call that made it, or computed only from such values) agrees whatever the
difference holds, and is no evidence.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..alignment._calls import TraceView
from ._pairtable import PairTable
from ._values import value_key

__all__ = ["reached"]


def reached(t: PairTable, views: tuple[TraceView, TraceView], c: int, outs: list[int], evidence: np.ndarray) -> bool:
    """Whether a record of ``evidence`` (compared, after call pair ``c``) could show ``c``'s
    differing outputs: one that is beside them on neither side. A value is *beside* them on a
    side when it was recorded there before them (the same dtype, shape and statistics: a
    residual stream, a style vector), or it is the output of a call whose every input is beside
    them: the next block's convolutions, run while an image only a later layer adds waits,
    compute the same whatever that image holds, and their agreement shows nothing of it.
    Anything else may depend on them, through inline code no record shows."""
    beside = [_beside(t, v, c, outs, evidence, side) for side, v in enumerate(views)]
    return any(i not in beside[0] and i not in beside[1] for i in evidence.tolist())


def _beside(t: PairTable, v: TraceView, c: int, outs: list[int], evidence: np.ndarray, side: int) -> set[int]:
    """The rows of ``evidence`` whose value on ``side`` is beside call pair ``c``'s differing
    outputs (``reached``)."""
    made = t.call_pairs[c].b if side else t.call_pairs[c].a
    cut = max(t.record(i, side).seq for i in outs)
    end = max(t.record(i, side).seq for i in evidence.tolist())
    inside = v.descendants(made)  # what it computes is not beside what it returns
    known: set[tuple[Any, ...]] = {k for r in made.tensor_inputs() if (k := value_key(r)) is not None}
    for x in v.calls.get(made.step, ()):  # entry order: a call's inputs before the calls inside it
        ins = x.tensor_inputs()
        if ins and min(r.seq for r in ins) > end:
            break
        if x.id == made.id or x.id in inside:
            continue
        for r in (*ins, *x.tensor_outputs()):
            k = value_key(r)
            if k is not None and r.seq < cut:
                known.add(k)
        if ins and min(r.seq for r in ins) > cut and all(value_key(r) in known for r in ins):
            known.update(k for r in x.tensor_outputs() if (k := value_key(r)) is not None)
    return {i for i in evidence.tolist() if value_key(t.record(i, side)) in known}

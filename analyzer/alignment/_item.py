"""One pair a comparison measures: a plan item (``_plan`` and ``_ops`` make them, ``compare``
and the float64 referee judge them)."""

from __future__ import annotations

from typing import NamedTuple

from ._pairing import CallPair
from ._records import RecordLike

__all__ = ["PlanItem"]


class PlanItem(NamedTuple):
    """What to compare: the pair's ``role`` (``output``, ``param``, ``op_input`` ...), A's and
    B's record (or a view of one: a packed tensor's rows), the permutation of A's axes into B's
    layout (None: the same layout), and the call pair the records belong to (None for weights,
    probes and losses; for op records, the module call pair around the op)."""

    role: str
    a: RecordLike
    b: RecordLike
    perm: tuple[int, ...] | None
    call_pair: CallPair | None

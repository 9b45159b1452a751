"""Calls each side recorded on its own, compared across: where neither side can name more than
a call whose inside nothing checked, its unchecked calls and the other side's may line up."""

from __future__ import annotations

import numpy as np

from padiff_trace import DamagedRecordError, Record
from padiff_trace.arrays import squeezed

from ..alignment._calls import Call
from ._relations import agrees

__all__ = ["first_across"]


def first_across(xa: tuple[Call, ...], xb: tuple[Call, ...]) -> tuple[Call, Call] | None:
    """Unchecked calls on both sides (each side's own, nothing compared them) that line up: as
    many on each side, the k-th returning one value of the k-th's shape (axes of size one aside:
    one port's branch module ending in a max over time, the other's shared pool module called
    once per branch). Their values are compared in that order: the first pair that differs,
    every pair before it agreeing and its own inputs agreeing as far as they compare, is the
    answer. None where they do not line up, a value could not be read, or that pair's inputs
    differ (the difference came in with an argument: the caller's)."""
    if not xa or len(xa) != len(xb):
        return None
    for ca, cb in zip(xa, xb):
        oa, ob = ca.tensor_outputs(), cb.tensor_outputs()
        if len(oa) != 1 or len(ob) != 1 or len(ca.tensor_inputs()) != len(cb.tensor_inputs()):
            return None
        same = _same(oa[0], ob[0])
        if same is None:
            return None
        if not same:
            if any(_same(x, y) is False for x, y in zip(ca.tensor_inputs(), cb.tensor_inputs())):
                return None
            return ca, cb
    return None


def _same(x: Record, y: Record) -> bool | None:
    """Whether two records of one shape (axes of size one aside) hold the same values (None: other
    shapes, or unreadable)."""
    if squeezed(tuple(x.shape)) != squeezed(tuple(y.shape)):
        return None
    try:
        return agrees(np.asarray(x.read(), np.float64).reshape(-1), np.asarray(y.read(), np.float64).reshape(-1))
    except (DamagedRecordError, KeyError, ValueError, TypeError, OSError):
        return None

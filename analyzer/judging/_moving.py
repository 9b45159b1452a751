"""Data moved, not computed: calls that only move values, and values handed on unchanged.

A pad, a crop, a shift by one token or a max-pool moves its input's elements (``moves_data``):
such a call makes no value of its own, so it is never named as the maker of a difference, and
what it hands on checks what it was handed (``agrees_downstream``: a ReLU module whose output
a max-pool hands on to a convolution that receives agreeing values was checked there), and a value
found slice by slice inside a later one that agrees was checked there too (``sliced_into_good``). Zeroing
elements in place is computing (``zeroes_in_place``: a ReLU decides which values live). A call
of one side that hands on, unchanged, what a call inside it made, where the other side computes
a step on that value, is where the step is missing (``passed_on``).
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any

import numpy as np

from padiff_trace import Record

from ..alignment._calls import Call, TraceView
from ..alignment._records import value_id
from ._boundary import RELATION_REL

__all__ = ["MOVED_LIMIT", "agrees_downstream", "consumers", "moves_data", "passed_on", "sliced_into_good", "slices_found",
           "zeroes_in_place"]

Key = tuple[Any, ...]


MOVED_LIMIT = 1 << 22  # elements: larger calls are not read for this


def moves_data(c: Call) -> bool:
    """Whether ``c`` only moves data: every element of its outputs is zero or, bit for bit, an
    element of its inputs (a pad, a shift by one token, a crop, a flatten). Moving is not
    computing: such a call is not named as the unverified maker of a difference (the code
    that uses what it moved is), whichever side wrote it as a module. Zeroing elements in
    place is computing, not moving (``zeroes_in_place``: a ReLU decides which values live)."""
    ins = [r for r in c.tensor_inputs() if r.has_data]
    outs = [r for r in c.tensor_outputs() if r.has_data]
    if not ins or not outs or sum(r.numel for r in (*ins, *outs)) > MOVED_LIMIT:
        return False
    if any(r.dtype != ins[0].dtype for r in (*ins, *outs)):
        return False
    arrays = [np.asarray(r.read()) for r in ins]
    pool = np.concatenate([a.ravel() for a in arrays])
    for r in outs:
        out = np.asarray(r.read())
        if any(zeroes_in_place(a, out) for a in arrays):
            return False
        got = out.ravel()
        got = got[got != 0]
        if got.size and not np.isin(got, pool).all():
            return False
    return True


def zeroes_in_place(x: np.ndarray, y: np.ndarray) -> bool:
    """Whether ``y`` is ``x`` with some nonzero elements set to zero where they stand (an
    activation's or a mask's doing: values decided, not moved)."""
    if x.shape != y.shape:
        return False
    kept = y == x
    return bool(((y == 0) | kept).all() and not kept.all())


def consumers(v: TraceView, step: int) -> dict[Key, list[Call]]:
    """The calls of ``step`` by the values (``value_id``) they received."""
    out: dict[Key, list[Call]] = {}
    for d in v.calls.get(step, ()):
        for r in d.tensor_inputs():
            k = value_id(r)
            if k is not None:
                out.setdefault(k, []).append(d)
    return out


_DOWNSTREAM = 4  # calls that only move data followed from a value to one that agrees


def agrees_downstream(v: TraceView, c: Call, outs: set[Key], good: set[Key], consumers: dict[Key, list[Call]]) -> bool:
    """Whether what ``c`` returned reaches, through calls that only move it (``moves_data``: a
    max-pool after a ReLU module), a value that agrees: what it computed was checked there."""
    frontier, seen = set(outs), set(outs)
    for _ in range(_DOWNSTREAM):
        nxt: set[Key] = set()
        for k in frontier:
            for d in consumers.get(k, ()):
                if d.id == c.id or not moves_data(d):
                    continue
                got = {x for r in d.tensor_outputs() if (x := value_id(r)) is not None}
                if got & good:
                    return True
                nxt |= got - seen
        if not nxt:
            return False
        seen |= nxt
        frontier = nxt
    return False


def passed_on(named: Call, agreeing: list[tuple[Record, Record]], v: TraceView, call: Call,
              paired: Container[int]) -> Call | None:
    """The other side's outermost call of its own inside ``call`` that returned, unchanged, the
    value ``named`` (a call of one side's own nothing checked: an activation module) received,
    as a call inside it made it: where one side computes a step, the other hands the value on,
    and the code of that call is where the step belongs (a conv-BN-activation block built
    without its activation against a ReLU module after the BN). ``agreeing``: the pairs that
    agree, as (named's side, the other side). None when no such call is there (the value goes
    straight from a paired call to inline code: the pair's own code is named)."""
    keys = {k for r in named.tensor_inputs() if (k := value_id(r)) is not None}
    want = {k for x, y in agreeing if value_id(x) in keys if (k := value_id(y)) is not None}
    if not want:
        return None
    tree = v.tree(call.step)
    hits = []
    for c in tree.descendants(call):
        if c.id in paired or not any(value_id(r) in want for r in c.tensor_outputs()):
            continue
        made_inside = {k for d in tree.descendants(c) for r in d.tensor_outputs() if (k := value_id(r)) is not None}
        if want & made_inside and not any(value_id(r) in want for r in c.tensor_inputs()):
            hits.append(c)
    hit_ids = {c.id for c in hits}
    outer = [c for c in hits if not any(a.id in hit_ids for a in v.ancestors(c))]
    return outer[0] if len(outer) == 1 else None


_MAX_SLICED = 1 << 20  # elements read to look for a share slice by slice


def slices_found(r: Record, whole: Record) -> bool:
    """Whether ``r`` is a share of ``whole``'s shape along one axis whose every slice along it is
    one of ``whole``'s slices, in any order (to within ``RELATION_REL`` in relative L2): the
    fields one module embedded, found among the other side's fields whichever order they keep."""
    if (not r.has_data or not whole.has_data or len(r.shape) != len(whole.shape)
            or max(r.numel, whole.numel) > _MAX_SLICED):
        return False
    diff = [k for k, (m, n) in enumerate(zip(r.shape, whole.shape)) if m != n]
    if len(diff) != 1 or r.shape[diff[0]] > whole.shape[diff[0]]:
        return False
    ax = diff[0]
    x = np.moveaxis(np.asarray(r.read(), dtype=np.float64), ax, 0).reshape(r.shape[ax], -1)
    y = np.moveaxis(np.asarray(whole.read(), dtype=np.float64), ax, 0).reshape(whole.shape[ax], -1)
    for row in x:
        scale = float(np.linalg.norm(row))
        if scale == 0.0 or not np.isfinite(scale):
            return False
        if not (np.linalg.norm(y - row, axis=1) <= RELATION_REL * scale).any():
            return False
    return True


def sliced_into_good(v: TraceView, call: Call, c: Call, good: set[Key]) -> bool:
    """Whether every tensor ``c`` returned is, slice by slice along one axis, inside a value a
    call within ``call`` received later that agrees (``slices_found``: a ReLU module's output
    concatenated inline with the encoding into what the next Linear receives)."""
    outs = [r for r in c.tensor_outputs() if value_id(r) is not None]
    if not outs:
        return False
    end = max(r.seq for r in outs)
    later = [r for d in v.tree(call.step).descendants(call) for r in d.tensor_inputs()
             if r.seq > end and value_id(r) in good]
    return all(any(slices_found(r, y) for y in later if len(y.shape) == len(r.shape)) for r in outs)

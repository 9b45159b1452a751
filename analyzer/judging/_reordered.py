"""Values in another order, carried: a layout of the activations, not a divergence.

Two correct ports may keep the same slices in another order along an axis that is not a
feature axis: the fields of a click-through model (categorical first on one side, numeric first
on the other), a class token concatenated first or last. Every later value that computes slice
by slice, or treats the slices alike (attention without positions, a norm, a pointwise MLP),
holds the same slices in the same other order, until a layer whose weights are laid out for
each side's order (the head over the flattened fields) or inline code picking a slice by its
place brings both sides together again.

``absorb_reordered`` follows each step's failing activation records in execution order. A
record whose two values hold the same slices along one axis in another order (each of B's
slices found once among A's, ``_relations.order_of``) starts an *order*; later records that the same order
explains (along any axis of that length, or along all of them at once: attention scores) belong
to it. The walk stops at the first failing record no order explains: from there on the values
differ by their numbers, and what follows is not looked at.

An order passes its records only on evidence that the models treat it as a layout: a call that
received a value in that order and returned a value in the same order (*carried*: the call
computes slice by slice), or that received one in that order and returned a value that agrees
(*absorbed*: its weights or code undo the order), or the step's model outputs agree; and no
layer whose weights mix the ordered axis (``MIXING``: a convolution's channels, a Linear's last
axis) received a value in that order and returned one that differs: the weights are copied as
they are, so both sides' expect one order (a concatenation whose parts one side put in another
order, mixed by the next convolution). An order along another axis (tokens with the class token
first on one side and last on the other, read by an attention) is not vetoed so. Without that
evidence, the records keep failing, and the first divergence is where the order began: a
permutation nothing downstream undoes is a difference of the models' outputs. An order the
models' inputs already hold is the data's (a batch shuffled by one loader), never a layout.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from padiff_trace import DamagedRecordError
from padiff_trace.arrays import same_order_reshape
from padiff_trace.matching import canonical_type

from ..alignment._calls import TraceView
from ._pairtable import PairTable
from ._relations import agrees, order_of, order_text
from ._values import value_key

__all__ = ["REORDERED", "absorb_reordered"]

logger = logging.getLogger(__name__)

REORDERED = "the same slices along axis"  # how the reason of a record passed as a layout begins
_READ_LIMIT = 1 << 22  # elements: larger records are not read for an order
_SEARCHED = 16  # per step, failing records searched for a new order (known orders are tried on all)
_ROLES = ("model_input", "input", "output", "grad_output", "grad_input")
# a call's output in the order of its input, at most this relative difference and this fraction of
# the difference as it stands: the call kept the order (its own error aside)
_CLOSER = 0.5
# layers whose weights mix their input along one axis (canonical type -> that axis): a convolution
# its channels, a Linear its last axis
MIXING: dict[str, int] = {"conv1d": 1, "conv2d": 1, "conv3d": 1, "linear": -1}


@dataclass
class _Order:
    axis: int
    order: np.ndarray
    origin: int  # the table row where it was first seen
    rows: list[int] = field(default_factory=list)

    def arranged(self, a: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
        """``a`` in this order along each axis of its length, then along all of them at once."""
        n = len(self.order)
        axes = [k for k in range(a.ndim) if a.shape[k] == n]
        if not axes or a.shape != b.shape:
            return []
        out = [np.take(a, self.order, axis=k) for k in axes]
        if len(axes) > 1:
            x = a
            for k in axes:
                x = np.take(x, self.order, axis=k)
            out.append(x)
        return out

    def explains(self, a: np.ndarray, b: np.ndarray) -> bool:
        """Whether ``b`` is ``a`` with this order along one axis of its length, or along all of them."""
        return any(agrees(x, b) for x in self.arranged(a, b))

    def kept(self, a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
        """``a`` in this order where that is far closer to ``b`` than as it stands (a call that
        kept the order and made a difference of its own: ``_CLOSER``), else None."""
        nb = float(np.linalg.norm(b))
        if nb == 0.0:
            return None
        plain = float(np.linalg.norm(a - b)) / nb
        return next((x for x in self.arranged(a, b) if float(np.linalg.norm(x - b)) / nb <= min(_CLOSER * plain, _CLOSER)),
                    None)

    def keeps(self, a: np.ndarray, b: np.ndarray) -> bool:
        return self.kept(a, b) is not None


def _values(t: PairTable, i: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The two values of record pair ``i``, float64, in one shape: as they are, or the one with
    more axes merged into the other's where the two shapes are one reshape apart (a map
    ``[b, h, w, c]`` against its tokens ``[b, h*w, c]``: the same elements in the same order)."""
    ra, rb = t.record(i, 0), t.record(i, 1)
    sa, sb = tuple(ra.shape), tuple(rb.shape)
    if (not (ra.is_tensor and rb.is_tensor and ra.has_data and rb.has_data)
            or (sa != sb and not same_order_reshape(sa, sb))
            or t.perms.get(i) is not None or ra.numel > _READ_LIMIT or ra.numel < 2):
        return None
    try:
        a, b = np.asarray(ra.read(), np.float64), np.asarray(rb.read(), np.float64)
    except (DamagedRecordError, KeyError, ValueError, TypeError, OSError):
        return None
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return None
    if sa != sb:
        a, b = (a.reshape(sb), b) if len(sa) > len(sb) else (a, b.reshape(sa))
    return a, b


def _orders_of_step(t: PairTable, rows: np.ndarray) -> tuple[list[_Order], int | None]:
    """The orders explaining the step's failing records ``rows`` (execution order), up to the
    first failing record none explains (returned too: None where every record was explained)."""
    orders: list[_Order] = []
    searched = 0
    for i in rows.tolist():
        got = _values(t, i)
        if got is None:
            return orders, i
        a, b = got
        hit = next((o for o in orders if o.explains(a, b)), None)
        if hit is None and searched < _SEARCHED:
            searched += 1
            found = order_of(a, b)
            if found is not None:
                hit = _Order(found[0], found[1], i)
                orders.append(hit)
        if hit is None:
            return orders, i
        hit.rows.append(i)
    return orders, None


def _in_order(t: PairTable, i: int, o: _Order) -> bool:
    """Record ``i``, the first that order ``o`` (a layout) does not explain, measured in that
    order where it is far closer so: its difference is its own, not the order's. Whether it was."""
    got = _values(t, i)
    kept = o.kept(*got) if got is not None else None
    if got is None or kept is None:
        return False
    b = got[1]
    rel = float(np.linalg.norm(kept - b)) / float(np.linalg.norm(b))
    t.set_verdict(i, False, f"{t.reasons.get(i, '')}; in the other order ({order_text(o.order)}): "
                            f"rel-L2 {rel:.3g}, max|a-b| {float(np.abs(kept - b).max()):.3g}")
    return True


def _evidence(t: PairTable, o: _Order, outputs_agree: bool, view: TraceView | None = None) -> str | None:
    """Why order ``o`` is a layout (a call carried or absorbed it, the model outputs agree), or None."""
    cp, is_in, is_out = t.col("cp"), t.role_mask("input"), t.role_mask("output")
    if outputs_agree:
        return "the models' outputs agree"
    explained = set(o.rows)
    calls_in = {int(cp[i]) for i in o.rows if is_in[i] and cp[i] >= 0}
    why = None
    for c in sorted(calls_in):
        outs = np.flatnonzero((cp == c) & is_out)
        said = f"{t.call_pairs[c].a.label} / {t.call_pairs[c].b.label}"
        if any(int(i) in explained for i in outs):
            why = why or f"{said} received and returned values in that order"
        elif len(outs) and t.passed[outs].all():
            why = why or f"{said} received values in that order and returned values that agree"
        elif any((got := _values(t, i)) is not None and o.keeps(*got) for i in outs.tolist()):
            why = why or f"{said} received values in that order and returned values far closer to the other side's in it"
        elif len(outs) and _mixes(t, view, c, o):
            # a layer whose weights (copied as they are) mix the ordered axis was handed the values
            # in that order and returned values that differ: both sides' weights expect one order,
            # so the order is no layout (where it began is where they differ)
            return None
    return why


def _mixes(t: PairTable, view: TraceView | None, c: int, o: _Order) -> bool:
    """Whether call pair ``c`` (A's call, or a call inside it, where ``view`` is A's trace)
    is a layer with weights over its input's features (``MIXING``: the channels of a
    convolution, the last axis of a Linear) that received a value of order ``o`` along that
    axis (a unit holding the convolution: the value handed to it, handed on inside)."""
    cp, is_in = t.col("cp"), t.role_mask("input")
    call = t.call_pairs[c].a
    inside = [call, *view.tree(call.step).descendants(call)] if view is not None else [call]
    for i in o.rows:
        if cp[i] != c or not is_in[i]:
            continue
        rec = t.record(i, 0)
        key = value_key(rec)
        for d in inside:
            feature = MIXING.get(canonical_type(d.module_type))
            if feature is None or not (d is call or any(value_key(r) == key for r in d.tensor_inputs())):
                continue
            if o.axis == (feature if feature >= 0 else len(rec.shape) + feature):
                return True
    return False


def absorb_reordered(t: PairTable, view: TraceView | None = None) -> list[dict[str, Any]]:
    """Pass the failing activation records that hold the other side's values in another order
    carried as a layout (module docstring); returns one convention entry per order passed.
    ``view``: A's trace, to find the layer inside a unit that received the values."""
    if not len(t):
        return []
    out: list[dict[str, Any]] = []
    steps, cp = t.col("step"), t.col("cp")
    acts = t.role_mask(*_ROLES)
    roots = {c for c, p in enumerate(t.call_pairs) if p.a.module == "" and p.b.module == ""}
    for step in np.unique(steps[acts]).tolist():
        in_step = acts & (steps == step)
        rows = np.flatnonzero(in_step & ~t.passed)
        if not len(rows):
            continue
        orders, stop = _orders_of_step(t, rows)
        if not orders:
            continue
        root_out = np.flatnonzero(in_step & t.role_mask("output") & np.isin(cp, list(roots)))
        outputs_agree = bool(len(root_out)) and bool(t.passed[root_out].all())
        data = t.role_mask("model_input")
        for o in orders:
            if any(data[i] for i in o.rows):
                continue  # the model inputs hold it: the data's order (a batch shuffled), not a layout
            why = _evidence(t, o, outputs_agree, view)
            if why is None:
                continue
            first = t.record(o.origin, 0)
            said = (f"{REORDERED} {o.axis} in another order ({order_text(o.order)}), from "
                    f"{first.name} on: a layout each model keeps ({why})")
            for i in o.rows:
                t.set_verdict(i, True, f"{said} ({t.reasons.get(i, '')})")
            out.append({"kind": "convention", "check": "reordered", "pairs": len(o.rows),
                        "text": f"{len(o.rows)} value(s) of step {step} hold {said}"})
            if stop is not None and _in_order(t, stop, o):
                stop = None  # measured in one order: said once
            logger.info("step %d: %d records in another order along axis %d, passed: %s", step, len(o.rows), o.axis, why)
    return out

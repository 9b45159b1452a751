"""Differences that do not propagate: where two correct libraries draw a boundary elsewhere.

Two libraries may agree on every value that matters and still hand different tensors across
one module boundary: one scales the embedding inside its embedding module and the other just
after it, one fuses the activation into its BatchNorm and the other calls ReLU next, one
builds an additive mask with -1e4 and the other with the float32 minimum. The general test
used here, for every such pair, is whether the difference *reaches anything downstream*:

* **Absorbed inputs (values).** An input that differs while every output of the call that
  received it agrees was not used as a number (a saturated mask constant, a shape passed as
  a tensor). The same value (the same dtype, shape and statistics on both sides) received by any other call
  of the step is absorbed too: once one consumer shows the difference is immaterial, it is
  not blamed where a real bug elsewhere makes the enclosing call differ.
* **Boundary differences (outputs).** A call whose inputs agree and whose output differs is
  where an error is made only if the error propagates: some record after it, before the next
  independent error (another call whose inputs agree and whose output differs), differs as
  well. When every later record up to that point agrees, and at least one later output was
  compared and agreed, the next comparable point absorbed the difference: the pair passes as
  a *boundary difference*, with what relates the two values where one of the known relations
  fits (``BOUNDARY_RELATIONS``: a constant factor, an activation applied on one side), and the
  comparison goes on from the next common point. Gradients at that boundary (the gradient
  w.r.t. the differing output) differ for the same reason and are absorbed with it. A call
  handed another input convention (shapes that differ: HF's BLIP-2 takes image placeholder
  ids in ``input_ids``, paddlenlp concatenates the queries itself) is judged the same way, its
  inputs with it, when later records were compared and all agree.

* **Derived state computed another way** is in ``_derived``.

Nothing here ever turns a propagating difference into a pass: a difference that any later
record shows is left for the first-divergence locator.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from padiff_trace import DamagedRecordError

from ..alignment._calls import TraceView
from ._masks import saturated as _saturated
from ._pairtable import PairTable

__all__ = ["BOUNDARY_RELATIONS", "RELATION_REL", "absorb_boundaries", "absorb_inner_ops", "absorb_unused_inputs", "agrees",
           "value_key"]

logger = logging.getLogger(__name__)

_FWD = ("model_input", "input", "output")
_SCALE_SAYS = re.compile(r"A = (\S+) x B: a constant scale")
_READ_LIMIT = 1 << 22  # elements: relations are tested on tensors up to 4M elements (larger: not named)
RELATION_REL = 1e-4  # a relation holds when it explains the two values to this relative L2 error


def _scale(a: np.ndarray, b: np.ndarray) -> str | None:
    """a == c * b for one constant c (a scale moved across the boundary)."""
    nb = float(np.dot(b, b))
    if nb == 0.0:
        return None
    c = float(np.dot(a, b)) / nb
    if not np.isfinite(c) or abs(c) < 1e-12:
        return None
    resid = float(np.linalg.norm(a - c * b)) / max(float(np.linalg.norm(a)), 1e-30)
    # a scale moved across a boundary is a real factor (sqrt(d), 1/sqrt(d), 0.5 ...): a factor
    # within a hair of 1 is a small difference, not a scale
    if abs(c - 1.0) < 1e-3 or resid >= min(1e-4, 0.01 * abs(c - 1.0)):
        return None
    return f"A = {c:.6g} x B: a constant scale applied inside the module on one side, after it on the other"


def agrees(x: np.ndarray, y: np.ndarray, rel: float = RELATION_REL) -> bool:
    """``x`` is ``y`` to within ``rel`` (``RELATION_REL``) in relative L2: fp32 rounding (~1e-5 in
    deep models) passes, and so do a few elements near a kink that rounding put on the other
    side, which an element-wise test refuses."""
    ny = float(np.linalg.norm(y))
    return float(np.linalg.norm(x - y)) <= rel * ny if ny > 0 else not np.any(x)


def _activation(name: str, f: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray, np.ndarray], str | None]:
    def test(a: np.ndarray, b: np.ndarray) -> str | None:
        for x, y, side in ((a, b, "A"), (b, a, "B")):
            if agrees(x, f(y)) and not agrees(x, y):
                return f"{side} = {name}(the other side): the activation is fused into this module on side {side}, a module of its own on the other"
        return None

    return test


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(x, -60, 60))))


# name -> test(a, b) -> sentence or None; a and b are float64, flattened, same length
BOUNDARY_RELATIONS: dict[str, Callable[[np.ndarray, np.ndarray], str | None]] = {
    "saturated mask": _saturated,
    "scale": _scale,
    "relu": _activation("relu", lambda x: np.maximum(x, 0.0)),
    "relu6": _activation("relu6", lambda x: np.clip(x, 0.0, 6.0)),
    "sigmoid": _activation("sigmoid", _sigmoid),
    "tanh": _activation("tanh", np.tanh),
    "hardswish": _activation("hardswish", lambda x: x * np.clip(x + 3.0, 0.0, 6.0) / 6.0),
    "silu": _activation("silu", lambda x: x * _sigmoid(x)),
}


def _concat(t: PairTable, i: int) -> str | None:
    """One side's output is the other's concatenated after what the module received (a dense
    layer returning concat(input, new) on one side, only new on the other, the block joining
    them): the smaller is the trailing block of the larger along one axis."""
    try:
        ra, rb = t.record(i, 0), t.record(i, 1)
        if not (ra.is_tensor and rb.is_tensor and ra.has_data and rb.has_data) or len(ra.shape) != len(rb.shape):
            return None
        diff = [k for k, (x, y) in enumerate(zip(ra.shape, rb.shape)) if x != y]
        if len(diff) != 1 or max(ra.numel, rb.numel) > _READ_LIMIT:
            return None
        k = diff[0]
        a, b = ra.read(), rb.read()
    except (DamagedRecordError, KeyError, ValueError, TypeError, OSError):
        return None
    big, small, side = (a, b, "A") if a.shape[k] > b.shape[k] else (b, a, "B")
    tail = np.take(big, range(big.shape[k] - small.shape[k], big.shape[k]), axis=k)
    if not agrees(np.asarray(tail, np.float64), np.asarray(small, np.float64)):
        return None
    return (f"{side}'s output is the other's concatenated after the module's input along axis {k}: the "
            "concatenation is inside this module on one side, after it on the other")


def _window(t: PairTable, i: int) -> str | None:
    """One side's value is a contiguous window of the other's along one axis (a causal
    convolution padded inside the module on one side and trimmed after it on the other): where
    the smaller sits in the larger, or None."""
    try:
        ra, rb = t.record(i, 0), t.record(i, 1)
        if not (ra.is_tensor and rb.is_tensor and ra.has_data and rb.has_data) or len(ra.shape) != len(rb.shape):
            return None
        diff = [k for k, (x, y) in enumerate(zip(ra.shape, rb.shape)) if x != y]
        if len(diff) != 1 or max(ra.numel, rb.numel) > _READ_LIMIT:
            return None
        k = diff[0]
        a, b = np.asarray(ra.read(), np.float64), np.asarray(rb.read(), np.float64)
    except (DamagedRecordError, KeyError, ValueError, TypeError, OSError):
        return None
    big, small, side = (a, b, "A") if a.shape[k] > b.shape[k] else (b, a, "B")
    n = small.shape[k]
    for o in range(big.shape[k] - n + 1):
        if agrees(np.take(big, range(o, o + n), axis=k), small):
            rest = np.delete(big, range(o, o + n), axis=k)
            extra = "zeros" if not np.any(rest) else "other values"
            return f"{side}'s {t.record(i, 0 if side == 'A' else 1).name} holds the other's at [{o}:{o + n}] of axis {k} ({extra} around it)"
    return None


def _relation(t: PairTable, i: int) -> str:
    """What relates the two values of row ``i``, or a plain sentence."""
    plain = "the next comparable records agree: the difference does not reach anything downstream"
    joined = _concat(t, i)
    if joined:
        return f"{joined}; {plain}"
    try:
        ra, rb = t.record(i, 0), t.record(i, 1)
        if not (ra.is_tensor and rb.is_tensor) or ra.numel != rb.numel or not ra.numel or ra.numel > _READ_LIMIT:
            return plain
        if not (ra.has_data and rb.has_data):  # statistics only
            return plain
        perm = t.perms.get(i)
        a = ra.read()
        if perm is not None:
            a = np.transpose(a, perm)
        a64 = np.asarray(a, np.float64).ravel()
        b64 = np.asarray(rb.read(), np.float64).ravel()
    except (DamagedRecordError, KeyError, ValueError, TypeError, OSError):
        return plain
    if not (np.isfinite(a64).all() and np.isfinite(b64).all()):
        return plain
    for test in BOUNDARY_RELATIONS.values():
        found = test(a64, b64)
        if found:
            return f"{found}; {plain}"
    return plain


def _conventional(t: PairTable, i: int, relation: str) -> bool:
    """A relation two libraries use by convention, whatever follows: a scale of sqrt(width) or
    its inverse on the output (embeddings scaled by sqrt(d_model) inside or after the module)."""
    m = _SCALE_SAYS.match(relation)
    if m is None:
        return False
    width = t.record(i, 1).shape[-1] if t.record(i, 1).shape else 0
    if width < 2:
        return False
    c = abs(float(m.group(1)))
    root = math.sqrt(width)
    return any(abs(c - x) <= 1e-4 * x for x in (root, 1.0 / root))


def _same_values_pass(t: PairTable, rows: np.ndarray, inputs: list[int], label: str) -> None:
    """The values a call took in another input convention, wherever else the step hands them
    over (the model's own input ids), pass with it."""
    keys = {(value_key(t.record(i, 0)), value_key(t.record(i, 1))) for i in inputs}
    for i in rows[~t.passed[rows]].tolist():
        if i not in inputs and (value_key(t.record(i, 0)), value_key(t.record(i, 1))) in keys:
            t.set_verdict(i, True, f"the same value is handed to {label} in another input convention, and everything "
                                   f"after it agrees ({t.reasons.get(i, '')})")


def _shapes_differ(t: PairTable, i: int) -> bool:
    """The pair was not compared because its shapes differ (no reconciler fits); its reason
    keeps saying so after another rule passed it."""
    return "shape mismatch: " in t.reasons.get(i, "")


def _floating(t: PairTable, i: int) -> bool:
    return all(str(getattr(t.record(i, k), "dtype", "")).startswith(("float", "bfloat", "complex")) for k in (0, 1))


def value_key(r: Any) -> tuple[Any, ...] | None:
    """One value's identity within a trace: dtype, shape and statistics (the writer keeps a
    tensor recorded twice close together once, but the same mask handed to every layer is
    stored again further on: its statistics are what stay the same)."""
    if not getattr(r, "is_tensor", False) or getattr(r, "device", "") == "python" or not getattr(r, "numel", 0):
        return None
    try:
        stats = r.stats
    except (AttributeError, KeyError, IndexError, ValueError, OSError):
        return None
    return (r.dtype, tuple(r.shape), *sorted(stats.items()))


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
    rest = []
    for i, k in zip(in_rows.tolist(), keys(in_rows)):
        if all_ok.get(k, False):
            why = t.reasons.get(i, "")
            t.set_verdict(i, True, f"differs but every output of the call agrees: not used as a number ({why})")
            ka, kb = value_key(t.record(i, 0)), value_key(t.record(i, 1))
            if ka is not None and kb is not None:
                unused.setdefault((k[0], ka, kb), t.call_pairs[int(cp[i])].a.label)
        else:
            rest.append((i, k[0]))
    if not unused:
        return
    for i, s in rest:
        ka, kb = value_key(t.record(i, 0)), value_key(t.record(i, 1))
        shown = unused.get((s, ka, kb)) if ka is not None and kb is not None else None
        if shown is not None:
            t.set_verdict(i, True, f"the same value is received by {shown}, whose outputs all agree: not used as a "
                                   f"number ({t.reasons.get(i, '')})")


def absorb_boundaries(t: PairTable, va: TraceView) -> list[dict[str, Any]]:
    """Pass the differing outputs that no later record shows (see the module docstring); returns
    one entry per absorbed call pair: step, the calls, the relation found. Repeated until
    nothing more passes: an outer boundary absorbed (a dense layer's concatenation) clears the
    window of an inner one before it (the BatchNorm with its fused activation)."""
    out: list[dict[str, Any]] = []
    under: set[int] | None = None  # later rounds: only calls inside one absorbed in the round before
    for _ in range(_ROUNDS):
        more = _absorb_boundaries_once(t, va, under)
        if not more:
            break
        out += more
        under = {e["a_id"] for e in more}
    for e in out:
        del e["a_id"]
    return out


_ROUNDS = 8


def _absorb_boundaries_once(t: PairTable, va: TraceView, under: set[int] | None) -> list[dict[str, Any]]:
    if not len(t):
        return []
    out: list[dict[str, Any]] = []
    step_col, cp_col, roles = t.col("step"), t.col("cp"), t.col("role")
    fwd_mask = t.role_mask(*_FWD)
    loss_mask = t.role_mask("loss")
    out_code = t.roles.index("output")
    grad_mask = t.role_mask("grad_output")
    for s in np.unique(step_col[fwd_mask]).tolist():
        in_step = step_col == s
        rows = np.flatnonzero(in_step & (fwd_mask | loss_mask))
        fwd_rows = rows[(cp_col[rows] >= 0) & fwd_mask[rows]]
        if not len(fwd_rows):
            continue
        passed, measured = t.passed, t.measured
        first_row: dict[int, int] = {}
        fail_in: dict[int, list[int]] = {}
        fail_out: dict[int, list[int]] = {}
        reshaped_in: set[int] = set()  # calls with an input whose shapes differ (passed or not)
        for i, c, r, ok in zip(fwd_rows.tolist(), cp_col[fwd_rows].tolist(), roles[fwd_rows].tolist(), passed[fwd_rows].tolist()):
            first_row.setdefault(c, i)
            if r != out_code and not measured[i] and _shapes_differ(t, i):
                reshaped_in.add(c)
            if ok:
                continue
            (fail_out if r == out_code else fail_in).setdefault(c, []).append(i)
        # a call handed another input convention (ids with image placeholders on one side: the
        # shapes differ, nothing to compare) is judged like one whose inputs agree: by whether
        # its difference reaches anything downstream
        convention_in = {c for c in reshaped_in if all(not measured[i] and _shapes_differ(t, i) for i in fail_in.get(c, []))}
        cands = sorted((min(v), c) for c, v in fail_out.items() if c not in fail_in or c in convention_in)
        if not cands:
            continue
        if not any(t.call_pairs[c].a.parent < 0 for c in fail_out):
            # the model's outputs agree: a loss that differs was made by the loss function, an
            # independent error that ends every window (label smoothing on one side)
            rows = rows[~loss_mask[rows]]
        starts = sorted((first_row[c], c) for _, c in cands)
        for out_row, c in cands:
            call = t.call_pairs[c].a
            if call.parent < 0:
                continue  # the model's own output: only a loss follows it, no comparable point
            ancestors = {x.id for x in va.ancestors(call)}
            if under is not None and not ancestors & under:
                continue
            last = max(fail_out[c])
            nxt = next(((r0, c2) for r0, c2 in starts if r0 > last and t.call_pairs[c2].a.id not in ancestors), None)
            window = rows[rows > last]
            if nxt is not None:  # up to the next independent error, and the inputs it received (they agree)
                window = window[(window < nxt[0]) | ((cp_col[window] == nxt[1]) & (roles[window] != out_code))]
                if nxt[1] in convention_in:  # inputs it takes in another convention show nothing either way
                    window = window[[not (cp_col[i] == nxt[1] and not measured[i] and _shapes_differ(t, i))
                                     for i in window.tolist()]]
            joined = None
            other_input = c in convention_in
            if not measured[fail_out[c]].all() and not (other_input and all(_shapes_differ(t, i) for i in fail_out[c])):
                joined = _concat(t, out_row) if len(fail_out[c]) == 1 and "shape" in t.reasons.get(out_row, "") else None
                if joined is None:
                    continue  # damaged or undecodable: not compared, so nothing is known of it
            if not all(_floating(t, i) for i in fail_out[c]):
                continue  # ids, masks, indices are exact data: a difference there is never a boundary
            evidence = window[measured[window]] if len(window) else window
            if len(evidence) and not passed[window].all():
                continue  # a later record shows it: it propagates
            if other_input and not len(evidence):
                continue  # another input convention needs later values that agree to be one
            if not len(evidence):
                # nothing compared between this call and the next independent error: only a
                # conventional relation (an embedding scale of sqrt(width)) decides it
                relation = _relation(t, out_row)
                if not joined and not _conventional(t, out_row, relation):
                    continue
            else:
                relation = _relation(t, out_row)
            cp = t.call_pairs[c]
            if other_input:
                held = [w for w in (_window(t, k) for k in [*fail_in.get(c, []), *fail_out[c]]) if w]
                relation = ("another input convention (the shapes differ" + "".join(f"; {w}" for w in held)
                            + "), and everything after it agrees")
                _same_values_pass(t, rows, fail_in.get(c, []), cp.a.label)
            for i in fail_out[c] + (fail_in.get(c, []) if other_input else []):
                t.set_verdict(i, True, f"boundary difference: {relation} ({t.reasons.get(i, '')})")
            grads = np.flatnonzero(in_step & grad_mask & (cp_col == c) & ~t.passed)
            for i in grads.tolist():
                t.set_verdict(i, True, f"boundary difference (the gradient w.r.t. the output of {cp.a.label}, whose "
                                       f"forward difference does not propagate) ({t.reasons.get(i, '')})")
            out.append({"step": int(s), "a_id": cp.a.id, "a": cp.a.label, "b": cp.b.label, "a_type": cp.a.module_type,
                        "b_type": cp.b.module_type, "relation": relation})
            logger.info("boundary difference at %s / %s: %s", cp.a.label, cp.b.label, relation)
    return out


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

"""Differences that do not propagate: where two correct libraries draw a boundary elsewhere.

Two libraries may agree on every value that matters and still hand different tensors across
one module boundary: one scales the embedding inside its embedding module and the other just
after it, one fuses the activation into its BatchNorm and the other calls ReLU next, one
builds an additive mask with -1e4 and the other with the float32 minimum. The general test
used here, for every such pair, is whether the difference *reaches anything downstream*
(inputs no consumer uses as a number, values compared across a moved layer and op pairs inside
an agreeing module are in ``_absorbed``):

* **Boundary differences (outputs).** A call whose inputs agree and whose output differs is
  where an error is made only if the error propagates: some record after it, before the next
  independent error (another call whose inputs agree and whose output differs), differs as
  well (another call of the same module that stays failing is not independent: the same
  error again). When every later record up to that point agrees, and at least one later output was
  compared and agreed, the next comparable point absorbed the difference: the pair passes as
  a *boundary difference*, with what relates the two values where one of the known relations
  fits (``BOUNDARY_RELATIONS``: a constant factor, an activation applied on one side), and the
  comparison goes on from the next common point. Gradients at that boundary (the gradient
  w.r.t. the differing output) differ for the same reason and are absorbed with it. A call
  handed another input convention (shapes that differ: HF's BLIP-2 takes image placeholder
  ids in ``input_ids``, paddlenlp concatenates the queries itself) is judged the same way, its
  inputs with it, when later records were compared and all agree. So is a call that returns
  its result in another shape (torch's ``EmbeddingBag`` pooling inside the module against
  paddle's ``Embedding`` pooled by the caller): nothing relates the two values, and only later
  records that were compared and all agree make it a boundary.
* **Padding moved across the boundary.** A call whose inputs differ only by zeros around them
  (one library pads before the convolution, the other inside it) and whose outputs hold each
  other in a window (the extra positions the inner padding computes, trimmed after the call)
  computed the same values: it passes whatever happens later, and a difference further on is
  left to the call or code that makes it.

* **An input checked inside the call.** An input that differs while the very same value (one
  side's) is received again by a call inside the one it was handed to, and agrees with its
  partner there, is right: the other side transforms it on the other side of this boundary
  (a SiLU applied before a block against one applied inside it) and the transformed values
  agree. The input passes whatever the call returns. Not when the partner value there is one the
  other side handed to the call as another argument: then the two sides hand the call different
  things (BLOOM's residual argument given the normed input), which is a real difference.

* **Representations the sides do not share.** A call whose every input and output is in shapes
  no layout relates (one side runs a relative-position MLP on every pair of tokens, the other on
  a table of offsets) was compared by no number: where a later pair of the step differs in its
  numbers, the call is passed over and the divergence is looked for there
  (``_unshared.absorb_uncompared_calls``).

* **Derived state computed another way** is in ``_derived``.

Nothing here ever turns a propagating difference into a pass: a difference that any later
record shows is left for the first-divergence locator.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from padiff_trace.arrays import is_number

from ..alignment._calls import TraceView
from ._beside import reached
from ._inside import absorb_checked_inside
from ._pairtable import PairTable
from ._relations import (
    BOUNDARY_RELATIONS,
    RELATION_REL,
    agrees,
    carries,
    concat_relation,
    conventional,
    residual_relation,
    resize_relation,
    window_fit,
    window_relation,
)
from ._relations import relation as describe
from ._values import flat_value_key, value_key

__all__ = ["BOUNDARY_RELATIONS", "RELATION_REL", "absorb_boundaries", "absorb_checked_inside", "agrees", "value_key"]

logger = logging.getLogger(__name__)

_FWD = ("model_input", "input", "output")


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
    return all(is_number(getattr(t.record(i, k), "dtype", "")) for k in (0, 1))


def absorb_boundaries(t: PairTable, va: TraceView, vb: TraceView) -> list[dict[str, Any]]:
    """Pass the differing outputs that no later record shows (see the module docstring); returns
    one entry per absorbed call pair: step, the calls, the relation found. Repeated until
    nothing more passes: an outer boundary absorbed (a dense layer's concatenation) clears the
    window of an inner one before it (the BatchNorm with its fused activation)."""
    out: list[dict[str, Any]] = []
    under: set[int] | None = None  # later rounds: only calls inside one absorbed in the round before
    for _ in range(_ROUNDS):
        more = _absorb_boundaries_once(t, (va, vb), under)
        if not more:
            break
        out += more
        under = {e["a_id"] for e in more}
    for e in out:
        del e["a_id"]
    return out


_ROUNDS = 8


def _absorb_boundaries_once(t: PairTable, views: tuple[TraceView, TraceView], under: set[int] | None) -> list[dict[str, Any]]:
    if not len(t):
        return []
    va = views[0]
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
        # a call whose differing inputs each come right after records that agree: code between
        # compared records made the difference (an activation before a max-pool on one side and
        # after it on the other); it is judged with its inputs, by whether anything later shows it
        fresh = _fresh_inputs(fwd_rows, passed, fail_in, fail_out) - convention_in
        convention_in |= fresh
        cands = sorted((min(v), c) for c, v in fail_out.items() if c not in fail_in or c in convention_in)
        if not cands:
            continue
        if not any(t.call_pairs[c].a.parent < 0 for c in fail_out):
            # the model's outputs agree: a loss that differs was made by the loss function, an
            # independent error that ends every window (label smoothing on one side)
            rows = rows[~loss_mask[rows]]
        # the next independent error: a call whose inputs agree (one whose differing inputs came
        # right after agreeing records may be the same difference carried on)
        starts = sorted((first_row[c], c) for _, c in cands if c not in fresh)
        # latest first: whether a later call of the same module stays failing is known when an
        # earlier one is judged
        for out_row, c in reversed(cands):
            call = t.call_pairs[c].a
            if call.parent < 0:
                # the model's own output: only a loss follows it; a loss term the model returns
                # another way (scaled inside on one side, by the loss function on the other) passes
                # where the loss and every weight's gradient of the step agree
                said = _loss_absorbs(t, in_step & (cp_col != c), fail_out[c]) if c not in fail_in else None
                if said is not None:
                    _pass_call(t, c, s, in_step & grad_mask, fail_out[c], said, out)
                continue
            ancestors = {x.id for x in va.ancestors(call)}
            if under is not None and not ancestors & under:
                continue
            last = max(fail_out[c])
            # the next error still standing: a later one already judged a boundary (latest first) is none
            nxt = next(((r0, c2) for r0, c2 in starts if r0 > last and t.call_pairs[c2].a.id not in ancestors
                        and not t.passed[fail_out[c2]].all()), None)
            if nxt is not None and _same_module(t, c, nxt[1]) and not t.passed[fail_out[nxt[1]]].all():
                continue  # the next error is this module's again (a dropout of the wrong rate, each call): not independent
            window = rows[rows > last]
            if nxt is not None:  # up to the next independent error, and the inputs it received (they agree)
                window = window[(window < nxt[0]) | ((cp_col[window] == nxt[1]) & (roles[window] != out_code))]
                if nxt[1] in convention_in:  # inputs it takes in another convention show nothing either way
                    window = window[[not (cp_col[i] == nxt[1] and not measured[i] and _shapes_differ(t, i))
                                     for i in window.tolist()]]
            joined = None
            other_input = c in convention_in
            other_output = False  # outputs of other shapes: another boundary, judged by what follows
            moved = _padding_moved(t, fail_in.get(c, []), fail_out[c]) if other_input else None
            if moved is not None:
                _pass_call(t, c, s, in_step & grad_mask, fail_out[c] + fail_in.get(c, []),
                           "padding applied inside the module on one side and before it on the other ("
                           + "; ".join(moved) + "): the values it computes agree", out)
                continue
            if not measured[fail_out[c]].all() and not (other_input and all(_shapes_differ(t, i) for i in fail_out[c])):
                joined = ((concat_relation(t, out_row) or resize_relation(t, out_row))
                          if len(fail_out[c]) == 1 and "shape" in t.reasons.get(out_row, "") else None)
                if joined is None and not all(_shapes_differ(t, i) for i in fail_out[c]):
                    continue  # damaged or undecodable: not compared, so nothing is known of it
                # a module that returns its result in another shape (an EmbeddingBag's pooled rows
                # against an Embedding's per-token rows pooled after it): what follows decides
                other_output = joined is None
            if not all(_floating(t, i) for i in fail_out[c]):
                continue  # ids, masks, indices are exact data: a difference there is never a boundary
            exact_in = c in fresh and not all(_floating(t, i) for i in fail_in[c])
            if exact_in:
                continue  # differing ids or masks handed in: exact data is never a boundary
            residual = residual_relation(t, out_row) if c not in fail_in and measured[out_row] and len(fail_out[c]) == 1 else None
            nxt_rows = window[measured[window]][:1] if residual is not None else window[:0]
            if residual is not None and not (len(nxt_rows) and carries(t, int(nxt_rows[0]), residual[1])):
                # the residual added on either side of the boundary (the next record compared does
                # not differ by it: the other side's caller added it): compared across it, they agree
                _pass_call(t, c, s, in_step & grad_mask, fail_out[c], f"{residual[0]}; compared across it, the values agree", out)
                continue
            if c in fresh and not passed[window].all():
                # judged on the records as compared, before this round passed any: a chain of such
                # calls is one difference carried on, not a boundary each
                handed = _consumers_agree(t, rows, c, fail_out[c], passed)
                if handed is not None:
                    _pass_call(t, c, s, in_step & grad_mask, fail_out[c] + fail_in[c], handed, out)
                continue
            if joined:  # the same values, one side's concatenated or resized at its edge: nothing left to propagate
                _pass_call(t, c, s, in_step & grad_mask, fail_out[c], joined, out)
                continue
            evidence = window[measured[window]] if len(window) else window
            if len(evidence) and t.passed[window].all() and not reached(t, views, c, fail_out[c], evidence):
                evidence = evidence[:0]  # nothing compared there received the difference: it shows nothing
            if len(evidence) and not t.passed[window].all():
                handed = _consumers_agree(t, rows, c, fail_out[c]) or _activation_next(t, views, c, fail_out[c])
                if handed is None:
                    continue  # a later record shows it: it propagates
                _pass_call(t, c, s, in_step & grad_mask, fail_out[c], handed, out)
                continue
            if (other_input or other_output) and not len(evidence):
                continue  # another input convention needs later values that agree to be one
            if not len(evidence):
                # nothing compared between this call and the next independent error: only a
                # conventional relation (an embedding scale of sqrt(width)) decides it
                relation = describe(t, out_row)
                if not joined and not conventional(t, out_row, relation):
                    continue
            else:
                relation = describe(t, out_row)
            cp = t.call_pairs[c]
            if other_output and not other_input:
                relation = (f"{relation.split(';')[0]}; the module returns its result in another shape "
                            "(a boundary drawn elsewhere), and everything after it agrees")
            if other_input and c in fresh and c not in reshaped_in:
                relation = ("its inputs and outputs differ as code between agreeing records made them (operations "
                            "in another order on each side), and everything after it agrees")
                _same_values_pass(t, rows, fail_in.get(c, []), cp.a.label)
            elif other_input:
                held = [w for w in (window_relation(t, k) for k in [*fail_in.get(c, []), *fail_out[c]]) if w]
                relation = ("another input convention (the shapes differ" + "".join(f"; {w}" for w in held)
                            + "), and everything after it agrees")
                _same_values_pass(t, rows, fail_in.get(c, []), cp.a.label)
            _pass_call(t, c, s, in_step & grad_mask, fail_out[c] + (fail_in.get(c, []) if other_input else []), relation, out)
    return out


def _loss_absorbs(t: PairTable, in_step: np.ndarray, outs: list[int]) -> str | None:
    """Why the model's differing outputs ``outs`` are a boundary difference, or None (``in_step``:
    the step's rows, but the gradients w.r.t. those outputs, which differ alike): each is a
    scalar (a loss term the model returns: a commitment cost applied inside one model and by the
    other's loss function), the step's loss was compared and agrees, and so does every weight's
    gradient of the step (what training takes from it). A scalar tells nothing by its relation (any two are a constant factor apart):
    only the loss that consumed it, agreeing, does."""
    loss = np.flatnonzero(in_step & t.role_mask("loss"))
    grads = np.flatnonzero(in_step & t.role_mask("param_grad"))
    if not len(loss) or not (t.measured[loss].all() and t.passed[loss].all()) or not t.passed[grads].all():
        return None
    if not all(_floating(t, i) and t.record(i, 0).numel == 1 == t.record(i, 1).numel for i in outs):
        return None
    return ("a loss term the model returns another way (a scalar, scaled inside the model on one side and "
            "by the loss function on the other): the loss and every weight's gradient of the step agree")


def _fresh_inputs(fwd_rows: np.ndarray, passed: np.ndarray, fail_in: dict[int, list[int]],
                  fail_out: dict[int, list[int]]) -> set[int]:
    """Call pairs with differing inputs and outputs whose every differing input row comes right
    after a forward row that agrees (in record order): the difference was made between them."""
    at = {int(r): k for k, r in enumerate(fwd_rows.tolist())}
    return {c for c, ins in fail_in.items() if c in fail_out
            and all(at.get(i, 0) > 0 and bool(passed[fwd_rows[at[i] - 1]]) for i in ins)}


def _same_module(t: PairTable, c: int, d: int) -> bool:
    """Whether call pairs ``c`` and ``d`` are calls of one module on either side."""
    x, y = t.call_pairs[c], t.call_pairs[d]
    return x.a.module == y.a.module or x.b.module == y.b.module


def _consumers_agree(t: PairTable, rows: np.ndarray, c: int, outs: list[int], passed: np.ndarray | None = None) -> str | None:
    """What relates call pair ``c``'s differing outputs (a known relation: an activation applied
    on one side, a constant factor) where every later call that received one of them, as
    recorded on either side, received values that agree: each consumer absorbed the difference,
    whatever a later, independent error makes differ further on. None where any output fits no
    known relation, no consumer is recorded, or one received values that differ."""
    said = []
    for i in outs:
        found = describe(t, i)
        if found.startswith("the next comparable"):
            return None
        said.append(found.split(";")[0])
    keys = [(flat_value_key(t.record(i, 0)), flat_value_key(t.record(i, 1))) for i in outs]
    ka = {k for k, _ in keys if k is not None}
    kb = {k for _, k in keys if k is not None}
    cp_col, out_code, roles = t.col("cp"), t.roles.index("output"), t.col("role")
    later = rows[(rows > max(outs)) & (cp_col[rows] != c) & (roles[rows] != out_code)]
    # the same values flattened or reshaped on the way (a pooled map flattened for a Linear) are received too
    got = [i for i in later.tolist() if flat_value_key(t.record(i, 0)) in ka or flat_value_key(t.record(i, 1)) in kb]
    if not got or not (t.passed if passed is None else passed)[got].all():
        return None
    shown = t.call_pairs[int(cp_col[got[0]])].a.label
    return f"{'; '.join(dict.fromkeys(said))}; what it hands over agrees where {shown} receives it"


def _activation_next(t: PairTable, views: tuple[TraceView, TraceView], c: int, outs: list[int]) -> str | None:
    """Where each differing output is the other side's with an activation applied (the
    activation fused into this module on one side: BatchNorm with ``act="relu"``) and the side
    without it calls that activation as a module of its own next, on the very value (a call no
    pair holds, fed the output as recorded), whose output agrees with the fused side's: compared
    across the activation, the two sides hand on the same values, whatever a later, independent
    error makes differ further on. None where any output fits no activation or has no such call."""
    paired = ({p.a.id for p in t.call_pairs}, {p.b.id for p in t.call_pairs})
    said = []
    for i in outs:
        found = describe(t, i)
        if "the activation is fused into this module" not in found:
            return None
        fused = 0 if found.startswith("A = ") else 1
        plain = 1 - fused
        key, want = value_key(t.record(i, plain)), np.asarray(t.record(i, fused).read(), np.float64)
        step = int(t.col("step")[i])
        nxt = next((k for k in views[plain].calls.get(step, []) if k.id not in paired[plain]
                    and any(value_key(r) == key for r in k.tensor_inputs())), None) if key is not None else None
        got = nxt.tensor_outputs() if nxt is not None else []
        if nxt is None or len(got) != 1 or tuple(got[0].shape) != want.shape \
                or not agrees(np.asarray(got[0].read(), np.float64), want):
            return None
        said.append(f"{found.split(';')[0]}; {'AB'[plain]}'s {nxt.module} applies it next, and its output agrees")
    return "; ".join(dict.fromkeys(said)) if said else None


def _padding_moved(t: PairTable, ins: list[int], outs: list[int]) -> list[str] | None:
    """What relates each differing input (the other's with zeros around it) and output (a window
    of the other's) of one call, or None where any of them does not fit."""
    if not ins or not outs:
        return None
    fits = [window_fit(t, i) for i in ins]
    if not all(f is not None and f[1] for f in fits):
        return None
    fits += [window_fit(t, i) for i in outs]
    return [f[0] for f in fits if f is not None] if all(f is not None for f in fits) else None


def _pass_call(t: PairTable, c: int, step: int, grad_rows: np.ndarray, rows: list[int], relation: str,
               out: list[dict[str, Any]]) -> None:
    """Pass call pair ``c``'s differing ``rows`` as a boundary difference, with the gradients
    w.r.t. its output, and note it in ``out``."""
    cp = t.call_pairs[c]
    for i in rows:
        t.set_verdict(i, True, f"boundary difference: {relation} ({t.reasons.get(i, '')})")
    for i in np.flatnonzero(grad_rows & (t.col("cp") == c) & ~t.passed).tolist():
        t.set_verdict(i, True, f"boundary difference (the gradient w.r.t. the output of {cp.a.label}, whose "
                               f"forward difference does not propagate) ({t.reasons.get(i, '')})")
    out.append({"step": int(step), "a_id": cp.a.id, "a": cp.a.label, "b": cp.b.label, "a_type": cp.a.module_type,
                "b_type": cp.b.module_type, "relation": relation})
    logger.info("boundary difference at %s / %s: %s", cp.a.label, cp.b.label, relation)

"""Gradient differences that go no further: where a module's backward drops what differs.

The gradient of a call's output flows into that call's backward and nowhere else: into the
gradients of its inputs and of its parameters. When those all agree, the difference in the
output gradient did not reach anything: it sits only where the call's backward passes
nothing on. Two correct models get there more often than one would think: a ReLU6 or ReLU
whose input is negative ignores the gradient it receives, and a dropout mask read off the
recorded output (``recorder/_random.py``) cannot tell a dropped element from a kept one
where the input was 0 already, so the replaying side may pass a gradient back where the
recording side passed none: the forward values agree, and so does every gradient after
the ReLU in front of it.

``absorb_unpropagated_gradients`` passes such a failing output gradient as "does not
propagate" when every gradient made from it agrees: the call's input gradients (recorded
with ``input_grads``; otherwise the output gradients of the calls that produced its inputs,
found by value: ``value_key``) and its module's parameter gradients, at least one of them
compared. A gradient difference that any of them shows is left to the first-divergence
locator.

``absorb_unreached_gradients`` is the same principle for a whole step: where every forward
value, the loss and every parameter gradient of the step agree (at least one compared), a
gradient of an intermediate value that differs reached nothing that trains. Two frameworks
report such gradients differently where a model differentiates twice (a gradient penalty taking
the gradient of the critic with respect to its input, ``create_graph=True``): the module hooks
see the first backward on one side and both on the other.
"""

from __future__ import annotations

import logging
from collections import defaultdict

import numpy as np

from ._boundary import value_key
from ._pairtable import PairTable

__all__ = ["absorb_unpropagated_gradients", "absorb_unreached_gradients"]

logger = logging.getLogger(__name__)


def absorb_unpropagated_gradients(t: PairTable) -> int:
    """Pass the failing output gradients whose call's backward passes on nothing that differs
    (module docstring); returns how many passed."""
    if not len(t):
        return 0
    cp_col, step_col, roles = t.col("cp"), t.col("step"), t.col("role")
    failing = np.flatnonzero(t.role_mask("grad_output") & ~t.passed & t.measured & (cp_col >= 0))
    if not len(failing):
        return 0
    grad_out_code = t.roles.index("grad_output")
    # per step: the rows of each call pair's output and input gradients, by A's position
    grads: dict[int, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    igrads: dict[int, list[int]] = defaultdict(list)
    for i in np.flatnonzero(t.role_mask("grad_output", "grad_input") & (cp_col >= 0)).tolist():
        (grads[int(step_col[i])][int(cp_col[i])] if roles[i] == grad_out_code else igrads[int(cp_col[i])]).append(i)
    pgrads: dict[tuple[int, str], list[int]] = defaultdict(list)
    for i in np.flatnonzero(t.role_mask("param_grad")).tolist():
        pgrads[(int(step_col[i]), t.record(i, 0).module)].append(i)
    producers = _producers(t)
    n = 0
    absorbed: dict[object, str] = {}  # value key of an absorbed gradient -> the call it was absorbed at
    for i in failing.tolist():
        reason = t.reasons.get(i, "")
        if "NaN" in reason or "Inf" in reason or "shape" in reason:
            continue
        c, s = int(cp_col[i]), int(step_col[i])
        call = t.call_pairs[c].a
        made = list(igrads.get(c, ()))
        if not made:  # no input gradient recorded: the output gradients of what produced the inputs
            for r in call.tensor_inputs():
                key = value_key(r)
                made += [j for p in producers.get((s, key), ()) if p != c for j in grads[s].get(p, ())]
        made += pgrads.get((s, call.module), [])
        compared = [j for j in made if t.measured[j]]
        if not compared or not all(t.passed[j] for j in made):
            continue
        whose = "its inputs' and parameters'" if pgrads.get((s, call.module)) else "its inputs'"
        t.set_verdict(i, True, f"gradient difference that does not propagate: every gradient the backward of "
                               f"{call.label} makes from it agrees ({whose}): only elements that backward passes "
                               f"nothing back for differ ({reason})")
        n += 1
        key = value_key(t.record(i, 0))
        if key is not None:
            absorbed[key] = call.label
    for i in failing.tolist():  # the same gradient recorded for an enclosing call (a container's output)
        key = value_key(t.record(i, 0))
        if not t.passed[i] and key is not None and key in absorbed:
            t.set_verdict(i, True, f"gradient difference that does not propagate: the same gradient as at "
                                   f"{absorbed[key]}, whose backward passes nothing on that differs ({t.reasons.get(i, '')})")
            n += 1
    if n:
        logger.info("%d output gradient(s) differ only where the backward passes nothing on", n)
    return n


def _producers(t: PairTable) -> dict[tuple[int, object], list[int]]:
    """(step, value key of an output) -> the call pairs (table slots) whose A call output it."""
    out: dict[tuple[int, object], list[int]] = defaultdict(list)
    for c, cp in enumerate(t.call_pairs):
        for r in cp.a.tensor_outputs():
            key = value_key(r)
            if key is not None:
                out[(cp.a.step, key)].append(c)
    return out


def absorb_unreached_gradients(t: PairTable) -> int:
    """Pass the failing output and input gradients of every step whose forward values, losses
    and parameter gradients all agree (module docstring); returns how many passed."""
    if not len(t):
        return 0
    step_col = t.col("step")
    grads = t.role_mask("grad_output", "grad_input")
    failing = np.flatnonzero(grads & ~t.passed)
    if not len(failing):
        return 0
    pg = t.role_mask("param_grad")
    rest = ~grads  # forward values, losses, weights and parameter gradients
    n = 0
    for s in np.unique(step_col[failing]).tolist():
        in_step = step_col == s
        if not (pg & in_step & t.measured).any() or not t.passed[rest & in_step].all():
            continue
        for i in failing[step_col[failing] == s].tolist():
            t.set_verdict(i, True, "gradient difference that reaches nothing that trains: every forward value, loss and "
                                   f"parameter gradient of step {s} agrees ({t.reasons.get(i, '')})")
            n += 1
    if n:
        logger.info("%d intermediate gradient(s) differ where every parameter gradient agrees", n)
    return n

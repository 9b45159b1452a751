"""What a comparison measures: every (role, A record, B record, permutation, call pair).

Module inputs and outputs (and their gradients) through the call pairs, weights and
parameter gradients through the weight map, probes by name and occurrence, losses by step,
then op-level records. ``compare()`` and the float64 referee (``_referee``) plan alike.
"""

from __future__ import annotations

from typing import Any

from padiff_trace import Kind
from padiff_trace.matching import WeightMap

from ._calls import TraceView
from ._ops import collect_ops, plan_ops
from ._pairing import Alignment, CallPair, pair_leaves
from ._weights import pair_by_map

__all__ = ["Todo", "plan"]

# (role, a, b, perm, call pair); a and b are Records or RowSlices (views of packed weights)
Todo = tuple[str, Any, Any, "tuple[int, ...] | None", Any]


def plan(
    al: Alignment, va: TraceView, vb: TraceView, wm: WeightMap | None, op_names: dict[str, str] | None = None
) -> list[Todo]:
    """Every (role, A record, B record, permutation, call pair) to compare, all steps."""
    todo: list[Todo] = []
    keyed = al.by_key()
    steps_b = {s: {c.key: c for c in cs} for s, cs in vb.calls.items()}
    hidden_a = {c.key for c in al.hidden_a}
    ops_a, ops_b = collect_ops(va.trace), collect_ops(vb.trace)
    op_calls: list[tuple[Any, Any, CallPair]] = []  # planned last: their operands come from the module pairs
    for step, calls in va.calls.items():
        b_by_key = steps_b.get(step, {})
        for ca in calls:
            if ca.key in hidden_a:
                continue
            cp = keyed.get(ca.key)
            if cp is None:
                continue
            cb = b_by_key.get(cp.b.key)
            if cb is None:
                continue
            pair = cp if ca is cp.a else CallPair(ca, cb, cp.how, cp.entry)
            role_in = "model_input" if ca.parent == -1 and any(r.kind == Kind.MODEL_INPUT for r in ca.inputs) else "input"
            ins, _, _ = pair_leaves(ca.inputs, cb.inputs, cp.perm)
            outs, _, _ = pair_leaves(ca.outputs, cb.outputs, cp.perm)
            for x, y, p in ins:
                todo.append((role_in, x, y, p, pair))
                gx, gy = va.grads_in.get((ca.id, x.position)), vb.grads_in.get((cb.id, y.position))
                if gx is not None and gy is not None:
                    todo.append(("grad_input", gx, gy, p, pair))
            for x, y, p in outs:
                todo.append(("output", x, y, p, pair))
                gx, gy = va.grads_out.get((ca.id, x.position)), vb.grads_out.get((cb.id, y.position))
                if gx is not None and gy is not None:
                    todo.append(("grad_output", gx, gy, p, pair))
            if ops_a and ops_b:
                op_calls.append((ca, cb, pair))
    for step in sorted(set(va.weights) & set(vb.weights)):
        for wa, wb, p in pair_by_map(wm, va.weights[step], vb.weights[step])[0]:
            todo.append(("param" if wa.kind == Kind.PARAM else "buffer", wa, wb, p, None))
    for step in sorted(set(va.param_grads) & set(vb.param_grads)):
        for ga, gb, p in pair_by_map(wm, va.param_grads[step], vb.param_grads[step])[0]:
            todo.append(("param_grad", ga, gb, p, None))
    for step in sorted(set(va.probes) & set(vb.probes)):
        pb = vb.probes[step]
        for key, x in va.probes[step].items():
            if key in pb:
                todo.append(("probe", x, pb[key], None, None))
    for step in sorted(set(va.losses) & set(vb.losses)):
        for x, y in zip(va.losses[step], vb.losses[step]):
            todo.append(("loss", x, y, None, None))
    todo += plan_ops(op_calls, (va, vb), (ops_a, ops_b), list(todo), op_names)
    return todo

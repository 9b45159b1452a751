"""Single-step replay plans: which records of the other trace each module call receives.

``single_step_plan(this, other)`` aligns the two traces exactly as ``compare`` does
and lists, for every paired module call (every step of ``other``), the other side's
recorded inputs and output gradients with any layout permutation needed to bring them
into this model's layout. The recorder (``--single-step-plan``) feeds them in.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from ._pairing import pair_leaves
from ._traces import align, as_mapping

__all__ = ["single_step_plan"]


def _inverse(perm: tuple[int, ...] | None) -> list[int] | None:
    if not perm:
        return None
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


def _pairs_only(mapping: Any) -> Any:
    """The mapping without the orders its weights entries read blocks in (``*_blocks``: rotary
    rows inside a fused q|k|v): they reorder values, never which calls pair, and read the other
    way round (this plan pairs B's calls with A's) some cannot be applied to the other side."""
    m = as_mapping(mapping)
    if m is None:
        return None
    return dataclasses.replace(m, weights=tuple(dataclasses.replace(w, blocks={}) for w in m.weights))


def single_step_plan(this: str | os.PathLike[str], other: str | os.PathLike[str], mapping: Any = None) -> dict[str, Any]:
    """A JSON-able plan for recording ``this`` trace's model single-step against ``other``."""
    al = align(this, other, _pairs_only(mapping))
    va, vb = al.a, al.b
    b_calls = {(c.step, c.module, c.call_index): c for cs in vb.calls.values() for c in cs}
    calls: dict[str, dict[str, list[list[Any]]]] = {}
    for pair in al.pairs:
        a, b0 = pair.a, pair.b
        if a.parent == -1:
            continue  # model inputs: replayed with --inputs-from
        for step in vb.steps:
            b = b_calls.get((step, b0.module, b0.call_index))
            if b is None:
                continue
            ins, _, _ = pair_leaves(a.inputs, b.inputs, pair.perm)
            outs, _, _ = pair_leaves(a.outputs, b.outputs, pair.perm)
            entry: dict[str, list[list[Any]]] = {
                "inputs": [[x.position, y.seq, _inverse(p)] for x, y, p in ins if y.has_data],
                "grads": [],
            }
            for x, y, p in outs:
                g = vb.grads_out.get((b.id, y.position))
                if g is not None and g.has_data:
                    entry["grads"].append([x.position, g.seq, _inverse(p)])
            calls[f"{step}|{a.module}|{a.call_index}"] = entry
    va.trace.close()
    return {"trace": str(os.path.abspath(other)), "this": str(os.path.abspath(this)), "calls": calls}


def local_vs_accumulated(accumulated: Any, local: Any, top: int = 15) -> tuple[list[dict[str, Any]], str]:
    """Per module call: output error of the normal run next to the single-step run; phase
    ``input``: the error of a module's input as the model computed it from the plan's values one
    module earlier, i.e. of the parent's own code between its children (a function, not a module).

    Both arguments are ``Report`` objects comparing the same reference (A) with the
    normal and the single-step recording of the other model. Rows are ranked first by whether
    the local error fails the comparison's tolerance (beyond the noise floor: a module's own
    error, not rounding), then by local error (relative L2 of the forward output; backward: of
    the output gradient). Tiny gradients have large relative errors that are rounding: ranked
    by relative L2 alone, they came before a planted bug."""

    def errors(report: Any) -> tuple[dict[tuple[str, str, int, str], float], set[tuple[str, str, int, str]]]:
        out: dict[tuple[str, str, int, str], float] = {}
        failed: set[tuple[str, str, int, str]] = set()
        for p in report.pairs:
            if p.role in ("output", "grad_output", "input") and p.metrics is not None and p.step == 0:
                key = (p.role, p.a.module, p.a.call_index, p.a.position)
                out[key] = max(out.get(key, 0.0), float(p.metrics.rel_l2))
                if not p.passed:
                    failed.add(key)
        return out, failed

    (acc, _), (loc, loc_failed) = errors(accumulated), errors(local)
    types = {(p.a.module): p.a.module_type for p in local.pairs}
    rows = [
        {
            "phase": {"output": "forward", "input": "input", "grad_output": "backward"}[role],
            "module": mod,
            "module_type": types.get(mod, ""),
            "call_index": idx,
            "position": pos,
            "local_rel_l2": loc[key],
            "local_failed": key in loc_failed,
            "accumulated_rel_l2": acc.get(key, float("nan")),
        }
        for key in loc
        for role, mod, idx, pos in [key]
    ]
    rows.sort(key=lambda r: (not r["local_failed"], -r["local_rel_l2"]))
    lines = ["Local (single-step) vs accumulated error, ranked by local error beyond the noise floor",
             "(* fails the tolerance on its own inputs), then by relative L2:", ""]
    lines.append(f"  {'phase':<8} {'module':<40} {'local':>11} {'accum.':>10}")
    for r in rows[:top]:
        name = f"{r['module'] or '<root>'}#{r['call_index']}"
        star = "*" if r["local_failed"] else " "
        lines.append(f"  {r['phase']:<8} {name[:40]:<40} {r['local_rel_l2']:>10.2e}{star} {r['accumulated_rel_l2']:>10.2e}")
    return rows, "\n".join(lines)

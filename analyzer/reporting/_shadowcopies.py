"""A first divergence in a copy the models keep of their weights (an EMA in buffers, an averaged
model), paired by ``matching._shadows``: what it means when the weights themselves agree."""

from __future__ import annotations

from typing import Any

import numpy as np

from padiff_trace.matching import SHADOW

from ._contents import Finding, ReportData

__all__ = ["shadow_findings"]


def shadow_findings(report: ReportData, d: Any) -> list[Finding] | None:
    """Findings for a first divergence in a pair of weight copies; None where it is none."""
    wm, p = report.weight_map, d.pair
    if wm is None or p.role not in ("param", "buffer"):
        return None
    copies = {(q.a, q.b) for q in wm.pairs if q.how == SHADOW}
    if (p.a.tensor_name, p.b.tensor_name) not in copies:
        return None
    t = report.pairs
    rows = np.flatnonzero(t.role_mask("param", "buffer") & (t.col("step") == p.step))
    live = [int(i) for i in rows if (t.record(int(i), 0).tensor_name, t.record(int(i), 1).tensor_name) not in copies]
    held = sum(bool(t.passed[i]) for i in live)
    what = (f"A {p.a.tensor_name} and B {p.b.tensor_name} are copies each model keeps of a weight (an average, a teacher, "
            "a reference: they held that weight's values before the first step)")
    if live and held == len(live):
        return [Finding("copy_differs", what), Finding(
            "copy_update_differs", f"the {len(live)} weights the models train agree at step {p.step}: the code that "
                                   "updates the copies differs (its order against the optimizer step, its decay), not "
                                   "the model or its optimizer", hint=True)]
    return [Finding("copy_differs", what)]

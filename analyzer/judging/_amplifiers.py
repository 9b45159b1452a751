"""Calls that amplify the error they receive: per paired call, its output error over the
larger of its input error and its own weights' error (a dtype's eps at least).

A container whose jump is explained by a call inside it is not listed; a boundary difference
(where two libraries draw a line, ``_boundary``) is not an amplifier. The strongest calls
overall, and the strongest of each step (``_steps``' rows name it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ._reordered import REORDERED

if TYPE_CHECKING:
    from ..alignment._calls import TraceView
    from ..alignment._pairing import CallPair
    from ._pairtable import PairTable

__all__ = ["Amplifier", "amplifiers"]

_BLOCK = 1 << 16  # pairs turned into Python numbers at a time
_EPS = {"float64": 2.2e-16, "float32": 1.2e-7, "float16": 9.8e-4, "bfloat16": 7.8e-3}


@dataclass(eq=False)
class Amplifier:
    call_pair: CallPair
    in_rel_l2: float
    out_rel_l2: float
    ratio: float


def amplifiers(t: PairTable, view: TraceView, top: int = 10) -> tuple[list[Amplifier], dict[int, Amplifier]]:
    """Per paired call: output error / max(input error and its own weights' error, dtype
    eps), inputs and outputs of the call's own step. The ``top`` strongest, and the
    strongest of each step."""
    if not len(t) or not t.call_pairs:
        return [], {}
    cps = t.call_pairs
    # a group per A call (a call pair of a later step re-pairs the same A call): numpy over
    # the columns, and an Amplifier only for the few that are listed
    ids, first_cp, group = np.unique(
        np.fromiter((c.a.id for c in cps), np.int64, len(cps)), return_index=True, return_inverse=True
    )
    group = np.append(group, -1)
    cp_step = np.append(np.fromiter((c.a.step for c in cps), np.int64, len(cps)), -1)
    cp = t.col("cp")
    sel = (cp >= 0) & t.has_metrics & (t.col("step") == cp_step[cp])
    bounds = [i for i, why in t.reasons.items() if why.startswith("boundary difference")]
    if bounds:  # a boundary difference is where two libraries draw a line, not an amplifier
        sel &= ~np.isin(cp, np.unique(cp[bounds]))
    rel = t.metric("rel_l2")
    rel = np.where(np.isfinite(rel), rel, 1e300)
    laid = [i for i, why in t.reasons.items() if why.startswith(REORDERED)]
    rel[laid] = 0.0  # the same values in another order: no error, whatever the element-wise metrics say
    worst = {}
    for name, mask in (("in", t.role_mask("input", "model_input")), ("out", t.role_mask("output"))):
        rows = np.flatnonzero(sel & mask)
        w = np.full(len(ids), -np.inf)
        np.maximum.at(w, group[cp[rows]], rel[rows])
        worst[name] = w
        if name == "out":
            out_groups, at = np.unique(group[cp[rows]], return_index=True)
            first_out = np.full(len(ids), -1)
            first_out[out_groups] = rows[at]
    groups = np.flatnonzero(np.isfinite(worst["in"]) & np.isfinite(worst["out"]))
    # a call's own weights are inputs too: after an optimizer step they may differ, and a
    # layer fed equal activations but drifted weights is not amplifying anything
    own = _weight_errors(t)
    if own:
        for g in groups.tolist():
            call = cps[first_cp[g]].a
            drift = own.get((call.step, call.module))
            if drift is not None and drift > worst["in"][g]:
                worst["in"][g] = drift
    # the less precise side's eps: an fp32 call paired with its bf16 autocast twin rounds at bf16
    eps = np.fromiter((max(_EPS[_cls(t.record(int(r), s).dtype)] for s in (0, 1)) for r in first_out[groups]),
                      np.float64, len(groups))
    ratio = worst["out"][groups] / np.maximum(worst["in"][groups], eps) if len(groups) else np.zeros(0)
    del eps
    # a container whose jump is explained by a call inside it is not the culprit
    best_inside: dict[int, float] = {}
    for lo in range(0, len(groups), _BLOCK):  # a block at a time: no list of a million numbers
        for g, r in zip(groups[lo : lo + _BLOCK].tolist(), ratio[lo : lo + _BLOCK].tolist()):
            for anc in view.ancestors(cps[first_cp[g]].a):
                best_inside[anc.id] = max(best_inside.get(anc.id, 0.0), r)
    inside = np.zeros(len(ids))  # per group: the largest ratio of a call inside it
    if best_inside:
        keys = np.fromiter(best_inside, np.int64, len(best_inside))
        at = np.minimum(np.searchsorted(ids, keys), len(ids) - 1)
        hit = ids[at] == keys
        inside[at[hit]] = np.fromiter(best_inside.values(), np.float64, len(best_inside))[hit]
    bound = 10 * inside[groups]
    keep = np.flatnonzero((ratio > bound) & (ratio > 1.0)) if len(groups) else groups
    keep = keep[np.argsort(first_cp[groups[keep]], kind="stable")]  # ties: in call pair order
    def amp(k: int) -> Amplifier:
        g = groups[k]
        return Amplifier(cps[first_cp[g]], float(worst["in"][g]), float(worst["out"][g]), float(ratio[k]))

    amps = [amp(k) for k in keep.tolist()]
    amps.sort(key=lambda x: (-x.ratio, -x.call_pair.a.depth))
    best: dict[int, int] = {}  # step -> the index into ratio of its strongest
    for k in keep.tolist():
        st = cps[first_cp[groups[k]]].a.step
        if st not in best or ratio[k] > ratio[best[st]]:
            best[st] = k
    return amps[:top], {st: amp(k) for st, k in best.items()}

def _weight_errors(t: PairTable) -> dict[tuple[int, str], float]:
    """(step, A's module) -> the worst relative L2 error of the parameters in that step of the
    module and every module inside it (the root: all)."""
    rows = np.flatnonzero(t.role_mask("param") & t.has_metrics) if len(t) else np.zeros(0, np.int64)
    if not len(rows):
        return {}
    rel = t.metric("rel_l2")
    steps = t.col("step")
    out: dict[tuple[int, str], float] = {}
    for r in rows.tolist():
        v = float(rel[r])
        if not np.isfinite(v):
            continue
        step, parts = int(steps[r]), t.record(r, 0).module.split(".")
        for k in range(len(parts) + 1):  # the module and each module holding it
            key = (step, ".".join(parts[:k]) if k < len(parts) else ".".join(parts))
            out[key] = max(out.get(key, 0.0), v)
    return out


def _cls(dtype: str) -> str:
    return dtype if dtype in _EPS else "float32"

"""A decay the optimizer adds inside its step on one side, a penalty the loss adds on the other.

Paddle's regularizers (``L1Decay``/``L2Decay`` on a parameter or the optimizer) and a coupled
``weight_decay`` add ``c * sign(w)`` (L1) or ``c * w`` (L2) to a parameter's gradient inside the
optimizer step: the gradient a recording reads after backward does not hold it. A port that adds
the same penalty to its loss instead (``loss + c * sum(|w|)``) gets it from backward. Both update
the weights alike, and the recorded gradients differ by exactly the decay term. A parameter
gradient pair that fails, where one side's optimizer decays the parameter and the other's does
not, passes when adding that side's decay term to its gradient gives the other's (checked on the
recorded weights of the step); the optimizer setting then is no difference
(``OptimizerDiff.settings`` loses it) but a convention, said once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from padiff_trace import DamagedRecordError, Record

from ..alignment._calls import TraceView
from ._optimizer import OptimizerDiff, per_param
from ._pairtable import PairTable
from ._updates import _arr, _rel

__all__ = ["absorb_loss_penalties"]

# hyperparameter -> (what it adds to the gradient inside the step, the term)
_TERMS = {
    "weight_decay": ("c x w (L2)", lambda c, w: c * w),
    "l1_decay": ("c x sign(w) (L1)", lambda c, w: c * np.sign(w)),
}
_EXPLAINED = 1e-2  # what is left of the gradients' difference once the term is added, relative to it ...
_FLOOR = 1e-5  # ... or relative to the gradient


def _coupled(h: dict[str, Any], key: str) -> float:
    if key == "weight_decay" and h.get("decoupled"):
        return 0.0
    v = h.get(key, 0.0)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


def absorb_loss_penalties(t: PairTable, va: TraceView, vb: TraceView, diff: OptimizerDiff | None) -> list[dict[str, Any]]:
    """Failing parameter-gradient pairs explained by a decay one side's optimizer adds and the
    other side's loss holds pass (module docstring); settings so explained leave ``diff``.
    Returns the conventions to say (one per setting)."""
    if diff is None or diff.a is None or diff.b is None or not len(t):
        return []
    pa, pb = per_param(diff.a), per_param(diff.b)
    rows = np.flatnonzero(t.role_mask("param_grad") & ~t.passed & t.measured)
    explained: dict[str, list[tuple[str, str, str]]] = {}  # setting -> (A name, B name, side)
    refuted: set[str] = set()
    for i in rows.tolist():
        try:
            ga, gb = t.record(i, 0), t.record(i, 1)
            if not (isinstance(ga, Record) and isinstance(gb, Record) and ga.has_data and gb.has_data):
                continue
            na, nb = ga.tensor_name, gb.tensor_name
            ha, hb = pa.get(na), pb.get(nb)
            if ha is None or hb is None:
                continue
            for key, (_, term) in _TERMS.items():
                ca, cb = _coupled(ha, key), _coupled(hb, key)
                if bool(ca) == bool(cb):
                    continue
                # the decaying side's gradient and weights, and the other's gradient, all in B's layout
                side, c, view, rec = ("a", ca, va, ga) if ca else ("b", cb, vb, gb)
                w = view.weights.get(rec.step, {}).get((rec.module, rec.position))
                if w is None or not w.has_data:
                    continue
                perm = t.perms.get(i)
                xa, xb = _arr(ga, perm), _arr(gb, None)
                x, y = (xa, xb) if side == "a" else (xb, xa)
                wv = _arr(w, perm if side == "a" else None)
                if x.shape != y.shape or wv.shape != x.shape:
                    continue
                before, after = _rel(x, y), _rel(x + term(c, wv), y)
                if after <= max(_FLOOR, _EXPLAINED * before):
                    t.set_verdict(i, True, f"the gradients differ by the {key.replace('_', ' ')} term {_TERMS[key][0]}, "
                                           f"c = {c:g}, that {side.upper()}'s optimizer adds inside its step and the other "
                                           f"side's loss holds (rel-L2 {before:.2g} -> {after:.2g} with it)")
                    explained.setdefault(key, []).append((na, nb, side))
                else:
                    refuted.add(key)
        except (DamagedRecordError, KeyError, ValueError, TypeError, OSError):
            continue
    out = []
    for key, pairs in explained.items():
        if key in refuted:
            continue
        names = {na for na, _, _ in pairs} | {nb for _, nb, _ in pairs}
        diff.settings = [s for s in diff.settings if not (s["what"] == key and set(s.get("tensors") or ()) <= names)]
        side, params = pairs[0][2].upper(), len({na for na, _, _ in pairs})
        out.append({"kind": "convention", "check": "loss_penalty", "pairs": len(pairs),
                    "text": f"{key.replace('_', ' ')} on {params} parameter(s) in {side}'s optimizer, in the other side's "
                            f"loss: the recorded gradients differ by exactly {_TERMS[key][0]} (the optimizer adds it inside "
                            f"its step, backward does not; {len(pairs)} gradient pair(s) checked), the updates agree — where "
                            "the decay lives is a convention, not a difference"})
    return out

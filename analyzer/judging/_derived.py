"""Derived state computed another way: a buffer the model derives (compared, never copied: a
rotary ``inv_freq``) that differs while the call around it agrees is another parametrization of
the same thing, not a divergence (``_boundary``'s principle for buffers: a difference that
reaches nothing downstream is not where an error is made)."""

from __future__ import annotations

import numpy as np

from ._pairtable import PairTable

__all__ = ["absorb_reparametrized"]


def absorb_reparametrized(t: PairTable, derived: set[tuple[str, str]]) -> int:
    """Derived state (compared, never copied: ``derived``, (A name, B name)) that differs while
    the nearest paired call around its module agrees at that step: the two libraries compute the
    same thing from another parametrization (a linearly scaled rotary table keeps the base
    frequencies and divides the positions on one side, divides the frequencies on the other).
    A difference that matters (another rotary base) reaches that call's outputs and stays."""
    if not len(t) or not derived:
        return 0
    step, cp, passed = t.col("step"), t.col("cp"), t.passed
    outs = np.flatnonzero(t.role_mask("output") & (cp >= 0))
    agree: dict[tuple[int, int, str], bool] = {}  # (step, side, module) -> every output of its calls agrees
    for i in outs.tolist():
        pair = t.call_pairs[int(cp[i])]
        for side, call in ((0, pair.a), (1, pair.b)):
            key = (int(step[i]), side, call.module)
            agree[key] = agree.get(key, True) and bool(passed[i])
    n = 0
    for i in np.flatnonzero(t.role_mask("buffer") & ~passed).tolist():
        ra, rb = t.record(i, 0), t.record(i, 1)
        if (ra.tensor_name, rb.tensor_name) not in derived:
            continue
        s = int(step[i])
        for side, module in ((0, ra.module), (1, rb.module)):
            around = _nearest(module, {m for (st, sd, m) in agree if st == s and sd == side})
            if around is not None and agree[(s, side, around)]:
                t.set_verdict(i, True, f"derived state computed another way: every output of {around or '<root>'} "
                                       f"around it agrees ({t.reasons.get(i, '')})")
                n += 1
                break
    return n


def _nearest(module: str, modules: set[str]) -> str | None:
    """The longest of ``modules`` that is ``module`` or an ancestor of it ('' is the root)."""
    best: str | None = None
    for m in modules:
        if (m in ("", module) or module.startswith(m + ".")) and (best is None or len(m) > len(best)):
            best = m
    return best

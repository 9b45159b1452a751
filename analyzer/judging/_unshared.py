"""Representations the two sides do not share: calls compared by no number, in and out.

One port runs Swin-V2's continuous position-bias MLP on every pair of tokens, the other on a
table of offsets and gathers from it: the two calls' inputs and outputs have shapes no layout
relates, and nothing was compared. Such a call shows no divergence; where a later pair of the
step differs in its numbers, the divergence is looked for there (``absorb_uncompared_calls``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ._pairtable import PairTable

__all__ = ["absorb_uncompared_calls"]


def absorb_uncompared_calls(t: PairTable) -> int:
    """Calls compared by no number, in and out (another representation on each side: a
    relative-position MLP run on every pair of tokens on one side and on a table of offsets on
    the other), pass where a later pair of the step differs in its numbers, when what they
    received was judged right already (the same value another call's boundary passed) or is what
    such a call just returned: a representation the two sides do not share shows no divergence,
    and the first pair whose numbers differ is where it is looked for. An input of another shape
    that differs (a BatchNorm handed the pooled map on one side, the map before pooling on the
    other) is a difference itself, and stays. Returns how many rows passed."""
    if not len(t):
        return 0
    failed, measured = t.failing, t.measured
    fwd = t.role_mask("input", "output")
    cp, step, roles = t.col("cp"), t.col("step"), t.col("role")
    out_code = t.roles.index("output")
    rows = np.flatnonzero(fwd)
    before = {int(r): int(rows[k - 1]) if k else -1 for k, r in enumerate(rows.tolist())}
    absorbed: set[int] = set()
    done = 0
    for c in dict.fromkeys(int(x) for x in cp[rows].tolist() if x >= 0):
        mine = rows[cp[rows] == c]
        if len(mine) < 2 or measured[mine].any() or not failed[mine].any():
            continue
        ins = [i for i in mine.tolist() if roles[i] != out_code]
        if not ins or not all(t.passed[i] or (before[i] >= 0 and int(cp[before[i]]) in absorbed) for i in ins):
            continue
        later = np.flatnonzero(failed & measured & (step == step[mine[0]]))
        if not len(later) or later[-1] < mine[-1]:
            continue
        absorbed.add(c)
        for i in mine.tolist():
            if failed[i]:
                t.set_verdict(i, True, "not compared: another representation on each side, in and out (shapes no "
                                       f"layout relates), and a later pair differs in its numbers ({t.reasons.get(i, '')})")
                done += 1
    return done

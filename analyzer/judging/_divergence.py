"""The first divergence: the earliest failing pair, moved to where the error was made
(``_culprit``), with how the inputs of its call compared.

A failing output comes before a failing input of a later call, unless an input already
failed before it (then the input is the earlier event).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ._culprit import Located, locate
from ._halfprint import HalfPrint, half_fingerprint

if TYPE_CHECKING:
    from ..alignment._calls import TraceView
    from ._pairtable import PairTable
    from ._pairview import PairResult

__all__ = ["Divergence", "first_divergence"]


@dataclass(eq=False)
class Divergence:
    pair: PairResult
    input_rel_l2: float | None  # worst relative L2 error of the call's inputs (None: unknown)
    inputs_failed: bool
    located: Located | None = None  # the module call that made the error, on each side (_culprit)
    half: HalfPrint | None = None  # one side's output is made of half-precision numbers only (_halfprint)

    @property
    def type_difference(self) -> tuple[str, str] | None:
        """(A's type, B's type) when the divergent call pair has different module types."""
        cp = self.pair.call_pair
        return (cp.a.module_type, cp.b.module_type) if cp is not None and cp.type_differs else None


def first_divergence(t: PairTable, va: TraceView, vb: TraceView, modules_only: bool = False) -> Divergence | None:
    """The first divergence of a finished pair table (rows in execution order), or None;
    ``modules_only``: the first among module-level records (op records, ``--ops``, left out)."""
    failed = t.failing & ~t.role_mask("op_input", "op_output", "op_grad_output") if modules_only else t.failing
    failing = np.flatnonzero(failed)
    if not len(failing):
        return None
    is_input = t.role_mask("input", "op_input")
    outs = np.flatnonzero(failed & ~is_input)
    i = int(outs[0]) if len(outs) else int(failing[0])
    # an input that already failed before the first failing output is the earlier event
    early = np.flatnonzero(failed[:i] & is_input[:i])
    first = t[int(early[0]) if len(early) else i]
    located = locate(t, first, va, vb)
    first = located.pair if located is not None else first
    cp = first.call_pair
    in_err, in_fail = None, False
    rows: np.ndarray | None = None
    if first.role.startswith("op_") and first.role != "op_input":  # the op's own inputs
        rows = t.role_mask("op_input") & (t.col("call_a") == first.a.call)
    elif cp is not None and first.role not in ("model_input", "input"):
        n = len(t.call_pairs)
        same = np.zeros(n + 1, dtype=bool)  # [-1]: no call pair
        same[:n] = np.fromiter((c.a is cp.a for c in t.call_pairs), bool, n)
        rows = same[t.col("cp")] & t.role_mask("input", "model_input")
    if rows is not None:
        errs = t.metric("rel_l2")[rows & t.has_metrics]
        in_err = float(errs.max()) if len(errs) else None
        in_fail = bool((rows & failed).any())
    half = half_fingerprint(first.a, first.b) if first.role in ("output", "op_output") else None
    return Divergence(first, in_err, in_fail, located, half)

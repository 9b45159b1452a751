"""The data each step ran on: when the model's inputs differ, the data differs, not the model.

A spec with ``inputs(step)`` feeds each side its own loader's batch every step. When the
model inputs of step k fail, nothing the model computes from them is evidence against it.
This module says so first, and what kind of difference it is, by looking at the values:
the same samples in another order (a shuffle), another step's batch of the other side (the
loaders visit the batches in another order), or other data altogether.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from padiff_trace import DamagedRecordError

from ._pairtable import PairTable

__all__ = ["data_sentences"]

_LOOK = 8  # failing input tensors of the first step examined


def _close(x: np.ndarray, y: np.ndarray) -> bool:
    if x.shape != y.shape:
        return False
    scale = float(np.max(np.abs(y))) if y.size else 0.0
    return bool(np.allclose(x, y, rtol=1e-5, atol=1e-7 * scale, equal_nan=True))


def _same_rows(x: np.ndarray, y: np.ndarray) -> bool:
    """The same samples (rows of axis 0) in another order."""
    if x.shape != y.shape or x.ndim < 1 or x.shape[0] < 2:
        return False
    fx, fy = x.reshape(x.shape[0], -1), y.reshape(y.shape[0], -1)
    sx, sy = fx[np.lexsort(fx.T[::-1])], fy[np.lexsort(fy.T[::-1])]
    return _close(sx, sy) and not _close(fx, fy)


def _read(r: Any) -> np.ndarray | None:
    if not getattr(r, "has_data", False):
        return None
    try:
        return np.asarray(r.read(), np.float64)
    except (DamagedRecordError, ValueError, TypeError, OSError):
        return None


def _kind(t: PairTable, i: int, b_by: dict[tuple[int, str], Any]) -> str:
    ra, rb = t.record(i, 0), t.record(i, 1)
    a, b = _read(ra), _read(rb)
    if a is None or b is None:
        return "other values (statistics only: not examined)"
    if _same_rows(a, b):
        return f"the same {a.shape[0]} samples in another order"
    step = int(t.col("step")[i])
    for (s, pos), other in sorted(b_by.items()):
        if pos == rb.position and s != step:
            v = _read(other)
            if v is not None and _close(a, v):
                return f"A's batch of step {step} is B's batch of step {s}"
    return "other data"


def data_sentences(t: PairTable) -> list[tuple[str, str]]:
    """(code, sentence) pairs when the model's inputs differ at some step; empty otherwise."""
    if not len(t):
        return []
    rows = np.flatnonzero(t.role_mask("model_input"))
    failing = rows[~t.passed[rows]]
    if not len(failing):
        return []
    steps = t.col("step")
    first = int(steps[failing].min())
    n_steps = len(np.unique(steps[failing]))
    b_by = {(int(steps[i]), t.record(int(i), 1).position): t.record(int(i), 1) for i in rows.tolist()}
    at = [int(i) for i in failing if steps[i] == first][:_LOOK]
    kinds = sorted({f"{t.record(i, 0).position}: {_kind(t, i, b_by)}" for i in at})
    text = (f"the model's inputs differ at {n_steps} of {len(np.unique(steps[rows]))} step(s), first at step {first} "
            f"({'; '.join(kinds)}): the data differs, not the model — everything computed from step {first} on "
            "follows from it")
    out = [("data_differs", text)]
    if any("order" in k or "batch of step" in k for k in kinds):
        out.append(("data_order", "the two loaders visit the data in another order: give both sides the same order "
                    "(one seed, shuffle off, or the same sampler indices) and record again"))
    return out

"""Additive and boolean masks that differ between two libraries but mean the same.

Applied wherever such values are compared — module inputs and outputs, op operands — not
only at module boundaries (``_boundary``):

* two additive masks built with different saturating constants (-1e4 vs the float32 minimum):
  they differ only where both are below -1000, which softmax turns into 0 alike;
* one side's mask also holding the causal triangle the other applies inside its attention;
* a boolean mask of the other polarity between paddle and torch (True = attend vs True =
  masked out);
* a 0/1 or boolean mask on one side, the additive mask made of it on the other (0 where
  attended, saturated where not), whichever polarity the 0/1 mask has (1 = attend, or 1 =
  masked out as torch's ``key_padding_mask``) and whatever axes of size one each side keeps
  for broadcasting: handed to a layer, they mean the same.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from padiff_trace import DamagedRecordError
from padiff_trace.arrays import is_number, squeezed

from ._pairtable import PairTable

__all__ = ["MASK_RELATIONS", "absorb_saturated", "keep_vs_additive", "saturated"]

_READ_LIMIT = 1 << 22  # elements: masks are tested up to 4M elements


def _floating(t: PairTable, i: int) -> bool:
    return all(_is_float(t, i, k) for k in (0, 1))


def _is_float(t: PairTable, i: int, k: int) -> bool:
    return is_number(getattr(t.record(i, k), "dtype", ""))


_SATURATED = -1e3  # exp(-1000) underflows to 0 in float32 and float64: after softmax, any such value is 0


def saturated(a: np.ndarray, b: np.ndarray) -> str | None:
    """The same additive mask built with two saturating constants (-1e4 vs the float32 minimum):
    they differ beyond rounding only where both are below -1000 (anything added to them
    vanishes after softmax); elsewhere they agree to fp32 rounding (mean relative error < 1e-4)."""
    sat = (a <= _SATURATED) & (b <= _SATURATED)
    if not sat.any():
        return None
    rest = ~sat
    if rest.any():
        err = float(np.abs(a[rest] - b[rest]).mean())
        if err > 1e-4 * max(float(np.abs(b[rest]).mean()), 1e-30):
            return None
    diff = sat & (a != b)
    if not diff.any():
        return None
    return (f"a saturating mask constant ({a[diff][0]:.3g} vs {b[diff][0]:.3g}) at the same {int(sat.sum())} "
            "positions, the rest equal to rounding")


def _causal(a: np.ndarray, b: np.ndarray) -> str | None:
    """One side's additive mask holds the causal triangle too (HF merges the causal mask into
    the attention mask; other libraries apply it inside the attention): the two differ exactly
    on the strict upper triangle of the last two (square) axes, saturated there on one side,
    and agree elsewhere (up to saturating constants)."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.shape != b.shape:
        return None
    n = a.shape[-1]
    upper = np.broadcast_to(np.triu(np.ones((n, n), bool), 1), a.shape)
    sa, sb = a <= _SATURATED, b <= _SATURATED
    for x_sat, y_sat, side in ((sa, sb, "B"), (sb, sa, "A")):
        extra = y_sat & ~x_sat
        if not extra.any() or (extra & ~upper).any() or not y_sat[upper].all() or (x_sat & ~y_sat).any():
            continue
        rest = ~(sa | sb)
        if rest.any() and float(np.abs(a[rest] - b[rest]).mean()) > 1e-4 * max(float(np.abs(b[rest]).mean()), 1e-30):
            continue
        return f"side {side}'s mask also holds the causal triangle, which the other side applies inside the attention"
    return None


def keep_vs_additive(a: np.ndarray, b: np.ndarray) -> str | None:
    """One side hands over a 0/1 mask, the other the additive mask made of it: saturated (below
    -1000) exactly where the 0/1 mask says masked out, 0 elsewhere. The 0/1 mask may say 1 =
    attend (0 where it is 1) or 1 = masked out (saturated where it is 1: torch's
    ``key_padding_mask``); with no padding the first is all ones against all zeros, the second
    all zeros against all zeros. Tested only on arguments (``absorb_saturated``)."""
    for keep, add, side in ((a, b, "A"), (b, a, "B")):
        ones = keep == 1
        if not (ones | (keep == 0)).all():
            continue
        for attend, said in ((ones, "of positions to attend"), (~ones, "of positions masked out")):
            if (add[attend] == 0).all() and (add[~attend] <= _SATURATED).all():
                return f"side {side} hands over the 0/1 mask {said}, the other the additive mask made of it"
    return None


def _aligned(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two masks in one shape: a mask kept with fewer axes on one side, the same values (``[B, S]``
    against ``[B, 1, 1, S]``: the layer expands it), taken as they are; otherwise broadcast
    (``[B, 1, 1, S]`` against ``[B, 1, S, S]``; ``[B, 1, S, 1]`` against ``[B, 1, 1, S]`` is a mask
    over the other axis); ValueError where neither fits."""
    if a.ndim != b.ndim and a.size == b.size and squeezed(a.shape) == squeezed(b.shape):
        return a.reshape(b.shape), b
    shape = np.broadcast_shapes(a.shape, b.shape)
    return np.broadcast_to(a, shape), np.broadcast_to(b, shape)


# tests of additive masks that differ but mean the same: applied to module inputs and outputs
# and op operands (not only at boundaries): (a, b) broadcast to one shape -> sentence or None
MASK_RELATIONS: tuple[Callable[[np.ndarray, np.ndarray], str | None], ...] = (saturated, _causal)


def _polarity(t: PairTable, i: int) -> int:
    """A boolean mask of the other polarity between two frameworks (paddle's attention masks
    say True = attend, torch's True = masked out): A == not B on every element passes, named."""
    try:
        ra, rb = t.record(i, 0), t.record(i, 1)
        # (axes of size one aside: ``[b, s]`` against ``[b, 1, 1, s]`` kept for broadcasting)
        if (ra.dtype != "bool" or rb.dtype != "bool" or squeezed(tuple(ra.shape)) != squeezed(tuple(rb.shape))
                or not (ra.has_data and rb.has_data)):
            return 0
        if t.va.framework == t.vb.framework or ra.numel > _READ_LIMIT:
            return 0
        a, b = ra.read(), rb.read().reshape(ra.shape)
    except (DamagedRecordError, KeyError, ValueError, TypeError, OSError):
        return 0
    if a.size == 0 or not np.array_equal(a, ~b) or a.all() or (~a).all():
        return 0
    t.set_verdict(i, True, f"convention: a boolean mask of the other polarity (A = not B): {t.va.framework} and "
                           f"{t.vb.framework} mean opposite things by True ({t.reasons.get(i, '')})")
    return 1


def absorb_saturated(t: PairTable) -> int:
    """Module inputs and outputs, op operands and results (``--ops``) that differ only where
    both sides hold a saturating mask constant (-1e4 vs the float32 minimum, at the same
    positions) pass: an additive mask, and what adds it, is not a divergence; so do arguments
    that are a 0/1 mask on one side and the additive mask made of it on the other. Returns how
    many passed."""
    if not len(t):
        return 0
    rows = np.flatnonzero(t.role_mask("model_input", "input", "output", "op_input", "op_output") & ~t.passed & t.measured)
    arguments = t.role_mask("input", "op_input")
    n = 0
    for i in rows.tolist():
        mixed = _is_float(t, i, 0) != _is_float(t, i, 1)  # a float mask against a 0/1 or boolean one
        if not _floating(t, i) and not (mixed and arguments[i]):
            n += _polarity(t, i)
            continue
        try:
            ra, rb = t.record(i, 0), t.record(i, 1)
            if max(ra.numel, rb.numel) > _READ_LIMIT or not (ra.has_data and rb.has_data):
                continue
            a = ra.read()
            perm = t.perms.get(i)
            if perm is not None and not mixed:
                a = np.transpose(a, perm)
            b = rb.read()
            a, b = _aligned(a, b)
            a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
            found = None if mixed else saturated(a64.ravel(), b64.ravel()) or _causal(a64, b64)
            if not found and arguments[i]:
                found = keep_vs_additive(a64, b64)
        except (DamagedRecordError, KeyError, ValueError, TypeError, OSError):
            continue
        if found:
            t.set_verdict(i, True, f"boundary difference: {found} ({t.reasons.get(i, '')})")
            n += 1
    return n



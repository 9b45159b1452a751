"""What relates two values that differ across a module boundary (``_boundary``): a constant
scale, an activation applied on one side, a saturated mask constant (``BOUNDARY_RELATIONS``),
one side's value a window of the other's or the other's concatenated after the module's input.
Each relation is confirmed on the recorded values, to ``RELATION_REL``."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import numpy as np

from padiff_trace import DamagedRecordError

from ._masks import saturated as _saturated
from ._pairtable import PairTable

__all__ = ["BOUNDARY_RELATIONS", "FUSED_ACTIVATIONS", "fused_side", "RELATION_REL", "agrees", "concat_relation", "conventional", "order_of", "order_relation", "order_text", "relation", "carries", "residual_relation", "window_fit", "window_relation"]

_SCALE_SAYS = re.compile(r"A = (\S+) x B: a constant scale")
_READ_LIMIT = 1 << 22  # elements: relations are tested on tensors up to 4M elements (larger: not named)
RELATION_REL = 1e-4  # a relation holds when it explains the two values to this relative L2 error


def _scale(a: np.ndarray, b: np.ndarray) -> str | None:
    """a == c * b for one constant c (a scale moved across the boundary)."""
    nb = float(np.dot(b, b))
    if nb == 0.0:
        return None
    c = float(np.dot(a, b)) / nb
    if not np.isfinite(c) or abs(c) < 1e-12:
        return None
    resid = float(np.linalg.norm(a - c * b)) / max(float(np.linalg.norm(a)), 1e-30)
    # a scale moved across a boundary is a real factor (sqrt(d), 1/sqrt(d), 0.5 ...): a factor
    # within a hair of 1 is a small difference, not a scale
    if abs(c - 1.0) < 1e-3 or resid >= min(1e-4, 0.01 * abs(c - 1.0)):
        return None
    return f"A = {c:.6g} x B: a constant scale applied inside the module on one side, after it on the other"


def agrees(x: np.ndarray, y: np.ndarray, rel: float = RELATION_REL) -> bool:
    """``x`` is ``y`` to within ``rel`` (``RELATION_REL``) in relative L2: fp32 rounding (~1e-5 in
    deep models) passes, and so do a few elements near a kink that rounding put on the other
    side, which an element-wise test refuses."""
    ny = float(np.linalg.norm(y))
    return float(np.linalg.norm(x - y)) <= rel * ny if ny > 0 else not np.any(x)


def fused_side(a: np.ndarray, b: np.ndarray, f: Callable[[np.ndarray], np.ndarray]) -> int | None:
    """0 where ``a`` is ``f(b)`` (the activation ``f`` fused into the module on side A), 1 where
    ``b`` is ``f(a)``, None where neither holds or the two agree without it."""
    for x, y, side in ((a, b, 0), (b, a, 1)):
        if agrees(x, f(y)) and not agrees(x, y):
            return side
    return None


def _activation(name: str, f: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray, np.ndarray], str | None]:
    def test(a: np.ndarray, b: np.ndarray) -> str | None:
        side = fused_side(a, b, f)
        if side is None:
            return None
        return f"{'AB'[side]} = {name}(the other side): the activation is fused into this module on side {'AB'[side]}, a module of its own on the other"

    return test


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(x, -60, 60))))


# the activations a library fuses into the module before them (BatchNorm ``act="relu"``), by
# canonical type name: float64 -> float64, element-wise
FUSED_ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "relu": lambda x: np.maximum(x, 0.0),
    "relu6": lambda x: np.clip(x, 0.0, 6.0),
    "sigmoid": _sigmoid,
    "tanh": np.tanh,
    "hardswish": lambda x: x * np.clip(x + 3.0, 0.0, 6.0) / 6.0,
    "silu": lambda x: x * _sigmoid(x),
}

# name -> test(a, b) -> sentence or None; a and b are float64, flattened, same length
BOUNDARY_RELATIONS: dict[str, Callable[[np.ndarray, np.ndarray], str | None]] = {
    "saturated mask": _saturated,
    "scale": _scale,
    **{name: _activation(name, f) for name, f in FUSED_ACTIVATIONS.items()},
}


def _one_axis_apart(t: PairTable, i: int) -> tuple[np.ndarray, np.ndarray, str, int] | None:
    """The two values of row ``i`` (float64) when their shapes differ along exactly one axis: the
    larger, the smaller, which side holds the larger ("A" or "B"), the axis; else None."""
    try:
        ra, rb = t.record(i, 0), t.record(i, 1)
        if not (ra.is_tensor and rb.is_tensor and ra.has_data and rb.has_data) or len(ra.shape) != len(rb.shape):
            return None
        diff = [k for k, (x, y) in enumerate(zip(ra.shape, rb.shape)) if x != y]
        if len(diff) != 1 or max(ra.numel, rb.numel) > _READ_LIMIT:
            return None
        k = diff[0]
        a, b = np.asarray(ra.read(), np.float64), np.asarray(rb.read(), np.float64)
    except (DamagedRecordError, KeyError, ValueError, TypeError, OSError):
        return None
    return (a, b, "A", k) if a.shape[k] > b.shape[k] else (b, a, "B", k)


def concat_relation(t: PairTable, i: int) -> str | None:
    """One side's output is the other's concatenated after what the module received (a dense
    layer returning concat(input, new) on one side, only new on the other, the block joining
    them): the smaller is the trailing block of the larger along one axis."""
    got = _one_axis_apart(t, i)
    if got is None:
        return None
    big, small, side, k = got
    tail = np.take(big, range(big.shape[k] - small.shape[k], big.shape[k]), axis=k)
    if not agrees(tail, small):
        return None
    return (f"{side}'s output is the other's concatenated after the module's input along axis {k}: the "
            "concatenation is inside this module on one side, after it on the other")


def resize_relation(t: PairTable, i: int) -> str | None:
    """One side's output is the other's resized by nearest-neighbour repetition, by an integer
    factor along each axis whose size differs (an upsampling layer at the end of the module on
    one side, called just after it on the other: HRNet's fuse branch)."""
    try:
        ra, rb = t.record(i, 0), t.record(i, 1)
        if not (ra.is_tensor and rb.is_tensor and ra.has_data and rb.has_data) or len(ra.shape) != len(rb.shape):
            return None
        diff = [k for k, (x, y) in enumerate(zip(ra.shape, rb.shape)) if x != y]
        if not diff or max(ra.numel, rb.numel) > _READ_LIMIT:
            return None
        a, b = np.asarray(ra.read(), np.float64), np.asarray(rb.read(), np.float64)
    except (DamagedRecordError, KeyError, ValueError, TypeError, OSError):
        return None
    big, small, side = (a, b, "A") if a.size > b.size else (b, a, "B")
    factors = {k: big.shape[k] // small.shape[k] for k in diff}
    if any(small.shape[k] == 0 or big.shape[k] != f * small.shape[k] or f < 2 for k, f in factors.items()):
        return None
    grown = small
    for k, f in factors.items():
        grown = np.repeat(grown, f, axis=k)
    if not agrees(grown, big):
        return None
    by = ", ".join(f"x{f} along axis {k}" for k, f in factors.items())
    return (f"{side}'s output is the other's resized by nearest neighbour ({by}): the resize is inside this module "
            "on one side, after it on the other")


_ORDER_WORK = 1 << 26  # slice comparisons times their size: larger orders are not looked for
_ORDER_SLICES = 256  # an axis longer than this is not searched slice by slice


def order_relation(t: PairTable, i: int) -> str | None:
    """The two values hold the same slices along one axis (not the last) in another order: a
    class token concatenated first on one side and last on the other, tokens gathered in another
    order. Each of B's slices is found once among A's."""
    try:
        ra, rb = t.record(i, 0), t.record(i, 1)
        if (not (ra.is_tensor and rb.is_tensor and ra.has_data and rb.has_data) or tuple(ra.shape) != tuple(rb.shape)
                or len(ra.shape) < 2 or t.perms.get(i) is not None or ra.numel > _READ_LIMIT):
            return None
        a, b = np.asarray(ra.read(), np.float64), np.asarray(rb.read(), np.float64)
    except (DamagedRecordError, KeyError, ValueError, TypeError, OSError):
        return None
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return None
    found = order_of(a, b)
    if found is None:
        return None
    return (f"A's {ra.name} holds B's slices along axis {found[0]} in another order ({order_text(found[1])}): the "
            "same values arranged otherwise on each side")


def order_of(a: np.ndarray, b: np.ndarray) -> tuple[int, np.ndarray] | None:
    """(axis, order) with ``b == take(a, order, axis)`` to rounding (``agrees``) for one axis
    that is not the last (features), the order not the identity; None when none is found. Each
    of B's slices is found once among A's."""
    if a.shape != b.shape or a.ndim < 2 or agrees(a, b):
        return None
    for k in range(a.ndim - 1):
        n = a.shape[k]
        if not 2 <= n <= _ORDER_SLICES or n * a.size > _ORDER_WORK:
            continue
        xa, xb = np.moveaxis(a, k, 0).reshape(n, -1), np.moveaxis(b, k, 0).reshape(n, -1)
        # the slices' sums, sorted, must agree before any slice is looked for (a quick refusal)
        if not agrees(np.sort(np.abs(xa).sum(axis=1)), np.sort(np.abs(xb).sum(axis=1))):
            continue
        order: list[int] = []
        free = list(range(n))
        for j in range(n):
            hit = next((m for m in free if agrees(xa[m], xb[j])), None)
            if hit is None:
                break
            order.append(hit)
            free.remove(hit)
        if len(order) == n and order != list(range(n)):
            return k, np.asarray(order)
    return None


def order_text(order: np.ndarray) -> str:
    """An order of slices in words: a roll, or where each of B's slices comes from."""
    n = len(order)
    shift = int(order[0])
    if all(int(order[j]) == (j + shift) % n for j in range(n)):
        return f"rolled by {shift}"
    return "B's slice j is A's " + ", ".join(str(int(m)) for m in order[:8]) + (" ..." if n > 8 else "")


def window_fit(t: PairTable, i: int) -> tuple[str, bool] | None:
    """One side's value is a contiguous window of the other's along one axis (a causal
    convolution padded inside the module on one side and trimmed after it on the other): where
    the smaller sits in the larger, and whether only zeros lie around it (padding); or None."""
    got = _one_axis_apart(t, i)
    if got is None:
        return None
    big, small, side, k = got
    n = small.shape[k]
    for o in range(big.shape[k] - n + 1):
        if agrees(np.take(big, range(o, o + n), axis=k), small):
            zeros = not np.any(np.delete(big, range(o, o + n), axis=k))
            around = "zeros" if zeros else "other values"
            return f"{side}'s {t.record(i, 0 if side == 'A' else 1).name} holds the other's at [{o}:{o + n}] of axis {k} ({around} around it)", zeros
    return None


def window_relation(t: PairTable, i: int) -> str | None:
    """``window_fit``'s sentence."""
    got = window_fit(t, i)
    return got[0] if got else None


def relation(t: PairTable, i: int) -> str:
    """What relates the two values of row ``i``, or a plain sentence."""
    plain = "the next comparable records agree: the difference does not reach anything downstream"
    joined = concat_relation(t, i) or resize_relation(t, i) or order_relation(t, i)
    if joined:
        return f"{joined}; {plain}"
    try:
        ra, rb = t.record(i, 0), t.record(i, 1)
        if not (ra.is_tensor and rb.is_tensor) or ra.numel != rb.numel or not ra.numel or ra.numel > _READ_LIMIT:
            return plain
        if not (ra.has_data and rb.has_data):  # statistics only
            return plain
        perm = t.perms.get(i)
        a = ra.read()
        if perm is not None:
            a = np.transpose(a, perm)
        a64 = np.asarray(a, np.float64).ravel()
        b64 = np.asarray(rb.read(), np.float64).ravel()
    except (DamagedRecordError, KeyError, ValueError, TypeError, OSError):
        return plain
    if not (np.isfinite(a64).all() and np.isfinite(b64).all()):
        return plain
    for test in BOUNDARY_RELATIONS.values():
        found = test(a64, b64)
        if found:
            return f"{found}; {plain}"
    return plain


def residual_relation(t: PairTable, i: int) -> tuple[str, np.ndarray] | None:
    """Output row ``i`` of a call pair whose two values differ by exactly one of the call's inputs
    (each side's own, same element count): the residual added inside the module on one side and
    by its caller on the other. The sentence and that difference (B - A, flat), or None."""
    cp = t.call_pairs[int(t.col("cp")[i])] if int(t.col("cp")[i]) >= 0 else None
    if cp is None:
        return None
    try:
        ra, rb = t.record(i, 0), t.record(i, 1)
        if (not (ra.is_tensor and rb.is_tensor) or ra.numel != rb.numel or not ra.numel or ra.numel > _READ_LIMIT
                or not (ra.has_data and rb.has_data)):
            return None
        a = np.asarray(ra.read(), np.float64).ravel()
        b = np.asarray(rb.read(), np.float64).ravel()
        for side, call, diff in (("B", cp.b, b - a), ("A", cp.a, a - b)):
            for x in call.tensor_inputs():
                if x.numel != ra.numel or not x.has_data or not str(x.dtype).startswith(("float", "bfloat")):
                    continue
                v = np.asarray(x.read(), np.float64).ravel()
                if np.any(v) and agrees(diff, v):
                    return (f"{side} = the other side + its input {x.position}: the residual is added inside the "
                            f"module on side {side}, by its caller on the other"), b - a
    except (DamagedRecordError, KeyError, ValueError, TypeError, OSError):
        return None
    return None


def carries(t: PairTable, i: int, diff: np.ndarray) -> bool:
    """Whether row ``i``'s two values differ by ``diff`` (B - A, flat) as they are: a difference
    handed on unchanged (a residual only one side adds, which the other never adds after)."""
    try:
        ra, rb = t.record(i, 0), t.record(i, 1)
        if not (ra.is_tensor and rb.is_tensor and ra.has_data and rb.has_data) or ra.numel != rb.numel or ra.numel != diff.size:
            return False
        a = np.asarray(ra.read(), np.float64)
        perm = t.perms.get(i)
        if perm is not None:
            a = np.transpose(a, perm)
        return agrees(np.asarray(rb.read(), np.float64).ravel() - a.ravel(), diff)
    except (DamagedRecordError, KeyError, ValueError, TypeError, OSError):
        return False


def conventional(t: PairTable, i: int, said: str) -> bool:
    """A relation two libraries use by convention, whatever follows: a scale of sqrt(width) or
    its inverse on the output (embeddings scaled by sqrt(d_model) inside or after the module)."""
    m = _SCALE_SAYS.match(said)
    if m is None:
        return False
    width = t.record(i, 1).shape[-1] if t.record(i, 1).shape else 0
    if width < 2:
        return False
    c = abs(float(m.group(1)))
    root = math.sqrt(width)
    return any(abs(c - x) <= 1e-4 * x for x in (root, 1.0 / root))

"""A norm's scale kept with an offset of one: ``w`` on one side, ``1 + w`` on the other.

Gemma's RMSNorm scales by ``1 + w`` and keeps ``w`` (initialised to zeros); a port written with
a framework's own RMSNorm or LayerNorm scales by ``w`` and keeps ``1 + w`` (initialised to
ones). Both compute the same function when one side holds the other's values plus one; copied
as they are, the first norm differs by a whole unit of its input.

Names and shapes cannot tell (``weight`` and ``weight``, ``[D]`` and ``[D]``). Two value tests can:

- **At the transfer** (``own_offset``): the model receiving the weights keeps its own in its
  own convention. Where its own vector is centred one unit away from the trace's (zeros against
  ones, or trained values around 0 against values around 1), the values it receives are the
  trace's plus (or minus) one. Only the scale of a norm (an owning module whose class name says
  ``norm`` on either side, not a batch norm; a trainable tensor, not its bias nor its running
  statistics) is read so: elsewhere a vector centred at 1 against one
  at 0 is another initialisation of the same quantity (a layer scale), not another convention.
- **Between two traces** (``traced_offset``): a pair whose recorded values differ by exactly one
  everywhere was written so by a transfer (two independent recordings never are).

A mapping file says it with ``"torch_offset": 1`` (``*_offset``: that side's values are the
other's plus it). The pair carries it (``WeightPair.offset``: B's values are A's plus it); a
comparison sets A's weights plus the offset against B's, the gradients as they are.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

import numpy as np

from ._weightmap import TensorInfo, WeightMap, WeightPair

__all__ = ["OFFSETS", "mark_offsets", "offset_note", "own_offset", "scale_of_a_norm", "traced_offset"]

OFFSETS = (1.0, -1.0)  # what a scale kept as ``1 + w`` differs by from one kept as ``w``
CENTRE_SLACK = 0.25  # how far the two centres' distance may be from one unit
OWNER_WORDS = frozenset({"norm"})  # a word of the owning class's name that says it normalises
# batch statistics' norms: no library keeps their scale as 1 + w, and a zero-initialised scale (a
# residual branch's last BatchNorm) against ones is another initialisation, not another convention
BATCH_WORDS = frozenset({"batch"})
SHIFT_WORDS = frozenset({"bias", "beta", "shift", "b"})  # local names of a norm's additive part, never offset
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _words(name: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(name)}


def scale_of_a_norm(local_a: str, local_b: str, type_a: str, type_b: str) -> bool:
    """Whether a pair of vectors is the scale of a norm: a module class whose name has the word
    ``norm`` on either side (``GemmaRMSNorm``, ``LayerNorm``, ``T5LayerNorm``), and a local name that
    is not the norm's shift."""
    words = _words(type_a) | _words(type_b)
    if not (OWNER_WORDS & words) or (BATCH_WORDS & words):
        return False
    return not ({local_a.lower(), local_b.lower()} & SHIFT_WORDS)


def own_offset(received: np.ndarray, own: np.ndarray) -> float:
    """What the model's ``own`` vector (its own convention) says the ``received`` values are to be
    shifted by: +1 or -1 where their centres (medians) are one unit apart, within
    ``CENTRE_SLACK``; 0 otherwise (also for fewer than two elements or non-finite values)."""
    received, own = np.squeeze(received), np.squeeze(own)
    if received.ndim != 1 or received.size < 2 or received.shape != own.shape or not (np.all(np.isfinite(received)) and np.all(np.isfinite(own))):
        return 0.0
    gap = float(np.median(own.astype(np.float64))) - float(np.median(received.astype(np.float64)))
    if abs(gap) < 1.0 - CENTRE_SLACK:
        return 0.0
    for s in OFFSETS:
        if abs(gap - s) <= CENTRE_SLACK:
            return s
    return 0.0


def traced_offset(a: np.ndarray, b: np.ndarray) -> float:
    """+1 or -1 where ``b`` is ``a`` plus that to the float rounding of the values, else 0."""
    a, b = np.squeeze(a), np.squeeze(b)
    if a.ndim != 1 or a.size < 2 or a.shape != b.shape:
        return 0.0
    x, y = a.astype(np.float64), b.astype(np.float64)
    scale = np.maximum(np.abs(x), np.abs(y)) + 1.0
    for s in OFFSETS:
        if np.all(np.abs(y - x - s) <= 4 * np.finfo(np.float32).eps * scale):
            return s
    return 0.0


def mark_offsets(wm: WeightMap, a: Sequence[TensorInfo], b: Sequence[TensorInfo],
                 decide: Callable[[WeightPair], float]) -> None:
    """Give each whole pair of trainable vectors that is the scale of a norm (``scale_of_a_norm``;
    ``a``, ``b``: each side's tensors; running statistics are buffers, never offset) and not pinned
    by a mapping file the offset ``decide`` finds (``own_offset`` at a transfer,
    ``traced_offset`` between traces)."""
    types_a = {t.module: t.module_type for t in a}
    types_b = {t.module: t.module_type for t in b}
    trained_a, trained_b = {t.name for t in a if t.trainable}, {t.name for t in b if t.trainable}
    for i, p in enumerate(wm.pairs):
        if (p.offset or p.how == "mapping" or not p.transfer or p.a_part is not None or p.b_part is not None
                or p.a not in trained_a or p.b not in trained_b):
            continue
        ma, _, la = p.a.rpartition(".")
        mb, _, lb = p.b.rpartition(".")
        if not scale_of_a_norm(la, lb, types_a.get(ma, ""), types_b.get(mb, "")):
            continue
        s = decide(p)
        if s:
            wm.pairs[i] = dataclasses.replace(p, offset=s)


def offset_note(wm: WeightMap | None) -> str:
    """One sentence saying which pairs carry an offset (a convention the comparison accounts
    for), or "" where none does."""
    pairs = [p for p in wm.pairs if p.offset] if wm is not None else []
    if not pairs:
        return ""
    shown = ", ".join(f"{p.b} = {p.a} {p.offset:+g}" for p in pairs[:2]) + (f" and {len(pairs) - 2} more" if len(pairs) > 2 else "")
    return (f"norm scales kept one unit apart: {shown} (one side scales by 1 + w and keeps w, the other scales by "
            "its weight and keeps 1 + w; the receiving model's own values were centred one unit from the trace's): "
            "a convention, compared as such")

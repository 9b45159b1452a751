"""Replay the model inputs recorded in another trace into a spec's own inputs (``--inputs-from``).

A leaf both libraries take in the same form gets the recorded value; one they take in different
forms (another shape, or integer data in another convention) keeps the spec's own, said in the log.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from padiff_trace import Kind, UserError, open_trace

from ._adapter import Adapter
from ._hostcopy import host_array
from ._nest import flatten_call, rebuild

__all__ = ["another_convention", "replay_inputs"]

logger = logging.getLogger(__name__)

SAME_DATA = 0.75  # integer inputs agreeing in this share of elements (as they are, or shifted) are the same data
MIN_DATA = 8  # fewer elements say nothing either way: replayed


def another_convention(recorded: np.ndarray, own: np.ndarray | None) -> str:
    """Why the spec's own integer input is the recorded one in another convention, or "".

    Integer inputs are data, not random draws: two specs that differ in one are two libraries'
    conventions for the same data (labels the model shifts itself vs labels the caller
    shifted, -100 vs the pad id at ignored positions), and replaying one side's value into the
    other would feed a model what it does not expect. The test: at least ``SAME_DATA`` of the
    elements agree as they are, or shifted by one along the last axis. Independent draws (each
    framework's own ``randint``) agree in far fewer and are replayed, and so are placeholders
    (one value throughout: a spec that leaves its inputs to ``--inputs-from``) and boolean
    masks."""
    if own is None or own.shape != recorded.shape or own.size < MIN_DATA:
        return ""
    if recorded.dtype.kind not in "iu" or own.dtype.kind not in "iu" or np.array_equal(own, recorded):
        return ""
    if own.min() == own.max():  # a placeholder
        return ""
    agree = float(np.mean(own == recorded))
    if agree >= SAME_DATA:
        return f"the same integer data in another convention ({agree:.0%} of the elements agree)"
    if recorded.ndim >= 1 and recorded.shape[-1] > 1:
        for x, y in ((recorded[..., :-1], own[..., 1:]), (recorded[..., 1:], own[..., :-1])):  # either way
            if float(np.mean(x == y)) >= SAME_DATA:
                return "the same integer data shifted by one position (labels the model shifts itself on one side)"
    return ""


def replay_inputs(
    adapter: Adapter, args: tuple[Any, ...], kwargs: dict[str, Any], trace_path: str | os.PathLike[str]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Replace the tensor leaves of (args, kwargs) with the model inputs recorded at step 0.

    Leaves are matched by position (``args[0]``, ``kwargs["mask"]``) when both sides
    have the same positions, otherwise by order. Dtype and shape come from the trace;
    device and requires-grad from the local tensor. A leaf the two libraries take in
    different forms keeps the spec's value, with a warning: its recorded shape differs (a 0/1
    mask [B, S] here, an additive [B, 1, 1, S] there), or it is integer data that holds the
    same values in another arrangement (``another_convention``: labels the model shifts itself
    against labels shifted by the caller, another pad id) rather than an independent draw.
    """
    with open_trace(trace_path) as tr:
        recs = [r for r in tr.select(kind=Kind.MODEL_INPUT, step=0) if r.is_tensor and r.device != "python"]
        if recs:
            first_call = recs[0].call
            recs = [r for r in recs if r.call == first_call]
        local = [(pos, leaf) for pos, leaf in flatten_call(args, kwargs, adapter.is_tensor) if adapter.is_tensor(leaf)]
        if len(recs) != len(local):
            pairs = _inputs_by_evidence(recs, [(pos, tuple(leaf.shape)) for pos, leaf in local])
            taken = {id(rec) for _, rec in pairs}
            for rec in recs:
                if id(rec) not in taken:
                    logger.warning(
                        "%s: recorded input %s %s has no counterpart among the spec's inputs() (%s): a value this "
                        "model holds itself (a buffer, a constant), or an input it does not take",
                        trace_path, rec.position, list(rec.shape), ", ".join(p for p, _ in local) or "-")
            order = [rec for _, rec in pairs]
            local = [local[i] for i, _ in pairs]
        elif {r.position for r in recs} == {p for p, _ in local}:
            by_pos = {r.position: r for r in recs}
            order = [by_pos[p] for p, _ in local]
        else:
            order = recs
        replace: dict[str, Any] = {}
        for (pos, leaf), rec in zip(local, order):
            if tuple(rec.shape) != tuple(leaf.shape):
                # the two libraries take this argument in different forms (a 0/1 mask [B, S]
                # here, an additive [B, 1, 1, S] there): the spec's own value is kept, and the
                # comparison shows the model inputs as they were
                logger.warning(
                    "%s: recorded input %s has shape %s, the spec's %s has %s: the spec's own value is used",
                    trace_path, rec.position, list(rec.shape), pos, list(leaf.shape),
                )
                continue
            if not rec.has_data:
                raise UserError(f"{trace_path}: input {rec.position} was recorded without data (stats-only)")
            recorded = rec.read()
            why = another_convention(recorded, host_array(adapter, leaf))
            if why:
                logger.warning("%s: recorded input %s and the spec's %s are %s: the spec's own value is used",
                               trace_path, rec.position, pos, why)
                continue
            replace[pos] = adapter.tensor_like(recorded, rec.dtype, leaf)
    new_args = rebuild(tuple(args), "args", replace, adapter.is_tensor)
    new_kwargs = {k: rebuild(v, f'kwargs["{k}"]', replace, adapter.is_tensor, 1) for k, v in kwargs.items()}
    return tuple(new_args), new_kwargs



def _inputs_by_evidence(recs: Sequence[Any], local: Sequence[tuple[str, tuple[int, ...]]]) -> list[tuple[int, Any]]:
    """The spec's inputs (index into ``local``: position and shape) paired with recorded ones
    where the two models take a different number of tensors (a normalised adjacency, a mask
    table one model takes as an input and the other holds as a buffer): the same position and
    shape first, then the same shape in order. A spec input with no recorded one keeps its own
    value (``replay_inputs`` then skips it)."""
    free = list(recs)
    out: dict[int, Any] = {}
    for i, (pos, shape) in enumerate(local):
        rec = next((r for r in free if r.position == pos and tuple(r.shape) == shape), None)
        if rec is not None:
            out[i] = rec
            free.remove(rec)
    for i, (_, shape) in enumerate(local):
        if i in out:
            continue
        rec = next((r for r in free if tuple(r.shape) == shape), None)
        if rec is not None:
            out[i] = rec
            free.remove(rec)
    return sorted(out.items())

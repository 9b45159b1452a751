"""A weight's layout as its own recorded call shows it, for module classes the tables do not know.

A class of ``LAYOUTS``/``LIBRARY_TYPES`` has a known layout. A class nobody listed (paddlenlp's
``Linear3D``, a user's projection) holding a 2-D ``weight`` may store it ``[in, out]`` (used as
``x @ W``) or ``[out, in]`` (``x @ W.T``), and for a square matrix the shape cannot tell. Its
first recorded call can: the output holds the values of ``x @ W + b`` in one orientation only,
in whatever arrangement the module returns them (heads split, axes moved), so the sorted values
are compared. Where exactly one orientation matches, that is the tensor's stored layout.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..trace._schema import Kind
from ._match import TypeResolver
from ._weightsides import WeightSide

__all__ = ["layout_key", "observed_layouts", "with_observed_layouts"]

logger = logging.getLogger(__name__)

MAX_ELEMENTS = 1 << 22  # a larger call is not read for this
AGREE = 1e-4  # sorted values within this fraction of their largest magnitude: the same numbers


def layout_key(module_type: str, local: str) -> str:
    """The key of a class's tensor in ``WeightSide.layouts``: a layout belongs to the class."""
    return f"{module_type}.{local}"


def observed_layouts(trace: Any, side: WeightSide) -> dict[str, tuple[int, ...]]:
    """``layout_key`` of a class's tensor -> ``(1, 0)`` (stored ``[in, out]``, to be transposed into the canonical
    ``[out, in]``) for the 2-D weights of unknown module classes whose first call at the first
    step shows it; a weight its call shows stored ``[out, in]``, or shows nothing about, is not
    listed (stored is canonical, the default)."""
    res = TypeResolver(side.framework, side.classes)
    wanted = {t.module: t for t in side.tensors
              if t.local == "weight" and len(t.shape) == 2 and t.is_param and t.module
              and not res.resolve(t.module_type).known}
    if not wanted:
        return {}
    bias = {t.module: t for t in side.tensors if t.local == "bias" and t.module in wanted}
    steps = trace.steps()
    if not steps:
        return {}
    calls: dict[str, dict[str, list[Any]]] = {}
    for r in trace.select(kind=[Kind.MODULE_INPUT, Kind.MODULE_OUTPUT, Kind.PARAM], step=steps[0]):
        if r.module in wanted and (r.kind == Kind.PARAM or r.call_index == 0):
            calls.setdefault(r.module, {}).setdefault(Kind(r.kind).name, []).append(r)
    out: dict[str, tuple[int, ...]] = {}
    for module, t in wanted.items():
        key = layout_key(t.module_type, t.local)
        if key in out:
            continue
        found = _orientation(trace, calls.get(module, {}), t.name, bias.get(module))
        if found is not None:
            out[key] = found
            logger.info("%s (class %s) stores its weight [in, out], as its recorded call shows", t.name, t.module_type)
    return out


def with_observed_layouts(trace: Any, side: WeightSide) -> WeightSide:
    """``side`` (built from ``trace``'s weights) with the layouts its recorded calls show."""
    found = observed_layouts(trace, side)
    return dataclasses.replace(side, layouts={**side.layouts, **found}) if found else side


def _orientation(trace: Any, recs: dict[str, list[Any]], name: str, bias: Any) -> tuple[int, ...] | None:
    params = {r.tensor_name: r for r in recs.get("PARAM", ())}
    w_rec = params.get(name)
    if w_rec is None or not w_rec.has_data:
        return None
    w = trace.read(w_rec.seq).astype(np.float64)
    b = None
    if bias is not None and bias.name in params and params[bias.name].has_data:
        b = trace.read(params[bias.name].seq).astype(np.float64).reshape(-1)
    for x_rec in _tensors(recs.get("MODULE_INPUT", ())):
        x = trace.read(x_rec.seq).astype(np.float64)
        k = x.shape[-1] if x.ndim else 0
        z = {}
        if w.shape[0] == k:
            z[(1, 0)] = x.reshape(-1, k) @ w  # x @ W: stored [in, out]
        if w.shape[1] == k:
            z[(0, 1)] = x.reshape(-1, k) @ w.T  # x @ W.T: stored [out, in], the canonical layout
        for key in list(z):
            if b is not None and b.size == z[key].shape[1]:
                z[key] = z[key] + b
        outs = [trace.read(r.seq).astype(np.float64) for r in _tensors(recs.get("MODULE_OUTPUT", ()))]
        hits = {key for key, v in z.items() for y in outs if y.size == v.size and _same_values(v, y)}
        if len(hits) == 1:
            got = hits.pop()
            return got if got == (1, 0) else None
        if hits:
            return None  # a symmetric matrix: either orientation
    return None


def _tensors(recs: Iterable[Any]) -> list[Any]:
    return [r for r in recs if r.has_data and r.dtype.startswith(("float", "bfloat")) and 0 < r.numel <= MAX_ELEMENTS]


def _same_values(v: np.ndarray, y: np.ndarray) -> bool:
    a, c = np.sort(v.reshape(-1)), np.sort(y.reshape(-1))
    scale = max(float(np.max(np.abs(a))), 1e-30)
    return bool(np.max(np.abs(a - c)) <= AGREE * scale)

"""``align()`` and ``weight_map()``: two traces opened and paired, nothing measured.

``compare`` pairs the same way before it measures (``_compare``); the single-step plan
(``_single_step``) pairs through ``align``.
"""

from __future__ import annotations

import os
from typing import Any

from padiff_trace import open_trace
from padiff_trace.matching import Mapping, SidedMapping, WeightMap, load_mapping, module_anchors, module_homes, module_splits, orient

from ._calls import TraceView, build_view
from ._joined import split_layers
from ._pairing import Alignment, align_views
from ._weights import trace_weight_map

__all__ = ["align", "align_by_weights", "as_mapping", "weight_map"]


def as_mapping(m: str | os.PathLike[str] | Mapping | None) -> Mapping | None:
    """A mapping given as a file path, loaded; one given as a ``Mapping`` (or none), as it is."""
    if m is None or isinstance(m, Mapping):
        return m
    return load_mapping(m)


def align(a_path: str | os.PathLike[str], b_path: str | os.PathLike[str], mapping: Any = None) -> Alignment:
    """Pair the module calls of two traces (first step) without measuring anything."""
    with open_trace(a_path) as ta, open_trace(b_path) as tb:
        va, vb = build_view(ta), build_view(tb)
        m = as_mapping(mapping)
        sided = orient(m, va.framework, vb.framework) if m is not None else None  # applied to A and B once
        wm = trace_weight_map(va, vb, sided)
        return align_by_weights(va, vb, sided, wm)


def align_by_weights(va: TraceView, vb: TraceView, sided: SidedMapping | None, wm: WeightMap | None) -> Alignment:
    """``align_views`` with what the weight map says of the modules: its anchors, the modules
    kept apart, each module's home and the layers split in parts."""
    if wm is None:
        return align_views(va, vb, sided)
    return align_views(va, vb, sided, anchors=module_anchors(wm), apart=module_splits(wm), homes=module_homes(wm),
                       parts=set(split_layers(wm)))


def weight_map(a_path: str | os.PathLike[str], b_path: str | os.PathLike[str], mapping: Any = None,
               call_order: bool = False) -> WeightMap | None:
    """Which weight of trace A is which weight of trace B (the engine ``record --weights-from``
    uses, on both traces' first recorded weights); None when either trace holds no weights.
    ``call_order``: tensors taken in the order the models first call their modules."""
    with open_trace(a_path) as ta, open_trace(b_path) as tb:
        return trace_weight_map(build_view(ta), build_view(tb), as_mapping(mapping), call_order)

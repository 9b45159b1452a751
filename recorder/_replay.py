"""Replay across processes: load into a model the weights recorded in another trace (its inputs:
``_inputreplay``).

Weights are matched by the shared engine (``padiff_trace.matching._weightmatch``: structure, layouts,
packed tensors, derived state; a mapping file pins what it cannot guess), then streamed
one tensor at a time, converted to the model's layout.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from tqdm import tqdm

from padiff_trace import STAT_FIELDS, Deferred, Kind, WeightTransferError, open_trace
from padiff_trace.arrays import blocks_in_order, packed_part, put_packed_part, squeezed, stats_tuple, transposed_rows
from padiff_trace.matching import (
    QKV_PACKING,
    Mapping,
    TensorInfo,
    WeightMap,
    WeightPair,
    WeightSide,
    depth_as_b,
    depth_order,
    inverse_perm,
    is_integer,
    is_pattern,
    mapping_pins,
    mark_depths,
    mark_offsets,
    match_weights,
    norm_like,
    own_offset,
    set_from_weight,
    side_from_records,
    summed_groups,
    weight_from,
    with_observed_layouts,
)

from ._adapter import Adapter
from ._fingerprints import Fingerprints
from ._hostcopy import host_array
from ._shardreplay import match_sliced, rank_value, replay_rank

__all__ = ["model_side", "module_classes", "pack_groups", "transfer_weights"]

logger = logging.getLogger(__name__)


def module_classes(adapter: Adapter, model: Any) -> dict[str, list[str]]:
    """Class name -> qualified names of its class hierarchy, for every module class of ``model``."""
    out: dict[str, list[str]] = {}
    for _, m in adapter.named_modules(model):
        cls = type(m)
        if cls.__name__ not in out:
            out[cls.__name__] = [f"{c.__module__}.{c.__qualname__}" for c in cls.__mro__ if c is not object]
    return out


def pack_groups(adapter: Adapter, model: Any) -> dict[str, int]:
    """Module path of a fused q|k|v projection of a class ``QKV_PACKING`` lists -> the groups
    it is packed in (the key/value heads, read off the module; 1 for q|k|v in blocks)."""
    out: dict[str, int] = {}
    for path, m in adapter.named_modules(model):
        for cls in type(m).__mro__:
            known = QKV_PACKING.get(f"{cls.__module__}.{cls.__qualname__}")
            if known is None:
                continue
            child, attr = known
            v: Any = m
            for part in attr.split(".") if attr else ():
                v = getattr(v, part, None)
            groups = v if attr else 1
            if getattr(m, child, None) is not None and isinstance(groups, int) and not isinstance(groups, bool) and groups >= 1:
                out[f"{path}.{child}" if path else child] = groups
            break
    return out


def model_side(adapter: Adapter, model: Any) -> tuple[WeightSide, dict[str, Any]]:
    """The model's tensors as the matcher sees them, and name -> tensor."""
    types = {path: type(m).__name__ for path, m in adapter.named_modules(model)}
    volatile = adapter.nonpersistent_buffers(model)
    infos, tensors = [], {}
    for name, t, is_param in adapter.named_state(model):
        mod, _, local = name.rpartition(".")
        trainable = is_param and adapter.requires_grad(t)
        pattern, integer = _buffer_kind(adapter, t) if not is_param else (False, False)
        infos.append(TensorInfo(name, mod, local, types.get(mod, ""), tuple(t.shape), is_param, trainable, name not in volatile,
                                pattern, integer))
        tensors[name] = t
    return WeightSide(adapter.name, tuple(infos), module_classes(adapter, model), pack_groups=pack_groups(adapter, model),
                      fingerprints=Fingerprints(adapter, tensors)), tensors


def _buffer_kind(adapter: Adapter, t: Any) -> tuple[bool, bool]:
    """Whether buffer ``t`` holds a mask (``is_pattern``, judged by the statistics a trace keeps),
    and whether it holds integers (``is_integer``)."""
    data, dtype, _, _ = adapter.to_host(t)
    if isinstance(data, Deferred):
        data = data.fetch()
    if not isinstance(data, np.ndarray) or not data.size:
        return False, is_integer(dtype)
    return is_pattern(dtype, dict(zip(STAT_FIELDS, stats_tuple(data, dtype), strict=True))), is_integer(dtype)


def match_onto_model(
    trace_path: str | os.PathLike[str], adapter: Adapter, model: Any, mapping: Mapping | None = None
) -> tuple[WeightMap, dict[str, Any]]:
    """The weight map of trace ``trace_path``'s step-0 weights onto ``model`` (nothing copied)."""
    with open_trace(trace_path) as tr:
        recs = tr.select(kind=[Kind.PARAM, Kind.BUFFER], step=0)
        if not recs:
            raise WeightTransferError(f"{trace_path}: has no weights recorded at step 0 (recorded with weights='none'?)")
        a = with_observed_layouts(tr, side_from_records(recs, tr.meta))
        b, tensors = model_side(adapter, model)
        wm = match_weights(a, b, *mapping_pins(mapping, a, b))
        by_name = {r.tensor_name: r for r in recs}

        def decide(p: WeightPair) -> float:  # the model's own values say its convention (``_offsets``)
            own = host_array(adapter, tensors[p.b], floating=True)
            return own_offset(by_name[p.a].read(), own) if own is not None and p.a in by_name else 0.0

        mark_offsets(wm, a.tensors, b.tensors, decide)
        # a kernel over the trace's pixel phases against the model's strided one (``matching._depth``)
        mark_depths(wm, lambda side, t, r: depth_order(tr, t, r) if side == "a" else None)
    for p in wm.pairs:
        if p.offset:
            logger.info("%s receives %s %+g: the model keeps its own values %+g from the trace's (a norm kept as 1 + w "
                        "on one side, w on the other)", p.b, p.a, p.offset, p.offset)
    return wm, tensors


def transfer_weights(
    adapter: Adapter, model: Any, trace_path: str | os.PathLike[str], mapping: Mapping | None = None
) -> WeightMap:
    """Copy the weights recorded at step 0 of ``trace_path`` into ``model``; returns the map used.

    Tensors present on one side only (no same-shape candidate left on the other: a model built
    with an optional part the other lacks) are a structural difference: the rest is copied
    and the map lists them. Raises WeightTransferError, before any weight is written, only
    when unmatched tensors have candidates it cannot tell apart (naming them, and the
    mapping entry that would pin one). In one rank of a sharded run given a single-process trace,
    each tensor receives this rank's slice (``_shardreplay``).
    """
    rank = replay_rank(adapter, trace_path)  # None: one process, or a rank trace replayed into its rank
    if rank is None:
        wm, tensors = match_onto_model(trace_path, adapter, model, mapping)
    else:
        wm, tensors = match_sliced(trace_path, adapter, model, rank, model_side(adapter, model), mapping)
    if wm.ambiguous:
        raise WeightTransferError(f"{trace_path} -> model: {wm.problem_text('trace', 'model')}")
    if not wm.ok:  # one-sided tensors only: a structural difference, reported; the rest is copied
        logger.warning("structural difference, copied around: %s", wm.one_sided_text("the trace", "the model"))
    for line in wm.summary_lines()[1:]:
        logger.warning("%s", line)
    todo = [p for p in wm.pairs if p.transfer]
    with open_trace(trace_path) as tr:
        recs = {r.tensor_name: r for r in tr.select(kind=[Kind.PARAM, Kind.BUFFER], step=0)}
        _check_data(trace_path, [recs[p.a] for p in todo])
        packed: dict[str, list[WeightPair]] = {}
        zeros, sums = _summed_targets(wm)
        for p in tqdm(todo, desc="weights", unit="tensor", disable=len(todo) < 200 or not sys.stderr.isatty(), leave=False):
            if p.b_part is not None or p.b_index is not None:
                packed.setdefault(p.b, []).append(p)
                continue
            if p.b in sums and sums[p.b][0] is not p:
                continue  # written once, as the sum of its group
            arr = _canonical(_effective(recs, p.a, wm.skipped), p.a_perm, p.a_part, p.axis, p.a_groups, p.a_blocks, p.a_index)
            if p.b_perm is not None and arr.ndim != len(p.b_perm):  # a Linear's rows into a conv's axes reordered
                arr = arr.reshape(_canonical_shape(tuple(tensors[p.b].shape), p.b_perm))
            arr = _to_target(arr, p.b_perm)
            if p.b in zeros:  # one of several B tensors whose sum is A's: the first carries it
                arr = np.zeros_like(arr)
            elif p.b in sums:  # B's one tensor is the sum of A's
                arr = sum((_to_target(_canonical(_effective(recs, q.a, wm.skipped), q.a_perm, None, 0), q.b_perm)
                           for q in sums[p.b][1:]), arr)
            shape = tuple(tensors[p.b].shape)
            if p.reshape or (arr.shape != shape and squeezed(arr.shape) == squeezed(shape)):
                arr = arr.reshape(shape)  # a head split or merge, or axes of size one: the same elements in order
            if p.depth is not None:
                arr = depth_as_b(p, arr)
            if p.logged is not None:
                arr = _log_space(p, arr)
            if p.offset:
                arr = (arr + p.offset).astype(arr.dtype)
            if rank is not None:
                arr = rank_value(p, arr)  # a partial sum: zeros on ranks other than 0
            adapter.assign(tensors[p.b], arr)
            g = set_from_weight("b", p.b, wm.skipped)
            if g is not None and g in tensors:  # B's weight-normed layer computes the weight given: v = W, g = |W|
                adapter.assign(tensors[g], norm_like(arr, tuple(tensors[g].shape)).astype(arr.dtype))
        for name, parts in packed.items():  # B's tensor is several of A's: assemble, then copy once
            target = tensors[name]
            canon_shape = _canonical_shape(tuple(target.shape), parts[0].b_perm)
            buf: np.ndarray | None = None
            covered = 0
            for p in parts:
                arr = _canonical(recs[p.a].read(), p.a_perm, p.a_part, p.axis, p.a_groups, p.a_blocks, p.a_index)
                if buf is None:
                    buf = np.zeros(canon_shape, dtype=arr.dtype)
                slot = buf if p.b_index is None else buf[p.b_index]  # a stack's element: a view written through
                lo, hi = p.b_part or (0, int(slot.shape[p.axis]))
                put_packed_part(slot, arr, lo, hi, axis=p.axis, groups=p.b_groups)
                covered += (hi - lo) * p.b_groups
            stacked = parts[0].b_index is not None  # rows of every element of the stack
            whole = canon_shape[0] * canon_shape[parts[0].axis + 1] if stacked else canon_shape[parts[0].axis]
            if covered != whole:
                raise WeightTransferError(
                    f"{trace_path} -> model: {name} is only partly matched ({covered} of {whole} "
                    "rows); pin the rest with weights entries and a part range in the mapping file"
                )
            assert buf is not None
            adapter.assign(target, _to_target(buf, parts[0].b_perm))
    logger.info("copied %d weight tensors from %s", len(todo), trace_path)
    return wm


def _log_space(p: WeightPair, arr: np.ndarray) -> np.ndarray:
    """The trace's values as the model keeps them where one side keeps the other's logarithm
    (``WeightPair.logged``): their log for the model's, their exp from the trace's. Values that
    have no logarithm are copied as they are, said in the log."""
    if p.logged == "a":
        return np.exp(arr).astype(arr.dtype)
    if np.all(arr > 0):
        return np.log(arr).astype(arr.dtype)
    logger.warning("%s keeps the logarithm of %s by its name, but %s holds values <= 0: copied as they are", p.b, p.a, p.a)
    return arr


def _effective(recs: dict[str, Any], name: str, skipped: list[tuple[str, str, str]]) -> np.ndarray:
    """A's tensor ``name`` as stored, or, for the v of a weight-normed layer paired with B's plain
    weight, the weight it computes (g * v / |v|)."""
    v = recs[name].read()
    g = set_from_weight("a", name, skipped)
    if g is None or g not in recs:
        return v
    return weight_from(recs[g].read(), v).astype(v.dtype)


def _summed_targets(wm: WeightMap) -> tuple[set[str], dict[str, list[WeightPair]]]:
    """The model tensors of summed groups (``summed_groups``): those written as zeros (the
    trace's one tensor went into the group's first), and those written as the sum of the
    trace's tensors (name -> the group's pairs)."""
    zeros: set[str] = set()
    sums: dict[str, list[WeightPair]] = {}
    for side, group in summed_groups(wm.pairs):
        if side == "a":
            zeros.update(p.b for p in group[1:])
        else:
            sums[group[0].b] = group
    return zeros, sums


def _check_data(trace_path: str | os.PathLike[str], recs: Sequence[Any]) -> None:
    nodata = [r for r in recs if not r.has_data]
    if nodata:
        raise WeightTransferError(
            f"{trace_path}: weights were recorded without tensor data (stats-only or size cap), e.g. "
            f"{nodata[0].module}.{nodata[0].position}; record it again without --stats-only/--max-tensor-bytes"
        )


def _canonical(arr: np.ndarray, perm: tuple[int, ...] | None, part: tuple[int, int] | None, axis: int,
               groups: int = 1, blocks: tuple[int, ...] | None = None, index: int | None = None) -> np.ndarray:
    if perm is not None:
        arr = transposed_rows(arr) if perm == (1, 0) and arr.ndim == 2 else np.ascontiguousarray(np.transpose(arr, perm))
    if index is not None:  # a stack's element
        arr = np.ascontiguousarray(arr[index])
    if blocks is not None:  # gates stacked in another order: B's order first, then the part
        arr = blocks_in_order(arr, blocks)
    if part is not None:
        arr = packed_part(arr, *part, axis=axis, groups=groups)
    return arr


def _canonical_shape(shape: tuple[int, ...], perm: tuple[int, ...] | None) -> tuple[int, ...]:
    return tuple(shape[k] for k in perm) if perm is not None else shape


def _to_target(arr: np.ndarray, perm: tuple[int, ...] | None) -> np.ndarray:
    """Canonical layout -> the target's stored layout (the inverse of its ``perm``)."""
    if perm is None:
        return arr
    if perm == (1, 0) and arr.ndim == 2:
        return transposed_rows(arr)
    return np.ascontiguousarray(np.transpose(arr, inverse_perm(perm)))

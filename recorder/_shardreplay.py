"""Weight replay into one rank of a sharded model: each rank takes its slice of a single-process trace.

When the process is one rank of a run of several processes (``_distributed.detect_distributed``)
and the ``--weights-from`` trace is a single-process trace (no meta ``distributed``: a plain
recording, or one written by ``padiff-trace join``), the model's tensors are parts of the trace's.
Each is matched by the shared engine with its **whole** shape, then this rank's part is copied:

* **split known** (``split_info``: DTensor ``Shard(k)``, paddle ``is_distributed``/``split_axis``):
  the whole shape is the DTensor's global shape, or the local shape times the world size on axis
  k; rank r takes the r-th of torch.chunk's chunks along k (what DTensor's ``Shard`` holds; equal
  slices when the size divides, as paddle's layers require);
* **split unknown** (a hand-written tensor-parallel model): a first match with the local shapes;
  a pair the matcher finds in the same slot (type, local name, block) with other shapes
  (``WeightMap.mismatched``) is a slice when exactly one axis of the rank's tensor, times the
  world size, gives the trace's shape (in the canonical layout), and then matched again with that
  whole shape; a tensor with the trace's shape is copied whole (replicated);
* **partial** (DTensor ``Partial``: each rank holds a term of a sum): rank 0 takes the value,
  the others zeros, so the ranks' sum is the trace's value.

A trainable tensor that is a slice on no axis, or whose split this rank cannot read, stops the
transfer before anything is written: one ``WeightTransferError`` line naming the tensor, both
shapes and the world size. Each sliced pair is a ``RankSlicePair``: its ``a_part`` is this rank's
range of the trace tensor, and ``weightmap.json`` says "sliced axis k, rank r of N".
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from padiff_trace import Kind, WeightTransferError, open_trace
from padiff_trace.matching import (
    Mapping,
    TensorInfo,
    TypeResolver,
    WeightMap,
    WeightPair,
    WeightSide,
    mapping_pins,
    match_weights,
    side_from_records,
    with_observed_layouts,
)

from ._adapter import Adapter
from ._distributed import Distributed, detect_distributed, local_shard, split_info

__all__ = ["RankSlicePair", "match_sliced", "rank_range", "rank_value", "replay_rank", "slice_axis"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RankSlicePair(WeightPair):
    """A pair whose model tensor is this rank's part of the trace's tensor: ``a_part`` is its range
    along the canonical ``axis`` (a split on ``model_axis``), or, for a partial sum
    (``model_axis`` None), the whole value on rank 0 and zeros on the others."""

    rank: int = 0
    world_size: int = 1
    model_axis: int | None = None  # the model tensor's own (stored) axis that is split
    split_from: str = ""  # where the split was read: "DTensor Shard(dim=0)", "shapes", ...

    @property
    def zero(self) -> bool:
        """This rank receives zeros (a partial sum's term on a rank other than 0)."""
        return self.model_axis is None and self.rank != 0

    def conversion(self) -> str:
        if self.model_axis is None:
            what = f"partial sum, rank {self.rank} of {self.world_size}: {'zeros' if self.zero else 'the value'}"
        else:
            what = f"sliced axis {self.model_axis}, rank {self.rank} of {self.world_size}"
        parts = [f"{what} ({self.split_from})"]
        rel = self.relative_perm
        if rel is not None:
            parts.append("transpose" if rel == (1, 0) else f"permute {list(rel)}")
        return ", ".join(parts)


@dataclass(frozen=True)
class _Split:
    axis: int | None  # the model tensor's split axis; None: a partial sum
    source: str
    local: tuple[int, ...]  # what this rank holds
    whole: tuple[int, ...]  # what one process holds


def rank_range(size: int, rank: int, world_size: int) -> tuple[int, int]:
    """Rank ``rank``'s ``[start, stop)`` of an axis of ``size`` split over ``world_size`` ranks:
    torch.chunk's chunks (ceil(size / world_size) each, the last ones shorter or empty), as
    DTensor's ``Shard`` places them; equal slices when ``world_size`` divides ``size``."""
    chunk = -(-size // world_size)
    return min(rank * chunk, size), min((rank + 1) * chunk, size)


def slice_axis(whole: Sequence[int], local: Sequence[int], world_size: int) -> int | None:
    """The one axis on which ``local`` is a 1/``world_size`` slice of ``whole`` (every other axis
    equal), or None when no axis (or, with a world of one, more than one) fits."""
    if len(whole) != len(local):
        return None
    fits = [k for k in range(len(whole)) if local[k] * world_size == whole[k]
            and all(local[j] == whole[j] for j in range(len(whole)) if j != k)]
    return fits[0] if len(fits) == 1 else None


def replay_rank(adapter: Adapter, trace_path: str | os.PathLike[str]) -> Distributed | None:
    """This process, when it takes its slices of ``trace_path``'s weights: a rank of a run of several
    processes fed a single-process trace (no meta ``distributed``). None otherwise: a single process,
    or a rank replaying a rank trace, copies whole tensors as before."""
    dist = detect_distributed(adapter)
    if dist is None or dist.world_size < 2:
        return None
    with open_trace(trace_path) as tr:
        return dist if tr.meta.get("distributed") is None else None


def rank_value(p: WeightPair, arr: np.ndarray) -> np.ndarray:
    """What this rank writes of a pair's converted value: zeros for a partial sum's term on a rank
    other than 0, else ``arr``."""
    return np.zeros_like(arr) if isinstance(p, RankSlicePair) and p.zero else arr


def match_sliced(
    trace_path: str | os.PathLike[str], adapter: Adapter, model: Any, dist: Distributed,
    side: tuple[WeightSide, dict[str, Any]], mapping: Mapping | None = None,
) -> tuple[WeightMap, dict[str, Any]]:
    """The weight map of a single-process trace's step-0 weights onto this rank's ``model`` (its
    ``side``: ``model_side``), each sliced tensor's pair a ``RankSlicePair`` (nothing copied)."""
    b, tensors = side
    where = f"{trace_path} -> model (rank {dist.rank} of {dist.world_size})"
    with open_trace(trace_path) as tr:
        recs = tr.select(kind=[Kind.PARAM, Kind.BUFFER], step=0)
        if not recs:
            raise WeightTransferError(f"{trace_path}: has no weights recorded at step 0 (recorded with weights='none'?)")
        a = with_observed_layouts(tr, side_from_records(recs, tr.meta))
    splits, unread = _known_splits(adapter, model, tensors, dist.world_size)
    wm = _match(a, b, splits, mapping)
    found = _by_shapes(wm, a, b, splits, dist, where)
    if found:
        splits.update(found)
        wm = _match(a, b, splits, mapping)
    if wm.ambiguous:
        raise WeightTransferError(f"{where}, the model's tensors taken whole: {wm.problem_text('trace', 'model')}")
    wm.pairs = [_rank_pair(p, splits, unread, dist, where) for p in wm.pairs]
    _log(wm.pairs, dist, trace_path)
    return wm, tensors


def _known_splits(adapter: Adapter, model: Any, tensors: dict[str, Any],
                  world_size: int) -> tuple[dict[str, _Split], dict[str, str]]:
    """The splits the model says (``split_info``), and the tensors whose split it says but cannot be read."""
    out: dict[str, _Split] = {}
    unread: dict[str, str] = {}
    for name, info in split_info(adapter, model, world_size).items():
        t = tensors.get(name)
        if t is None:
            continue
        shard = local_shard(t)
        local = tuple(shard.shape)
        whole = tuple(t.shape) if shard is not t else None  # a DTensor knows its global shape
        if info.get("partial"):
            out[name] = _Split(None, info["from"], local, whole or local)
        elif "axis" in info:
            k = int(info["axis"])
            out[name] = _Split(k, info["from"], local, whole or local[:k] + (local[k] * world_size,) + local[k + 1:])
        elif not info.get("replicated"):
            unread[name] = info["from"]
    return out, unread


def _match(a: WeightSide, b: WeightSide, splits: dict[str, _Split], mapping: Mapping | None) -> WeightMap:
    infos = tuple(dataclasses.replace(t, shape=splits[t.name].whole) if t.name in splits else t for t in b.tensors)
    bw = WeightSide(b.framework, infos, b.classes)
    return match_weights(a, bw, *mapping_pins(mapping, a, bw))


def _by_shapes(wm: WeightMap, a: WeightSide, b: WeightSide, splits: dict[str, _Split], dist: Distributed,
               where: str) -> dict[str, _Split]:
    """Slices found by shape among the pairs the matcher put in one slot with other shapes; a
    trainable one that is a slice on no axis is a ``WeightTransferError``."""
    ta, tb = {t.name: t for t in a.tensors}, {t.name: t for t in b.tensors}
    ra, rb = TypeResolver(a.framework, a.classes), TypeResolver(b.framework, b.classes)
    unmatched = {t.name for t in wm.unmatched_b}
    found: dict[str, _Split] = {}
    misfits: list[str] = []
    for an, bn in wm.mismatched:
        x, y = ta[an], tb[bn]
        pa, pb = _perm(ra, x), _perm(rb, y)
        whole_c, local_c = _canon(x.shape, pa), _canon(y.shape, pb)
        k = None if bn in splits else slice_axis(whole_c, local_c, dist.world_size)
        if k is not None:
            axis = pb[k] if pb is not None else k
            whole = y.shape[:axis] + (y.shape[axis] * dist.world_size,) + y.shape[axis + 1:]
            found[bn] = _Split(axis, "shapes", y.shape, whole)
        elif bn in unmatched:
            misfits.append(_misfit(x, y, splits.get(bn), dist.world_size))
    if misfits:
        more = f" (and {len(misfits) - 1} more)" if len(misfits) > 1 else ""
        raise WeightTransferError(f"{where}: {misfits[0]}{more}")
    return found


def _misfit(x: TensorInfo, y: TensorInfo, split: _Split | None, world_size: int) -> str:
    if split is not None:
        how = "a partial sum" if split.axis is None else f"split on axis {split.axis}"
        return (f"{y.name} {list(split.local)} is {how} ({split.source}), whole {list(split.whole)}, but the trace's "
                f"{x.name} is {list(x.shape)} (world size {world_size})")
    return (f"{y.name} {list(y.shape)} is no 1/{world_size} slice of the trace's {x.name} {list(x.shape)} on any one "
            f"axis (world size {world_size}); give the model the trace's shapes, or record the trace with as many processes")


def _perm(res: TypeResolver, t: TensorInfo) -> tuple[int, ...] | None:
    perm = res.layout(t.module_type, t.local)
    return perm if perm is not None and len(perm) == len(t.shape) else None


def _canon(shape: tuple[int, ...], perm: tuple[int, ...] | None) -> tuple[int, ...]:
    return tuple(shape[k] for k in perm) if perm is not None else shape


def _rank_pair(p: WeightPair, splits: dict[str, _Split], unread: dict[str, str], dist: Distributed,
               where: str) -> WeightPair:
    if not p.transfer:
        return p
    if p.b in unread:
        raise WeightTransferError(f"{where}: {p.b}: {unread[p.b]}: this rank's part of the trace's {p.a} cannot be told")
    s = splits.get(p.b)
    if s is None:
        return p  # the same shape on every rank: copied whole (replicated)
    if p.a_part is not None or p.b_part is not None or p.indexed or p.reshape:
        raise WeightTransferError(f"{where}: {p.b} is split across the ranks and is {p.conversion()} of the trace's {p.a}: "
                                  "a packed or reshaped tensor is not sliced per rank; pin it in a mapping file with a part range")
    part, axis = None, p.axis
    if s.axis is not None:
        start, stop = rank_range(s.whole[s.axis], dist.rank, dist.world_size)
        if stop - start != s.local[s.axis]:
            raise WeightTransferError(
                f"{where}: {p.b} {list(s.local)} holds {s.local[s.axis]} of {s.whole[s.axis]} on axis {s.axis} "
                f"({s.source}); rank {dist.rank} of {dist.world_size}'s chunk is [{start}:{stop}] (world size {dist.world_size})")
        part, axis = (start, stop), p.b_perm.index(s.axis) if p.b_perm is not None else s.axis  # canonical axis
    return RankSlicePair(p.a, p.b, p.a_perm, p.b_perm, p.how, part, p.b_part, axis, p.transfer, rank=dist.rank,
                         world_size=dist.world_size, model_axis=s.axis, split_from=s.source)


def _log(pairs: Sequence[WeightPair], dist: Distributed, trace_path: str | os.PathLike[str]) -> None:
    by_axis: dict[str, list[str]] = {}
    for p in pairs:
        if isinstance(p, RankSlicePair):
            key = "partial sum" if p.model_axis is None else f"axis {p.model_axis}"
            by_axis.setdefault(key, []).append(p.b)
    whole = sum(1 for p in pairs if p.transfer and not isinstance(p, RankSlicePair))
    logger.info("rank %d of %d: %d weight tensor(s) of %s sliced (%s), %d copied whole", dist.rank, dist.world_size,
                sum(len(v) for v in by_axis.values()), trace_path,
                "; ".join(f"{k}: {', '.join(v)}" for k, v in by_axis.items()) or "none", whole)

"""What the weight matcher is given: each side's tensors, and the pins of a mapping file.

``side_from_records`` builds a side from a trace's PARAM/BUFFER records (the analyzer, and
``record --weights-from`` for trace A); the recorder builds the live model's side itself.
``mapping_pins`` turns a mapping file's ``weights`` and ``modules`` entries into pins.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from collections.abc import Mapping as AbcMapping
from dataclasses import dataclass, field
from typing import Any

from ..trace._schema import STAT_FIELDS, Kind
from ._mapping import Mapping, SidedMapping, orient, resolve
from ._weightmap import TensorInfo

__all__ = ["WeightSide", "WeightPin", "in_call_order", "is_integer", "is_pattern", "mapping_pins", "side_from_records"]


@dataclass(frozen=True)
class WeightSide:
    """One side's tensors (registration order, or call order: ``in_call_order``) and its class
    hierarchy (``module_classes``)."""

    framework: str
    tensors: tuple[TensorInfo, ...]
    classes: dict[str, list[str]] = field(default_factory=dict)
    # "Class.local" -> stored-to-canonical permutation a recorded call of the class showed
    # (``_observed``); it holds for every tensor of that class, on either side of one framework
    layouts: dict[str, tuple[int, ...]] = field(default_factory=dict)
    # module path -> groups its packed child projection is split in (``QKV_PACKING``)
    pack_groups: dict[str, int] = field(default_factory=dict)
    # tensors in the order the model first calls their modules (``in_call_order``), not registration order
    call_ordered: bool = False
    # module path -> (input shapes, output shapes) of its first call (``in_call_order``; empty before a run)
    call_shapes: AbcMapping[str, tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]] = field(default_factory=dict)
    # name -> the tensor's step-0 statistics (``STAT_FIELDS``), where known: a copy of a weight has
    # its weight's (``_shadows``)
    fingerprints: AbcMapping[str, tuple[float, ...]] = field(default_factory=dict)


def is_integer(dtype: str) -> bool:
    """Whether a logical dtype holds integers or booleans (a pointer, a counter, indices)."""
    return dtype.startswith(("int", "uint", "bool"))


def is_pattern(dtype: str, stats: AbcMapping[str, float]) -> bool:
    """Whether a buffer's values say it is a mask the model builds from its configuration (a
    masked convolution's kernel mask, a causal mask): booleans, or floats that are all 0 or 1
    and not all one of them. Values in [0, 1] are all 0 or 1 exactly when their variance is
    mean * (1 - mean), the largest any such values can have; fresh BatchNorm statistics (all 0,
    all 1) are not patterns. Such a buffer is derived state: compared, never copied, so that a
    port building its mask wrong is not handed the other port's."""
    if dtype == "bool":
        return True
    lo, hi, mean, std = (float(stats.get(k, math.nan)) for k in ("min", "max", "mean", "std"))
    if not dtype.startswith(("float", "bfloat")) or lo != 0.0 or hi != 1.0 or not 0.0 < mean < 1.0:
        return False
    return abs(std * std - mean * (1.0 - mean)) <= 1e-6 * mean * (1.0 - mean)


def side_from_records(records: Iterable[Any], meta: dict[str, Any]) -> WeightSide:
    """A trace's weights (PARAM/BUFFER records of one step, in recorded order) as a matcher side.

    Uses the recorder's meta ``module_classes`` (class hierarchies), ``frozen`` (parameters
    that do not train), ``nonpersistent`` (buffers outside the state dict) and ``pack_groups``
    where present.
    """
    frozen = set(meta.get("frozen") or ())
    volatile = set(meta.get("nonpersistent") or ())
    infos = []
    prints: dict[str, tuple[float, ...]] = {}
    for r in records:
        name = r.tensor_name
        is_param = r.kind == Kind.PARAM
        stats = _stats(r)
        infos.append(
            TensorInfo(name, r.module, r.position, r.module_type, tuple(r.shape), is_param,
                       is_param and name not in frozen, name not in volatile,
                       not is_param and is_pattern(str(r.dtype), stats), not is_param and is_integer(str(r.dtype)))
        )
        if stats:
            prints[name] = tuple(float(stats.get(k, math.nan)) for k in STAT_FIELDS)
    classes = meta.get("module_classes")
    groups = meta.get("pack_groups")
    return WeightSide(str(meta.get("framework", "none")), tuple(infos), dict(classes) if isinstance(classes, dict) else {},
                      pack_groups={str(k): int(v) for k, v in groups.items()} if isinstance(groups, dict) else {},
                      fingerprints=prints)


def _stats(r: Any) -> AbcMapping[str, float]:
    try:
        stats: AbcMapping[str, float] = r.stats
    except (AttributeError, KeyError, IndexError, ValueError, OSError):
        return {}
    return stats


def in_call_order(side: WeightSide, first_call: AbcMapping[str, int],
                  shapes: AbcMapping[str, tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]] | None = None,
                  ) -> WeightSide:
    """``side`` with its tensors in the order the model first calls their modules: what two
    implementations of one model share (both compute the same steps in turn), where the order
    their ``__init__`` registers modules in is each author's own. A tensor of a module never
    called (weights its parent uses itself) takes its nearest called ancestor's turn, the root
    aside; one with none keeps its place after the tensor before it. Ties keep registration order.
    ``shapes``: module path -> the input and output shapes of its first call, kept for the matcher
    to tell same-shape layers apart by (``call_shapes``)."""
    if not first_call:
        return side
    ranks: list[float] = []
    last = -1.0
    for t in side.tensors:
        m, rank = t.module, None
        while m and rank is None:
            rank = first_call.get(m)
            m = m.rpartition(".")[0]
        last = float(rank) if rank is not None else last
        ranks.append(last)
    order = sorted(range(len(side.tensors)), key=lambda i: (ranks[i], i))
    return dataclasses.replace(side, tensors=tuple(side.tensors[i] for i in order), call_ordered=True,
                               call_shapes=dict(shapes or {}))


@dataclass(frozen=True)
class WeightPin:
    """A mapping file's word on one tensor: pair ``a`` with ``b``, or skip one side's tensor."""

    a: str | None
    b: str | None
    a_part: tuple[int, int] | None = None
    b_part: tuple[int, int] | None = None
    skip: bool = False
    source: str = "mapping"
    a_groups: int = 1  # the part is taken in each of this many equal blocks (``WeightPair``)
    b_groups: int = 1
    axis: int = 0  # the canonical axis the parts cut
    a_axes: tuple[int, ...] | None = None  # that side's canonical axes reordered first
    b_axes: tuple[int, ...] | None = None
    summed: bool = False  # one of a summed group (``summed_groups``)
    a_blocks: tuple[int, ...] | None = None  # that side's axis 0 as equal blocks in this order
    b_blocks: tuple[int, ...] | None = None
    offset: float = 0.0  # B's values are A's plus this
    a_index: int | None = None  # that side's tensor is a stack: its element along axis 0
    b_index: int | None = None
    depth: tuple[str, int, str] | None = None  # ("a"/"b", r, order): that side's kernel over pixel phases (``_depth``)


def mapping_pins(
    mapping: Mapping | SidedMapping | None, a: WeightSide, b: WeightSide
) -> tuple[list[WeightPin], list[tuple[str, str]]]:
    """The pins a mapping file gives the matcher: its ``weights`` entries, and the module pairs
    of its ``modules`` entries (between two frameworks only) whose tensors pair by local name.
    A ``Mapping`` is oriented to the two sides here (by their frameworks); a ``SidedMapping``
    already is."""
    if mapping is None:
        return [], []
    sided = orient(mapping, a.framework, b.framework)
    pins = [WeightPin(w.a, w.b, w.a_part, w.b_part, w.skip, w.describe(sided.source), w.a_groups, w.b_groups,
                      w.axis, w.a_axes, w.b_axes, w.summed, w.a_blocks, w.b_blocks, w.offset, w.a_index, w.b_index,
                      w.depth)
            for w in sided.weights]
    mods: list[tuple[str, str]] = []
    if sided.modules_pin_weights:
        mods_a = {t.module for t in a.tensors}
        mods_b = {t.module for t in b.tensors}
        mods = [(x, y) for x, y, _ in resolve(sided, mods_a, mods_b, strict=False)]
    return pins, mods

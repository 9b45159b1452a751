"""The ``weights`` entries of a mapping file: what one entry says (``WeightEntry``) and how the
list is read and checked (``parse_weights``), each entry refused in one line naming it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from padiff_trace import MappingError

from ..arrays import SPACE_TO_DEPTH_ORDERS

__all__ = ["WeightEntry", "parse_weights"]

_SIDES = ("paddle", "torch", "source", "target")
_WEIGHT_KEYS = {*_SIDES, *(f"{s}_part" for s in _SIDES), *(f"{s}_groups" for s in _SIDES), *(f"{s}_axes" for s in _SIDES), *(f"{s}_blocks" for s in _SIDES), *(f"{s}_offset" for s in _SIDES), *(f"{s}_index" for s in _SIDES), *(f"{s}_depth" for s in _SIDES), "axis", "skip", "sum", "how", "confidence", "convert", "why", "transfer"}


@dataclass(frozen=True)
class WeightEntry:
    """A ``weights`` entry: side name ("paddle"/"torch"/"source"/"target") -> tensor name."""

    index: int
    names: dict[str, str]
    parts: dict[str, tuple[int, int]]
    skip: bool = False
    groups: dict[str, int] = field(default_factory=dict)  # side -> equal blocks its part is taken in
    axis: int = 0  # the canonical axis the parts cut
    axes: dict[str, tuple[int, ...]] = field(default_factory=dict)  # side -> its canonical axes reordered first
    summed: bool = False  # "sum": one side's tensor is the sum of the tensors the entries naming it pair it with
    blocks: dict[str, tuple[int, ...]] = field(default_factory=dict)  # side -> order of equal blocks of its axis 0
    offsets: dict[str, float] = field(default_factory=dict)  # side -> what its values are the other's plus
    indexes: dict[str, int] = field(default_factory=dict)  # side -> the element of its stacked tensor (axis 0)
    # side -> (r, order): its kernel reads the other's input as r x r pixel phases stacked in that order (``_depth``)
    depths: dict[str, tuple[int, str]] = field(default_factory=dict)

    def describe(self, source: str) -> str:
        return f"{source}: weights entry {self.index} ({', '.join(f'{k}={v!r}' for k, v in self.names.items())})"


def _axes_order(order: Any, where: str) -> tuple[int, ...]:
    if not (isinstance(order, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in order)
            and sorted(order) == list(range(len(order)))):
        raise MappingError(f"{where} must be an order of the canonical axes like [0, 2, 3, 1], got {order!r}")
    return tuple(order)


def _depth(spec: Any, where: str) -> tuple[int, str]:
    if not (isinstance(spec, dict) and set(spec) == {"block", "order"} and isinstance(spec["block"], int)
            and not isinstance(spec["block"], bool) and spec["block"] >= 2 and spec["order"] in SPACE_TO_DEPTH_ORDERS):
        raise MappingError(f"{where} must be like {{\"block\": 2, \"order\": ORDER}} with ORDER one of "
                           f"{sorted(SPACE_TO_DEPTH_ORDERS)}, got {spec!r}")
    return spec["block"], spec["order"]


def parse_weights(raw: Any, source: str) -> tuple[WeightEntry, ...]:
    if not isinstance(raw, list):
        raise MappingError(f"{source}: 'weights' must be a list of entries like {{\"paddle\": NAME, \"torch\": NAME}}")
    out = []
    for i, e in enumerate(raw):
        if not isinstance(e, dict):
            raise MappingError(f"{source}: weights entry {i} must be an object")
        unknown = set(e) - _WEIGHT_KEYS
        if unknown:
            raise MappingError(f"{source}: weights entry {i} has unknown key(s) {sorted(unknown)}; allowed {sorted(_WEIGHT_KEYS)}")
        names = {k: e[k] for k in _SIDES if k in e}
        if not names or not all(isinstance(v, str) for v in names.values()):
            raise MappingError(f"{source}: weights entry {i} needs tensor names under 'paddle'/'torch' (or 'source'/'target')")
        if {"paddle", "torch"} & set(names) and {"source", "target"} & set(names):
            raise MappingError(f"{source}: weights entry {i} mixes 'paddle'/'torch' with 'source'/'target'")
        skip = bool(e.get("skip", False))
        if not skip and len(names) != 2:
            raise MappingError(f"{source}: weights entry {i} names one side only; add the other or \"skip\": true")
        parts: dict[str, tuple[int, int]] = {}
        for k in names:
            part = e.get(f"{k}_part")
            if part is None:
                continue
            if not (isinstance(part, list) and len(part) == 2 and all(isinstance(x, int) for x in part) and 0 <= part[0] < part[1]):
                raise MappingError(f"{source}: weights entry {i}: {k}_part must be [start, stop) like [0, 64], got {part!r}")
            parts[k] = (part[0], part[1])
        groups: dict[str, int] = {}
        for k in names:
            g = e.get(f"{k}_groups", 1)
            if not (isinstance(g, int) and not isinstance(g, bool) and g >= 1) or (g > 1 and k not in parts):
                raise MappingError(f"{source}: weights entry {i}: {k}_groups must be a count >= 1 beside a {k}_part, "
                                   f"got {g!r}")
            if g > 1:
                groups[k] = g
        axis = e.get("axis", 0)
        if not (isinstance(axis, int) and not isinstance(axis, bool) and axis >= 0) or (axis and groups):
            raise MappingError(f"{source}: weights entry {i}: axis must be an axis of the canonical layout (0, 1, ...; "
                               f"*_groups cut axis 0 only), got {axis!r}")
        axes = {k: _axes_order(e[f"{k}_axes"], f"{source}: weights entry {i}: {k}_axes") for k in names if f"{k}_axes" in e}
        blocks = {k: _axes_order(e[f"{k}_blocks"], f"{source}: weights entry {i}: {k}_blocks") for k in names
                  if f"{k}_blocks" in e}
        if any(len(o) < 2 for o in blocks.values()):
            raise MappingError(f"{source}: weights entry {i}: *_blocks must be an order of two or more equal blocks of "
                               f"axis 0, like [0, 1, 3, 2] (a part of that side is cut after the blocks are reordered)")
        summed = e.get("sum", False)
        if not isinstance(summed, bool) or (summed and (skip or parts)):
            raise MappingError(f"{source}: weights entry {i}: sum must be true or false, on an entry pairing two whole "
                               f"tensors (one side's is the sum of the tensors its entries pair it with), got {summed!r}")
        offsets: dict[str, float] = {}
        for k in names:
            off = e.get(f"{k}_offset")
            if off is None:
                continue
            if not (isinstance(off, (int, float)) and not isinstance(off, bool) and math.isfinite(off)) or parts or summed or skip:
                raise MappingError(f"{source}: weights entry {i}: {k}_offset must be a number on an entry pairing two whole "
                                   f"tensors ({k}'s values are the other's plus it, like 1 for a norm kept as 1 + w), got {off!r}")
            offsets[k] = float(off)
        indexes: dict[str, int] = {}
        for k in names:
            index = e.get(f"{k}_index")
            if index is None:
                continue
            if not (isinstance(index, int) and not isinstance(index, bool) and index >= 0) or summed or k in blocks:
                raise MappingError(f"{source}: weights entry {i}: {k}_index must be a count >= 0, the element of {k}'s "
                                   f"stacked tensor (axis 0) that its part (if any) then cuts, like 2, got {index!r}")
            indexes[k] = index
        depths = {k: _depth(e[f"{k}_depth"], f"{source}: weights entry {i}: {k}_depth") for k in names if f"{k}_depth" in e}
        if depths and (len(depths) > 1 or parts or indexes or summed or skip or axes or blocks or offsets):
            raise MappingError(f"{source}: weights entry {i}: *_depth goes on one side of an entry pairing two whole "
                               f"tensors with no other conversion")
        out.append(WeightEntry(i, names, parts, skip, groups, axis, axes, summed, blocks, offsets, indexes, depths))
    return tuple(out)

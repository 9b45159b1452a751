"""A packed tensor's share, usable wherever a record is (a ``RecordView``): what weight pairing
hands a pair when one side keeps several tensors in one (torch MHA's ``in_proj_weight``, a
fused q|k|v); and the output of a fused q|k|v projection packed another way than the other
side's, in the other side's order (``Regrouped``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from padiff_trace import STAT_FIELDS, Record
from padiff_trace.arrays import blocks_in_order, decode, packed_part, packed_rows, stats_tuple
from padiff_trace.matching import WeightMap, WeightPair

from ._records import RecordView

__all__ = ["Regrouped", "RowSlice", "regroup_orders"]


class RowSlice(RecordView):
    """Rows ``[lo, hi)`` of a record (a packed tensor's share: torch MHA's ``in_proj_*``, a fused
    q|k|v), usable wherever a record is.

    Without ``perm`` the rows are those of the stored tensor and only they are read. With
    ``perm`` (stored -> canonical layout, e.g. transformers' ``Conv1D`` stores ``[in, out]``)
    the rows are the canonical tensor's: the record is read whole once and the share kept.
    Keeps the packed record's sequence number, step and stack; ``position`` names the rows
    (``in_proj_weight[0:16]``); statistics are the rows' own. With ``groups`` > 1 (q|k|v packed
    head by head) the share is rows ``[lo, hi)`` of each of that many equal blocks, read whole too.
    With ``blocks`` the canonical rows are first taken as equal blocks in that order (gates
    stacked in another order: ``arrays.blocks_in_order``). With ``index`` the share is of the
    canonical tensor's element ``index`` along axis 0 (a stack of packed experts).
    """

    def __init__(self, base: Record, lo: int, hi: int, perm: tuple[int, ...] | None = None, groups: int = 1,
                 axis: int = 0, blocks: tuple[int, ...] | None = None, index: int | None = None) -> None:
        canon = tuple(base.shape[k] for k in perm) if perm is not None else tuple(base.shape)
        cut = f"[{lo}:{hi}]" if axis == 0 else f"[{', '.join([':'] * axis + [f'{lo}:{hi}'])}]"
        if index is not None:  # a stack's element, then its share
            canon = canon[1:]
            cut = f"[{index}]{cut}"
        position = f"{base.position}{cut}" if perm is None else f"{base.position}.T{cut}"
        if groups > 1:
            position += f" of {groups} groups"
        if blocks is not None:
            position = f"{position} (blocks {list(blocks)})"
        shape = canon[:axis] + ((hi - lo) * groups,) + canon[axis + 1 :]
        super().__init__(base, shape, position)
        self.lo, self.hi, self.perm, self.groups, self.axis, self.blocks = lo, hi, perm, groups, axis, blocks
        self.index = index
        self.row_elems = int(np.prod(canon[1:], dtype=np.int64))
        self._stats: dict[str, float] | None = None
        self._rows: np.ndarray | None = None

    def canonical_rows(self) -> np.ndarray:
        """The share, flat, decoded (``perm`` slices only: materialised once)."""
        if self._rows is None:
            full = decode(self.base.trace.read_stored(self.base, 0, self.base.numel), self.base.dtype)
            canon = full.reshape(self.base.shape)
            if self.perm is not None:
                canon = np.transpose(canon, self.perm)
            if self.index is not None:
                canon = canon[self.index]
            if self.blocks is not None:
                canon = blocks_in_order(canon, self.blocks)
            self._rows = packed_part(canon, self.lo, self.hi, axis=self.axis, groups=self.groups).reshape(-1)
        return self._rows

    @property
    def _whole(self) -> bool:
        """Read the record whole (a permuted layout, a share spread over groups or along a later axis)."""
        return self.perm is not None or self.groups > 1 or self.axis != 0 or self.blocks is not None or self.index is not None

    def elements(self, start: int, stop: int, view: bool = True, checks: list[Callable[[], None]] | None = None) -> np.ndarray:
        """Elements [start, stop) of the share, flat, decoded but not upcast (see ``_metrics._read``)."""
        if self._whole:
            return self.canonical_rows()[start:stop]
        off = self.lo * self.row_elems
        return decode(self.base.trace.read_stored(self.base, off + start, off + stop, view=view, checks=checks), self.dtype)

    @property
    def stats(self) -> dict[str, float]:
        if self._stats is None:
            if self._whole:
                rows = self.canonical_rows()
                vals = stats_tuple(rows, str(rows.dtype))
            else:
                stored = self.base.trace.read_stored(self.base, self.lo * self.row_elems, self.hi * self.row_elems)
                vals = stats_tuple(stored, self.base.dtype)
            self._stats = {k: float(v) for k, v in zip(STAT_FIELDS, vals)}
        return self._stats

    def __repr__(self) -> str:
        per = f" in each of {self.groups} groups" if self.groups > 1 else ""
        where = ("rows" if self.axis == 0 else f"axis {self.axis}") + (f" of element {self.index}" if self.index is not None else "")
        return f"RowSlice({self.name}, {where} {self.lo}:{self.hi}{per} of {list(self.base.shape)})"


def regroup_orders(wm: WeightMap | None, shapes: Mapping[str, tuple[int, ...]] | None = None
                   ) -> tuple[dict[tuple[str, str], np.ndarray], dict[tuple[str, str], np.ndarray]]:
    """(A module, B module) -> the order that takes the last axis of A's output into B's, and the
    same for its input: where the weight map pairs a module's weight in parts that lie in
    another order on each side. Outputs: the output axis in shares (fused q|k|v projections
    packed in different groups, paddlenlp's ``qkv_proj`` head by head against GPT-2's
    ``c_attn``; chunks of features concatenated in another order). Inputs: the input axis of a
    weight cut in reordered parts (a Linear after features concatenated in another order), and
    the one axis of a module whose weights are all 1-D (a norm: its input is in the order of
    its output); and the outputs of a weight whose rows are gates stacked in another order
    (``WeightPair.a_blocks``: a convolution's output channels). ``shapes``: A's weight name ->
    its shape (unknown: not 1-D, no gates)."""
    shares: dict[tuple[tuple[str, str], int], list[WeightPair]] = {}
    for p in wm.pairs if wm is not None else ():
        if p.a_part is not None and p.b_part is not None and p.axis in (0, 1) and p.a.endswith(".weight") and not p.indexed:
            shares.setdefault(((p.a.rpartition(".")[0], p.b.rpartition(".")[0]), p.axis), []).append(p)
    dims: dict[str, list[int]] = {}
    for name, shape in (shapes or {}).items():
        dims.setdefault(name.rpartition(".")[0], []).append(len(shape))
    outs: dict[tuple[str, str], np.ndarray] = {}
    ins: dict[tuple[str, str], np.ndarray] = {}
    for (key, axis), pieces in shares.items():
        n = sum((p.a_part[1] - p.a_part[0]) * p.a_groups for p in pieces if p.a_part is not None)
        order = np.full(n, -1, dtype=np.int64)
        for p in pieces:
            assert p.a_part is not None and p.b_part is not None
            a_idx, b_idx = packed_rows(n, *p.a_part, p.a_groups), packed_rows(n, *p.b_part, p.b_groups)
            if len(a_idx) == len(b_idx) and b_idx.max(initial=-1) < n and a_idx.max(initial=-1) < n:
                order[b_idx] = a_idx
        if not (order >= 0).all() or (order == np.arange(n)).all():  # not a permutation, or none
            continue
        (ins if axis == 1 else outs)[key] = order
        if axis == 0 and dims.get(key[0]) and max(dims[key[0]]) == 1:
            ins[key] = order  # elementwise over the axis: the input is in the output's order
    for p in wm.pairs if wm is not None else ():  # gates stacked in another order: the outputs too
        if p.a_blocks is not None and p.a.endswith(".weight") and (p.a_part is None or p.axis != 0):
            shape = (shapes or {}).get(p.a, ())
            n = shape[p.a_perm[0]] if p.a_perm is not None and len(p.a_perm) == len(shape) else shape[0] if shape else 0
            key = (p.a.rpartition(".")[0], p.b.rpartition(".")[0])
            if n and n % len(p.a_blocks) == 0:
                outs.setdefault(key, blocks_in_order(np.arange(n), p.a_blocks))
    return outs, ins


class Regrouped(RecordView):
    """A record with one axis read in another order (``regroup_orders``): A's fused q|k|v output
    as B packs it (the last axis), or a convolution's output channels (axis 1). Values are those
    of the record, so are the statistics. Reads only the slabs (``axis`` and after) a range of
    elements touches."""

    def __init__(self, base: Record, order: np.ndarray, axis: int = -1) -> None:
        super().__init__(base, tuple(base.shape), f"{base.position} (regrouped)")
        self.order = order
        self.axis = axis % len(base.shape) if base.shape else 0

    def elements(self, start: int, stop: int, view: bool = True, checks: list[Callable[[], None]] | None = None) -> np.ndarray:
        n = len(self.order)
        rest = int(np.prod(self.shape[self.axis + 1:], dtype=np.int64))
        size = n * rest  # one slab: the regrouped axis and every axis after it
        r0, r1 = start // size, -(-stop // size)
        rows = decode(self.base.trace.read_stored(self.base, r0 * size, r1 * size, checks=checks), self.base.dtype)
        got = rows.reshape(r1 - r0, n, rest)[:, self.order, :]
        return np.ascontiguousarray(got).reshape(-1)[start - r0 * size : stop - r0 * size]

    @property
    def stats(self) -> dict[str, float]:
        return self.base.stats

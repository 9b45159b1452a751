"""The result of weight matching: which tensor of A is which tensor of B, and how to convert.

A ``WeightMap`` is what ``record --weights-from`` copies through, what it writes beside
the trace (``weightmap.json``), what ``padiff-trace align`` prints, and what the
analyzer compares weights and parameter gradients by. Its JSON form is a mapping file
(``"weights"`` entries), so an edited copy can be passed back with ``--mapping``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..arrays import SPACE_TO_DEPTH_ORDERS, depth_fits

__all__ = ["CANNOT_MATCH", "CONFIDENCE", "SUMMED", "TensorInfo", "WeightPair", "WeightMap", "WEIGHT_MAP_FILE", "inverse_perm",
           "summed_groups"]

WEIGHT_MAP_FILE = "weightmap.json"  # in the trace directory of a model that received weights

# how a pair was found -> how sure the matcher is (shown in weightmap.json and `align`)
SUMMED = "summed"  # how a pair of a summed group was found (``summed_groups``)
CANNOT_MATCH = "cannot match "  # how a refused transfer's one line starts (``run`` then tries the call order)

CONFIDENCE: dict[str, str] = {
    "mapping": "given",  # a mapping file said so
    "name": "high",  # the same role by module name
    "structure": "high",  # type, local name, shape and block agree
    "packed": "high",  # parts of a fused tensor: siblings whose sizes add up
    "derived": "high",
    "shared derived": "high",
    "role+order": "medium",  # type, local name and shape agree; names say nothing: registration order
    "reshape": "medium",  # the same element count, a known layout family (head split/merge)
    "shape+order": "low",  # types differ: local name, shape and registration order only
    "call order": "medium",
    "extra rows": "medium",  # lookup tables of one width, one side's each with the same rows more  # one class, in the order both models call it, across blocks drawn apart
    "only candidate": "low",  # the one tensor left of its shape
    "units": "medium",  # child modules of partnered modules, the one order-preserving way their tensors fit
    "tied": "low",  # an output projection the other side ties to its embedding
    "copies": "low",  # one module on one side, copies of it computing the same on the other
    "summed": "medium",  # one bias against the biases of the parts its weight is cut into along the input axis
    "shadow": "medium",  # copies of two paired tensors (an EMA, an averaged model): the same values before step 0
    "order only": "low",  # same shape, same place, nothing else told them apart: the order both models compute
    "space-to-depth": "medium",  # a kernel over pixel phases against the strided one; the recorded input shows the phases' order
}


@dataclass(frozen=True)
class TensorInfo:
    """One parameter or buffer of one side, as the matcher sees it."""

    name: str  # full name: "encoder.layers.0.linear1.weight"
    module: str  # owning module path ("" for the root)
    local: str  # name within the module: "weight"
    module_type: str  # class name of the owning module
    shape: tuple[int, ...]
    is_param: bool
    trainable: bool = True
    persistent: bool = True  # in the state dict (non-persistent buffers are derived)
    pattern: bool = False  # a buffer of 0/1 entries (``is_pattern``): a mask built from the configuration
    integer: bool = False  # a buffer of integers or booleans (a pointer, a counter, indices)


@dataclass(frozen=True)
class WeightPair:
    """A's tensor (or a part of it) is B's tensor (or a part of it).

    ``*_perm`` takes that side's stored axes to the canonical layout; ``*_part`` is a
    ``[start, stop)`` range along ``axis`` of the canonical tensor (a packed tensor's
    share), None for the whole tensor; with ``*_groups`` > 1 that side's range is taken within
    each of that many equal blocks of the axis (q|k|v packed head by head, ``arrays.packed_part``).
    ``*_index``: that side's canonical tensor is a stack and the pair is about its element
    ``index`` along axis 0, which the part (and ``axis``) then cut (experts' gate|up rows stacked
    ``[experts, 2 * ffn, d]``).
    """

    a: str
    b: str
    a_perm: tuple[int, ...] | None
    b_perm: tuple[int, ...] | None
    how: str  # "mapping", "structure", "name", "packed", "shape+order", "derived"
    a_part: tuple[int, int] | None = None
    b_part: tuple[int, int] | None = None
    axis: int = 0
    transfer: bool = True  # False: derived state, compared but never copied
    a_groups: int = 1
    b_groups: int = 1
    a_axes: tuple[int, ...] | None = None  # a mapping file reordered that side's canonical axes (round trip)
    b_axes: tuple[int, ...] | None = None
    logged: str | None = None  # the side ("a" or "b") keeping the other's values as their logarithm (``_logspace``)
    # A's canonical axis 0 as equal blocks taken in this order before any part (``arrays.blocks_in_order``:
    # gates stacked in another order); a mapping's B-side order is kept as A's inverse
    a_blocks: tuple[int, ...] | None = None
    # B's values are A's plus this (``_offsets``: a norm that scales by ``1 + w`` keeps ``w``, the
    # other side's by ``w`` keeps ``1 + w``); gradients are the same on both sides
    offset: float = 0.0
    a_index: int | None = None
    b_index: int | None = None
    # (side, r, order): that side's convolution reads the other's input as r x r pixel phases stacked
    # in ``order`` (``_depth``: a Focus stem against the strided convolution it equals)
    depth: tuple[str, int, str] | None = None

    @property
    def indexed(self) -> bool:
        """Whether a side's tensor is a stack this pair takes one element of (``*_index``)."""
        return self.a_index is not None or self.b_index is not None

    @property
    def relative_perm(self) -> tuple[int, ...] | None:
        """Permutation taking A's stored axes to B's stored layout (whole tensors only)."""
        pa, pb = self.a_perm, self.b_perm
        if (pa is None and pb is None) or (pa is not None and pb is not None and len(pa) != len(pb)):
            return None  # none, or each side's own axes around a reshape (a Linear against a conv's): ``conversion``
        n = len(pa if pa is not None else pb or ())
        ca = pa or tuple(range(n))
        inv_b = inverse_perm(pb) if pb is not None else tuple(range(n))
        perm = tuple(ca[k] for k in inv_b)
        return None if perm == tuple(range(n)) else perm

    @property
    def reshape(self) -> bool:
        """A's tensor becomes B's by a reshape (a head split or merge), after any permutation."""
        return self.how == "reshape"

    def conversion(self) -> str:
        parts = ["reshape"] if self.reshape else []
        if self.how == SUMMED:
            parts.append("one side's tensor is the sum of the other's")
        if self.a_part is None and self.b_part is None and self.relative_perm is not None:
            parts.append("transpose" if self.relative_perm == (1, 0) else f"permute {list(self.relative_perm)}")
        elif self.a_perm is not None and self.b_perm is not None and len(self.a_perm) != len(self.b_perm):
            parts.append(f"A's axes in the order {list(self.a_perm)}, B's in the order {list(self.b_perm)}")
        for side, part, groups, index in (("A", self.a_part, self.a_groups, self.a_index),
                                          ("B", self.b_part, self.b_groups, self.b_index)):
            if index is not None:
                parts.append(f"{side} element {index} of axis 0" + (", in it" if part is not None else ""))
            if part is not None:
                per = f" in each of {groups} groups" if groups > 1 else ""
                parts.append(f"{side} part {part[0]}:{part[1]} of axis {self.axis}{per}")
        if self.a_blocks is not None:
            parts.insert(0, f"A's rows as {len(self.a_blocks)} blocks in the order {list(self.a_blocks)}")
        if self.logged is not None:
            parts.append(f"{self.logged.upper()} keeps the logarithm of the other's values")
        if self.offset:
            parts.append(f"B holds A's values {self.offset:+g}")
        if self.depth is not None:
            side, r, order = self.depth
            parts.append(f"{side.upper()}'s kernel over {r}x{r} pixel phases stacked in {order} order as the "
                         f"stride-{r} kernel it equals")
        return ", ".join(parts) or "copy"


def summed_groups(pairs: list[WeightPair]) -> list[tuple[str, list[WeightPair]]]:
    """The summed pairs (``how`` "summed") by the one tensor they share: (its side, "a" or "b",
    its pairs in the order of the map). That tensor is the sum of its partners: a module that
    reads a concatenation holds one bias where the other side's per-part modules hold one each.
    A transfer writes the one into the first partner and zeros into the rest (or the partners'
    sum into the one), a comparison sets the one against the partners' sum."""
    by_a: dict[str, list[WeightPair]] = {}
    by_b: dict[str, list[WeightPair]] = {}
    for p in pairs:
        if p.how == SUMMED:
            by_a.setdefault(p.a, []).append(p)
            by_b.setdefault(p.b, []).append(p)
    out = [("a", ps) for ps in by_a.values() if len(ps) > 1]
    out += [("b", ps) for ps in by_b.values() if len(ps) > 1]
    return out


def inverse_perm(perm: tuple[int, ...]) -> tuple[int, ...]:
    """The permutation that undoes ``perm``."""
    out = [0] * len(perm)
    for i, p in enumerate(perm):
        out[p] = i
    return tuple(out)


@dataclass
class WeightMap:
    """Every tensor of both sides: paired, skipped (with why), or unmatched."""

    a_framework: str
    b_framework: str
    pairs: list[WeightPair] = field(default_factory=list)
    skipped: list[tuple[str, str, str]] = field(default_factory=list)  # (side "a"/"b", name, why)
    unmatched_a: list[TensorInfo] = field(default_factory=list)  # trainable, no counterpart
    unmatched_b: list[TensorInfo] = field(default_factory=list)
    suggestions: dict[str, list[str]] = field(default_factory=dict)  # unmatched name -> candidates
    # unmatched tensors in the same slot (type, name, block) whose shapes differ: never copied,
    # but reported by a comparison as a failing pair (a vocabulary or width mismatch is a bug)
    mismatched: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.unmatched_a or self.unmatched_b)

    @property
    def ambiguous(self) -> list[str]:
        """Unmatched trainable tensors a transfer must not copy around: those with a same-shape
        candidate left on the other side (the matcher could not tell which is which) and those
        whose slot holds another shape on the other side (a width or vocabulary mismatch). An
        unmatched tensor with neither is one-sided (a structural difference)."""
        odd = {n for pair in self.mismatched for n in pair}  # the same slot holds another shape
        return [n for t in (*self.unmatched_a, *self.unmatched_b)
                if (n := t.name) in odd or (self.suggestions.get(n))]

    def one_sided(self) -> dict[str, dict[str, list[str]]]:
        """Side ("a"/"b") -> owning module -> its trainable tensors with no counterpart on the
        other side (a structural difference: a model built with an optional part the other lacks)."""
        out: dict[str, dict[str, list[str]]] = {}
        blocking = set(self.ambiguous)
        for side, items in (("a", self.unmatched_a), ("b", self.unmatched_b)):
            for t in items:
                if t.name not in blocking:
                    out.setdefault(side, {}).setdefault(t.module or "<root>", []).append(t.local)
        return out

    def one_sided_text(self, a_label: str = "A", b_label: str = "B", limit: int = 4) -> str:
        """One line: the one-sided tensors by module, or "" when there are none."""
        parts = []
        for side, label in (("a", a_label), ("b", b_label)):
            mods = self.one_sided().get(side, {})
            if mods:
                names = ", ".join(f"{m} ({', '.join(ts)})" for m, ts in list(mods.items())[:limit])
                more = f" and {len(mods) - limit} more module(s)" if len(mods) > limit else ""
                n = sum(len(ts) for ts in mods.values())
                parts.append(f"{n} trainable tensor(s) only in {label}: {names}{more}")
        return "; ".join(parts)

    def side_keys(self) -> tuple[str, str]:
        """The JSON keys naming A's and B's tensors: the frameworks, when they differ."""
        if self.a_framework != self.b_framework and {self.a_framework, self.b_framework} <= {"paddle", "torch"}:
            return self.a_framework, self.b_framework
        return "source", "target"

    def to_json(self, **extra: Any) -> dict[str, Any]:
        ka, kb = self.side_keys()
        weights = []
        for p in self.pairs:
            e: dict[str, Any] = {ka: p.a, kb: p.b, "how": p.how, "confidence": CONFIDENCE.get(p.how, "low"),
                                 "convert": p.conversion()}
            if p.a_part is not None:
                e[f"{ka}_part"] = list(p.a_part)
            if p.b_part is not None:
                e[f"{kb}_part"] = list(p.b_part)
            if p.a_part is not None or p.b_part is not None:
                e["axis"] = p.axis
            for k, index in ((ka, p.a_index), (kb, p.b_index)):
                if index is not None:
                    e[f"{k}_index"] = index
            for k, groups in ((ka, p.a_groups), (kb, p.b_groups)):
                if groups > 1:
                    e[f"{k}_groups"] = groups
            for k, axes in ((ka, p.a_axes), (kb, p.b_axes)):
                if axes is not None:
                    e[f"{k}_axes"] = list(axes)
            if p.a_blocks is not None:
                e[f"{ka}_blocks"] = list(p.a_blocks)
            if p.offset:
                e[f"{kb}_offset"] = p.offset
            if p.depth is not None:
                e[f"{ka if p.depth[0] == 'a' else kb}_depth"] = {"block": p.depth[1], "order": p.depth[2]}
            if not p.transfer:
                e["transfer"] = False
            if p.how == SUMMED:
                e["sum"] = True  # read back by a mapping file: the pair stays one of its summed group
            weights.append(e)
        skipped = [{(ka if side == "a" else kb): name, "skip": True, "why": why} for side, name, why in self.skipped]
        out: dict[str, Any] = {"version": 1, **extra, "weights": weights + skipped}
        if not self.ok:
            out["unmatched"] = {ka: [t.name for t in self.unmatched_a], kb: [t.name for t in self.unmatched_b]}
            sided = self.one_sided()
            if sided:  # a structural difference: transferred around, listed in the report
                out["one_sided"] = {ka if s == "a" else kb: mods for s, mods in sided.items()}
        return out

    def dumps(self, **extra: Any) -> str:
        return json.dumps(self.to_json(**extra), indent=1)

    def problem_text(self, a_label: str, b_label: str, limit: int = 6) -> str:
        """One line: what could not be matched on each side, and the mapping entry that would fix it."""
        ka, kb = self.side_keys()

        def listing(items: list[TensorInfo]) -> str:
            names = ", ".join(f"{t.name} {list(t.shape)} ({t.module_type})" for t in items[:limit])
            return (names or "-") + (f" and {len(items) - limit} more" if len(items) > limit else "")

        amb = set(self.ambiguous)
        ua = [t for t in self.unmatched_a if t.name in amb] or self.unmatched_a
        ub = [t for t in self.unmatched_b if t.name in amb] or self.unmatched_b
        text = (
            f"{CANNOT_MATCH}{len(ua)} {a_label} and {len(ub)} {b_label} trainable "
            f"tensor(s); {a_label}: {listing(ua)}; {b_label}: {listing(ub)}"
        )
        why = ""
        depth = next(((x, y, k, r) for x in ua for y in ub
                      for k, r in ((ka, depth_fits(x.shape, y.shape)), (kb, depth_fits(y.shape, x.shape))) if r), None)
        if depth is not None:  # a kernel over pixel phases whose recorded input shows no known order
            x, y, k, r = depth
            entry = f'{{"{ka}": "{x.name}", "{kb}": "{y.name}", "{k}_depth": {{"block": {r}, "order": ORDER}}}}'
            why = (f" where {k}'s kernel reads {r}x{r} pixel phases stacked in an ORDER of {sorted(SPACE_TO_DEPTH_ORDERS)}"
                   " (its recorded input showed none of them)")
        elif ua:
            t = ua[0]
            other = (self.suggestions.get(t.name) or [f"<a name in the {b_label}>"])[0]
            entry = f'{{"{ka}": "{t.name}", "{kb}": "{other}"}}'
        else:
            t = ub[0]
            other = (self.suggestions.get(t.name) or [f"<a name in the {a_label}>"])[0]
            entry = f'{{"{ka}": "{other}", "{kb}": "{t.name}"}}'
        return (
            f"{text}; pin pairs with mapping=FILE holding {{\"weights\": [{entry}]}}{why} "
            f'(or {{"{kb}": NAME, "skip": true}} to leave a tensor as the model initialised it)'
        )

    def text(self, a_label: str = "A", b_label: str = "B") -> str:
        """The map as a table: one line per pair (how it was found, the conversion), then the
        skipped and unmatched tensors."""
        lines = [f"weight map {a_label} ({self.a_framework}) -> {b_label} ({self.b_framework}): " + self.summary_lines()[0]]
        width = max((len(p.a) for p in self.pairs), default=0)
        for p in self.pairs:
            note = "" if p.transfer else "  [derived: compared, not copied]"
            lines.append(f"  {p.a:<{width}}  ->  {p.b}   ({p.how}; {p.conversion()}){note}")
        lines += ["  " + line for line in self.summary_lines()[1:]]
        for label, items in ((a_label, self.unmatched_a), (b_label, self.unmatched_b)):
            for t in items:
                cands = self.suggestions.get(t.name)
                lines.append(f"  UNMATCHED {label} {t.name} {list(t.shape)} ({t.module_type})"
                             + (f"; same shape: {', '.join(cands)}" if cands else ""))
        return "\n".join(lines)

    def summary_lines(self) -> list[str]:
        """Counts by how each pair was found, and every skipped tensor with its reason."""
        hows: dict[str, int] = {}
        for p in self.pairs:
            hows[p.how] = hows.get(p.how, 0) + 1
        n_tr = sum(p.transfer for p in self.pairs)
        lines = [
            f"{len(self.pairs)} tensor pairs ({n_tr} copied): "
            + ", ".join(f"{n} by {h}" for h, n in sorted(hows.items(), key=lambda kv: -kv[1]))
        ]
        for side, name, why in self.skipped:
            lines.append(f"skipped {'A' if side == 'a' else 'B'} {name}: {why}")
        return lines

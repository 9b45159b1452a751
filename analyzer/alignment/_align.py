"""Hierarchical alignment of two call forests: children within paired parents, pins first.

The unit of work is a *segment*: two lists of sibling calls (the children of a paired
parent, or a gap between two pairs). A segment is split at the pins it holds (mapping
pins, weight anchors, the roots), then each piece is aligned as a small sequence problem
(``padiff_trace.matching._match.align`` on its own score matrix). Pairs found this way are parents
of the next segments. Where a gap between two pairs holds unpaired calls on both sides,
the calls with children are replaced by their children and the gap is aligned again, so a
call wrapped in an extra container on one side still pairs (``fc1`` vs ``ffn_in.0``).
When nothing is left to expand, the calls still facing each other in the gap may pair as a
*type difference* (``GELU`` vs ``ReLU`` in the same slot, same shapes), or, the only call of its
type in the gap on each side with inputs of the same shapes, as a *shape difference* (a pooling
whose ``ceil_mode`` differs: its output shape does).

Every call takes part in O(depth) small alignments; a segment larger than ``_sequence.DENSE_CELLS``
(an ``nn.Sequential`` of 10k ops) is aligned in overlapping windows, so no step ever
builds an n*m matrix over all of its calls.
"""

from __future__ import annotations

import itertools
import logging
from collections import Counter, deque
from dataclasses import dataclass, field

import numpy as np

from padiff_trace.matching import canonical_type, is_known_type, types_equivalent

from ._apart import Apart
from ._calls import Call, CallTree, IdTable, RowMap, as_int_ids, shape_sig
from ._carriers import Held, resolve_carriers
from ._sequence import monotone, order

__all__ = ["ONE_SIDED_TYPES", "Features", "Found", "Segmenter", "features"]

logger = logging.getLogger(__name__)

# Canonical types that one port often has and the other not (a no-op module vs nothing):
# never paired as a type difference with whatever stands in the other model's slot.
ONE_SIDED_TYPES = frozenset(
    {"dropout", "dropout1d", "dropout2d", "dropout3d", "alphadropout", "identity", "flatten", "sequential"}
)

_TYPE_EQUAL, _TYPE_OTHER, _TYPE_UNKNOWN = 1, 0, -1  # types_equivalent: True / False / None
# tie-breaking bonuses of a positive score: all output shapes, input shapes, leaf name, path, depth equal
_BONUS = np.array([0.5, 0.25, 0.25, 0.25, 0.1], dtype=np.float32)


@dataclass(frozen=True, slots=True)
class Found:
    """A call pair found by alignment: ``how`` is "order", "type", "shape" or "contents" (the same pins inside)."""

    a: Call
    b: Call
    how: str


# columns of ``Features.cols``
FIRST, FULL, INS, GRP, LEAF, PATH, TNAME, DEPTH = range(8)


@dataclass(eq=False)
class Features:
    """Per-call integer ids shared by both sides, so a score matrix is one numpy compare."""

    row_a: RowMap  # A call -> row
    row_b: RowMap  # B call -> row (after A's rows)
    cols: np.ndarray  # [calls, 8]: first output shape, all output shapes, input shapes, canonical
    # type, last path component, path, type name (ids: equal values, equal ids), depth
    known: np.ndarray  # [calls] a framework class we know
    type_names: list[str]  # TNAME id -> the type name


def features(ca: list[Call], cb: list[Call]) -> Features:
    calls = ca + cb
    first, full = IdTable(), IdTable()
    out_ids = np.empty(len(calls), dtype=np.int32)
    full_ids = np.empty(len(calls), dtype=np.int32)
    for k, c in enumerate(calls):  # one call's records at a time: nothing per call is kept but ids
        o = shape_sig(c.outputs)
        out_ids[k], full_ids[k] = first.id(o[0] if o else None), full.id(o)
    types = [c.module_type for c in calls]
    tname = as_int_ids(types)
    names = [""] * (int(tname.max()) + 1 if len(tname) else 0)
    for t, k in zip(types, tname.tolist()):
        names[k] = t
    grp_of = {t: group(t) for t in names}
    known_of = {t: is_known_type(t) for t in names}
    path = as_int_ids([c.module for c in calls])
    paths = [""] * (int(path.max()) + 1 if len(path) else 0)
    for c, k in zip(calls, path.tolist()):
        paths[k] = c.module
    leaf_of = as_int_ids([leaf(m) for m in paths])  # per distinct path
    ins = IdTable()
    cols = np.stack([
        out_ids,
        full_ids,
        np.fromiter((ins.id(shape_sig(c.inputs)) for c in calls), dtype=np.int32, count=len(calls)),
        as_int_ids([grp_of[t] for t in types]),
        leaf_of[path] if len(path) else path,
        path,
        tname,
        np.fromiter((c.depth for c in calls), dtype=np.int32, count=len(calls)),
    ], axis=1).astype(np.int32) if calls else np.zeros((0, 8), dtype=np.int32)
    return Features(
        row_a=RowMap(ca, 0),
        row_b=RowMap(cb, len(ca)),
        cols=cols,
        known=np.array([known_of[t] for t in types], dtype=bool),
        type_names=names,
    )


def leaf(path: str) -> str:
    return path.rsplit(".", 1)[-1]


def group(t: str) -> str:
    c = canonical_type(t)
    return "batchnorm" if c.startswith("batchnorm") and c[9:] in ("", "1d", "2d", "3d") else c


_Segment = tuple[list[Call], list[Call]]


@dataclass(eq=False)
class Segmenter:
    """Aligns the call forests ``ta``/``tb`` given fixed pins; ``run`` returns the pairs it found."""

    ta: CallTree
    tb: CallTree
    feat: Features
    pin_a: dict[int, Call]  # A call id -> its pinned B call
    pin_b: dict[int, Call]  # B call id -> its pinned A call
    hidden_a: set[int] = field(default_factory=set)  # inside black boxes: never paired
    hidden_b: set[int] = field(default_factory=set)
    apart: Apart = field(default_factory=Apart)  # call pairs the weight map rules out
    _types: dict[tuple[int, int], int] = field(default_factory=dict)  # type-name id pair -> _TYPE_*
    _contents: dict[tuple[str, int], Counter[str]] = field(default_factory=dict)
    _held: Held | None = None  # pins inside every call (``_carriers``), built on first use
    _carried_a: dict[int, Call] = field(default_factory=dict)  # carrier pairs found: A id -> B call
    _carried_b: set[int] = field(default_factory=set)

    # ------------------------------------------------------------ the walk
    def run(self, opened: list[tuple[Call, Call]]) -> list[Found]:
        """Align the roots, then the children of every pair; ``opened``: pinned pairs to descend into."""
        found: list[Found] = []
        queue: deque[_Segment] = deque([(self.ta.roots, self.tb.roots)])
        queue.extend((self.ta.children(x), self.tb.children(y)) for x, y in opened)
        segments = 0
        while queue:
            xs, ys = queue.popleft()
            if not xs or not ys:
                continue
            segments += 1
            pairs, gaps = self._segment(xs, ys)
            for p in pairs:
                found.append(p)
                queue.append((self.ta.children(p.a), self.tb.children(p.b)))
            queue.extend(gaps)
        logger.debug("aligned %d segments, %d pairs found", segments, len(found))
        return found

    def _free_a(self, c: Call) -> bool:
        return c.id not in self.pin_a and c.id not in self.hidden_a and c.id not in self._carried_a

    def _free_b(self, c: Call) -> bool:
        return c.id not in self.pin_b and c.id not in self.hidden_b and c.id not in self._carried_b

    def _carriers(self, xs: list[Call], ys: list[Call]) -> tuple[list[Call], list[Call], list[Found]]:
        """Bring the pins held deeper inside the segment's calls up to its level (``_carriers``)."""
        if len(self.pin_a) <= 1:  # only the roots are pinned: nothing to bring up
            return xs, ys, []
        if self._held is None:
            self._held = Held.build(self.ta, self.tb, self.pin_a, self.pin_b)
        xs, ys, got = resolve_carriers(xs, ys, self.ta, self.tb, self._held, self._free_a, self._free_b)
        for x, y in got:
            self._carried_a[x.id] = y
            self._carried_b.add(y.id)
        return xs, ys, [Found(x, y, "contents") for x, y in got]

    def _segment(self, xs: list[Call], ys: list[Call]) -> tuple[list[Found], list[_Segment]]:
        """Split at the pins inside the segment (held ones brought up), align each piece between them."""
        xs, ys, pairs = self._carriers(xs, ys)
        pos_b = {y.id: j for j, y in enumerate(ys)}
        fixed = []
        for i, x in enumerate(xs):
            y = self.pin_a.get(x.id) or self._carried_a.get(x.id)
            if y is not None and y.id in pos_b:
                fixed.append((i, pos_b[y.id]))
        bounds = [(-1, -1), *monotone(fixed), (len(xs), len(ys))]
        gaps: list[_Segment] = []
        for (i0, j0), (i1, j1) in itertools.pairwise(bounds):
            fx = [x for x in xs[i0 + 1 : i1] if self._free_a(x)]
            fy = [y for y in ys[j0 + 1 : j1] if self._free_b(y)]
            if fx and fy:
                self._piece(fx, fy, pairs, gaps)
        return pairs, gaps

    def _piece(self, fx: list[Call], fy: list[Call], pairs: list[Found], gaps: list[_Segment]) -> None:
        """Pair free calls by order; expand or type-pair what faces each other in the gaps."""
        got = order(fx, fy, self.score)
        pairs.extend(Found(fx[i], fy[j], "order") for i, j in got)
        for (i0, j0), (i1, j1) in zip([(-1, -1), *got], [*got, (len(fx), len(fy))]):
            gx, gy = fx[i0 + 1 : i1], fy[j0 + 1 : j1]
            if not gx or not gy:
                continue
            ex, ey = _expand(self.ta, gx), _expand(self.tb, gy)
            if ex is not None or ey is not None:  # aligned again as a segment of its own
                gaps.append((gx if ex is None else ex, gy if ey is None else ey))
            else:
                pairs.extend(self._apart(self.type_pairs(gx, gy) or self.shape_pairs(gx, gy) or self.slot_pairs(gx, gy)))

    # ------------------------------------------------------------ evidence
    def _rows(self, xs: list[Call], ys: list[Call]) -> tuple[np.ndarray, np.ndarray]:
        return self.feat.row_a.rows(xs), self.feat.row_b.rows(ys)

    def _type_codes(self, ta: np.ndarray, tb: np.ndarray) -> np.ndarray:
        """``types_equivalent`` of every (A type id, B type id) as _TYPE_* codes, each pair asked once."""
        ua = {t: k for k, t in enumerate(dict.fromkeys(ta.tolist()))}
        ub = {t: k for k, t in enumerate(dict.fromkeys(tb.tolist()))}
        table = np.array([[self._equivalent(u, v) for v in ub] for u in ua], dtype=np.int8)
        ia = np.fromiter((ua[t] for t in ta.tolist()), dtype=np.int64, count=len(ta))
        ib = np.fromiter((ub[t] for t in tb.tolist()), dtype=np.int64, count=len(tb))
        return table[ia][:, ib]

    def _equivalent(self, u: int, v: int) -> int:
        got = self._types.get((u, v))
        if got is None:
            eq = types_equivalent(self.feat.type_names[u], self.feat.type_names[v])
            got = self._types[(u, v)] = _TYPE_UNKNOWN if eq is None else (_TYPE_EQUAL if eq else _TYPE_OTHER)
        return got

    def score(self, xs: list[Call], ys: list[Call]) -> np.ndarray:
        """Evidence that call x of A and call y of B are the same computation (0 = none).

        Positive only with the same first output shape and either equivalent framework
        types, or both user-defined with the same class or leaf name, or with overlapping
        contents. Bonuses break ties (all shapes, input shapes, leaf, path, depth).
        """
        ra, rb = self._rows(xs, ys)
        fa, fb = self.feat.cols[ra], self.feat.cols[rb]
        same = fa[:, None, :] == fb[None, :, :]  # [n, m, column]
        shape_ok = same[..., FIRST]
        eq = self._type_codes(fa[:, TNAME], fb[:, TNAME])
        s = np.zeros((len(xs), len(ys)), dtype=np.float32)
        s[shape_ok & (eq == _TYPE_EQUAL)] = 2.0
        both_user = shape_ok & ~self.feat.known[ra][:, None] & ~self.feat.known[rb][None, :]
        if both_user.any():
            user_named = both_user & (same[..., GRP] | same[..., LEAF])
            s[user_named] = 1.5
            rest = np.argwhere(both_user & ~user_named)  # different names: compare what they contain
            for i, j in rest.tolist():
                sim = _jaccard(self._contents_of("a", xs[i]), self._contents_of("b", ys[j]))
                if sim >= 0.5:
                    s[i, j] = 0.5 + sim
        bonus = same[..., (FULL, INS, LEAF, PATH, DEPTH)].astype(np.float32) @ _BONUS
        s[self.apart.mask(xs, ys)] = 0.0
        return np.where(s > 0, s + bonus, s)

    def _apart(self, found: list[Found]) -> list[Found]:
        """The gap rules' pairs the weights allow (a module's weights say where its partner is)."""
        return [f for f in found if self.apart.allows(f.a, f.b) and not self.apart.weighed_elsewhere(f.a, f.b)]

    def type_pairs(self, gx: list[Call], gy: list[Call]) -> list[Found]:
        """Type differences in a gap where nothing else pairs: once one-sided types (Dropout,
        Identity...) are set aside, both sides must hold as many calls; the k-th pairs with
        the k-th when all their input and output shapes are equal and their framework types
        are not equivalent (a user-defined class only when it is alone in its slot)."""
        cx = [c for c in gx if group(c.module_type) not in ONE_SIDED_TYPES and c.has_outputs]
        cy = [c for c in gy if group(c.module_type) not in ONE_SIDED_TYPES and c.has_outputs]
        if not cx or len(cx) != len(cy):
            return []
        ra, rb = self._rows(cx, cy)
        fa, fb = self.feat.cols[ra], self.feat.cols[rb]
        same = (fa[:, FULL] == fb[:, FULL]) & (fa[:, INS] == fb[:, INS])
        allowed = (_TYPE_OTHER, _TYPE_UNKNOWN) if len(cx) == 1 else (_TYPE_OTHER,)
        return [
            Found(x, y, "type")
            for x, y, ok, u, v in zip(cx, cy, same.tolist(), fa[:, TNAME], fb[:, TNAME])
            if ok and shape_sig(x.outputs) and self._equivalent(int(u), int(v)) in allowed
        ]

    def shape_pairs(self, gx: list[Call], gy: list[Call]) -> list[Found]:
        """Shape differences in a gap where nothing else pairs: a call of one framework type that
        is the only one of its type in the gap on both sides, receiving inputs of the same shapes
        on both, is the same module even though its output shape differs (a stride, padding or
        ``ceil_mode`` that differs): it pairs, and its output is where the difference shows."""
        if not gx or not gy:
            return []
        ra, rb = self._rows(gx, gy)
        fa, fb = self.feat.cols[ra], self.feat.cols[rb]
        eq = self._type_codes(fa[:, TNAME], fb[:, TNAME]) == _TYPE_EQUAL
        fits = eq & (fa[:, None, INS] == fb[None, :, INS]) & (fa[:, None, FULL] != fb[None, :, FULL])
        out = []
        for i, j in np.argwhere(fits).tolist():
            # the only one of its type in the gap on each side: nothing else it could be
            if eq[i].sum() == 1 and eq[:, j].sum() == 1 and gx[i].has_outputs and gy[j].has_outputs:
                out.append(Found(gx[i], gy[j], "shape"))
        return out

    def slot_pairs(self, gx: list[Call], gy: list[Call]) -> list[Found]:
        """The one call left on each side of a gap, at the same module path and with the same
        input and output shapes, is the same slot whatever the two types (an activation one
        side replaced by ``Identity``, a type ``type_pairs`` sets aside): a type difference,
        compared like any pair."""
        if len(gx) != 1 or len(gy) != 1 or not gx[0].has_outputs or not gy[0].has_outputs:
            return []
        ra, rb = self._rows(gx, gy)
        fa, fb = self.feat.cols[ra][0], self.feat.cols[rb][0]
        if fa[PATH] == fb[PATH] and fa[FULL] == fb[FULL] and fa[INS] == fb[INS] and shape_sig(gx[0].outputs):
            return [Found(gx[0], gy[0], "type")]
        return []

    def _contents_of(self, side: str, c: Call) -> Counter[str]:
        key = (side, c.id)
        got = self._contents.get(key)
        if got is None:
            tree = self.ta if side == "a" else self.tb
            got = Counter(group(d.module_type) for d in tree.descendants(c) if is_known_type(d.module_type))
            self._contents[key] = got
        return got


def _expand(tree: CallTree, calls: list[Call]) -> list[Call] | None:
    """``calls`` with every call that has children replaced by its children (None: none has)."""
    if not any(tree.children(c) for c in calls):
        return None
    out: list[Call] = []
    for c in calls:
        kids = tree.children(c)
        out.extend(kids if kids else (c,))
    return out


def _jaccard(x: Counter[str], y: Counter[str]) -> float:
    if not x and not y:
        return 0.0
    inter = sum((x & y).values())
    union = sum((x | y).values())
    return inter / union if union else 0.0

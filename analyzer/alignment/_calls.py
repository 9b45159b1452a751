"""Module calls rebuilt from a trace's records (the unit that alignment pairs)."""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from padiff_trace import Kind, Phase, Record, Trace

from ._lazy import CallColumns, CallIndex, RecordMap
from ._records import RecordLike

__all__ = ["Call", "CallTree", "IdTable", "RowMap", "TraceView", "as_int_ids", "build_tree", "build_view", "first_step", "phase_rank", "shape_sig"]

_FWD_KINDS = (Kind.MODEL_INPUT, Kind.MODULE_INPUT, Kind.MODULE_OUTPUT)


class _Field:
    """A field of a call kept in its column of the view's ``CallColumns`` (read and written there)."""

    __slots__ = ("name",)

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, c: Call, owner: type | None = None) -> int:
        col: array[int] = getattr(c._c, self.name)
        return col[c._k]

    def __set__(self, c: Call, value: int) -> None:
        col: array[int] = getattr(c._c, self.name)
        col[c._k] = value


class Call:
    """One forward call of one module in one step. Its fields other than the module's names
    are columns of the view's ``CallColumns`` (row ``_k``); its records are built on access.
    A call built by hand (records given as lists) gets columns of its own."""

    __slots__ = ("_c", "_k", "module", "module_type")

    def __init__(
        self, id: int, step: int, module: str, module_type: str, parent: int, call_index: int,
        inputs: list[Record] | None = None, outputs: list[Record] | None = None,
    ) -> None:
        self._c = CallColumns.single(id, step, parent, call_index, list(inputs or []), list(outputs or []))
        self._k = 0
        self.module, self.module_type = module, module_type

    @classmethod
    def at(cls, cols: CallColumns, k: int, module: str, module_type: str) -> Call:
        """The call in row ``k`` of ``cols``."""
        c = cls.__new__(cls)
        c._c, c._k, c.module, c.module_type = cols, k, module, module_type
        return c

    id = _Field()
    step = _Field()
    parent = _Field()
    call_index = _Field()
    depth = _Field()

    def __repr__(self) -> str:
        return f"Call({self.id}, {self.label!r}, {self.module_type!r})"

    @property
    def inputs(self) -> list[Record]:
        return self._c.inputs(self._k)

    @property
    def outputs(self) -> list[Record]:
        return self._c.outputs(self._k)

    @property
    def has_outputs(self) -> bool:
        return self._c.n_out[self._k] > 0

    @property
    def key(self) -> tuple[str, int]:
        return (self.module, self.call_index)

    @property
    def label(self) -> str:
        return f"{self.module or '<root>'}#{self.call_index}"

    def tensor_outputs(self) -> list[Record]:
        return [r for r in self.outputs if r.is_tensor]

    def tensor_inputs(self) -> list[Record]:
        return [r for r in self.inputs if r.is_tensor]


class RowMap:
    """Calls -> their rows in ``Features.cols`` (``_align``). Calls of one view are found by their place in
    the view's columns (an array, 8 bytes a call); calls built by hand, by id (a dict)."""

    def __init__(self, calls: list[Call], first: int) -> None:
        self._cols = calls[0]._c if calls else None
        self._pos: np.ndarray | None = None
        self._ids: dict[int, int] | None = None
        if calls and all(c._c is self._cols for c in calls):
            ks = np.fromiter((c._k for c in calls), dtype=np.int64, count=len(calls))
            self._pos = np.full(int(ks.max()) + 1, -1, dtype=np.int64)
            self._pos[ks] = np.arange(first, first + len(calls))
        else:
            self._ids = {c.id: first + i for i, c in enumerate(calls)}

    def rows(self, calls: list[Call]) -> np.ndarray:
        if self._ids is not None:
            return np.fromiter((self._ids[c.id] for c in calls), dtype=np.int64, count=len(calls))
        assert self._pos is not None
        return self._pos[np.fromiter((c._k for c in calls), dtype=np.int64, count=len(calls))]


@dataclass(eq=False)
class CallTree:
    """The calls of one step as a forest, indexed once: children lists in entry order.

    A call whose parent is missing (or in another step) is a root. Parent links that
    form a cycle (a crafted or corrupt trace) are cut at the cycle's first call, which
    becomes a root: every walk over this forest ends.
    """

    roots: list[Call]
    kids: dict[int, list[Call]]  # call id -> children in entry order

    def children(self, call: Call) -> list[Call]:
        return self.kids.get(call.id, [])

    def descendants(self, call: Call) -> list[Call]:
        """Every call nested (at any depth) inside ``call``, in entry (pre-)order."""
        out: list[Call] = []
        stack = list(reversed(self.kids.get(call.id, [])))
        while stack:
            c = stack.pop()
            out.append(c)
            stack.extend(reversed(self.kids.get(c.id, [])))
        return out


def build_tree(calls: list[Call], by_id: Mapping[int, Call]) -> CallTree:
    """The forest of ``calls`` (one step, entry order); sets each call's ``depth``. O(n)."""
    in_step = {c.id for c in calls}
    kids: dict[int, list[Call]] = defaultdict(list)
    roots: list[Call] = []
    for c in calls:
        if c.parent in in_step and c.parent != c.id:
            kids[c.parent].append(c)
        else:
            roots.append(c)
    reached = _set_depths(roots, kids)
    if reached < len(calls):  # the rest hangs off parent cycles: cut each at its first call
        seen = {c.id for r in roots for c in _walk(r, kids)}
        for c in calls:
            if c.id in seen:
                continue
            head = _cycle_head(c, by_id)
            kids[head.parent].remove(head)
            roots.append(head)
            _set_depths([head], kids)
            seen.update(x.id for x in _walk(head, kids))
        roots.sort(key=lambda c: c.id)
    return CallTree(roots, dict(kids))


def _walk(root: Call, kids: dict[int, list[Call]]) -> Iterator[Call]:
    stack = [root]
    while stack:
        c = stack.pop()
        yield c
        stack.extend(kids.get(c.id, ()))


def _set_depths(roots: list[Call], kids: dict[int, list[Call]]) -> int:
    n = 0
    for r in roots:
        r.depth = 0
        for c in _walk(r, kids):
            n += 1
            for k in kids.get(c.id, ()):
                k.depth = c.depth + 1
    return n


def _cycle_head(c: Call, by_id: Mapping[int, Call]) -> Call:
    """The call with the lowest id on the parent cycle above ``c`` (which reaches no root)."""
    order: dict[int, int] = {}
    path: list[Call] = []
    while c.id not in order:
        order[c.id] = len(path)
        path.append(c)
        c = by_id[c.parent]
    return min(path[order[c.id]:], key=lambda x: x.id)


@dataclass(eq=False)
class TraceView:
    """What the analyzer needs from one trace, indexed once."""

    trace: Trace
    framework: str
    steps: list[int]
    calls: dict[int, list[Call]]  # step -> calls in entry order
    by_id: Mapping[int, Call]
    grads_out: Mapping[tuple[int, str], Record]  # (call id, position) -> GRAD_OUTPUT
    grads_in: Mapping[tuple[int, str], Record]  # (call id, position) -> GRAD_INPUT
    weights: dict[int, Mapping[tuple[str, str], Record]]  # step -> (module, local name) -> PARAM/BUFFER
    param_grads: dict[int, Mapping[tuple[str, str], Record]]
    probes: dict[int, Mapping[tuple[str, int], Record]]  # step -> (name, nth occurrence)
    losses: dict[int, list[Record]]
    module_types: dict[str, str]  # module path -> type, from every record
    trees: dict[int, CallTree] = field(default_factory=dict, repr=False)  # step -> forest, built on demand

    @property
    def path(self) -> str:
        return str(self.trace.path)

    def tree(self, step: int) -> CallTree:
        """The call forest of ``step`` (built once)."""
        t = self.trees.get(step)
        if t is None:
            t = self.trees[step] = build_tree(self.calls.get(step, []), self.by_id)
        return t

    def children(self, call: Call) -> list[Call]:
        return self.tree(call.step).children(call)

    def descendants(self, call: Call) -> set[int]:
        """Ids of every call nested (at any depth) inside ``call``."""
        return {c.id for c in self.tree(call.step).descendants(call)}

    def ancestors(self, call: Call) -> Iterator[Call]:
        """The calls enclosing ``call``, innermost first (cycle-safe)."""
        seen = {call.id}
        p = self.by_id.get(call.parent)
        while p is not None and p.id not in seen and p.step == call.step:
            yield p
            seen.add(p.id)
            p = self.by_id.get(p.parent)


def build_view(trace: Trace) -> TraceView:
    """Group a trace's records into calls, gradients, weights, probes and losses: numpy over
    the index columns; records stay rows until asked for (see ``_lazy``)."""
    t = trace.table
    s = trace.strings
    kind, call, step = t["kind"], t["call"], t["step"]
    calls, by_id = _calls_of(trace)
    pos = t["position"]

    def rows_of(*kinds: Kind) -> np.ndarray:
        return np.flatnonzero(np.isin(kind, [int(k) for k in kinds]))

    def keyed(rows: np.ndarray, first: np.ndarray) -> dict[tuple[int, str], int]:
        # later rows win, as a re-recorded tensor replaces the earlier one
        return {(f, s[p]): r for f, p, r in zip(first[rows].tolist(), pos[rows].tolist(), rows.tolist())}

    def per_step(rows: np.ndarray) -> dict[int, Mapping[tuple[str, str], Record]]:
        out: dict[int, dict[tuple[str, str], int]] = defaultdict(dict)
        for st, m, p, r in zip(step[rows].tolist(), t["module"][rows].tolist(), pos[rows].tolist(), rows.tolist()):
            out[st][(s[m], s[p])] = r
        return {st: RecordMap(trace, d) for st, d in out.items()}

    g_out, g_in = rows_of(Kind.GRAD_OUTPUT), rows_of(Kind.GRAD_INPUT)
    weights, pgrads = per_step(rows_of(Kind.PARAM, Kind.BUFFER)), per_step(rows_of(Kind.PARAM_GRAD))
    probes: dict[int, dict[tuple[str, int], int]] = defaultdict(dict)
    seen: dict[tuple[int, str], int] = defaultdict(int)
    pr = rows_of(Kind.PROBE)
    for st, p, r in zip(step[pr].tolist(), pos[pr].tolist(), pr.tolist()):
        n = seen[(st, s[p])]
        seen[(st, s[p])] = n + 1
        probes[st][(s[p], n)] = r
    losses: dict[int, list[Record]] = defaultdict(list)
    for r in rows_of(Kind.LOSS).tolist():
        losses[int(step[r])].append(trace.record_at(r))
    trees = {st: build_tree(step_calls, by_id) for st, step_calls in calls.items()}
    return TraceView(
        trace=trace,
        framework=str(trace.meta.get("framework", "none")),
        steps=sorted(set(calls) | set(weights) | set(pgrads) | set(losses)),
        calls=calls,
        by_id=by_id,
        grads_out=RecordMap(trace, keyed(g_out, call)),
        grads_in=RecordMap(trace, keyed(g_in, call)),
        weights=weights,
        param_grads=pgrads,
        probes={st: RecordMap(trace, d) for st, d in probes.items()},
        losses=dict(losses),
        module_types=_module_types(trace),
        trees=trees,
    )


def _calls_of(trace: Trace) -> tuple[dict[int, list[Call]], Mapping[int, Call]]:
    """The forward calls of a trace by step (in id order) and by id; a call's fields come
    from its first record, its records are its rows grouped inputs first."""
    t = trace.table
    s = trace.strings
    kind, cid = t["kind"], t["call"]
    rows = np.flatnonzero(np.isin(kind, [int(k) for k in _FWD_KINDS]) & (cid >= 0))
    is_out = kind[rows] == int(Kind.MODULE_OUTPUT)
    order = np.lexsort((rows, is_out, cid[rows]))
    grouped, is_out = rows[order], is_out[order]
    if len(t) < np.iinfo(np.int32).max:
        grouped = grouped.astype(np.int32)  # rows of the trace's index, 4 bytes each
    calls: dict[int, list[Call]] = defaultdict(list)
    all_calls: list[Call] = []  # in id order
    if not len(grouped):
        return {}, {}
    gid = cid[grouped]
    starts = np.flatnonzero(np.r_[True, gid[1:] != gid[:-1]])
    n = np.diff(np.r_[starts, len(grouped)])
    n_out = np.add.reduceat(is_out.astype(np.int64), starts)
    first = np.minimum.reduceat(grouped, starts)
    cols = CallColumns.of(
        trace, grouped, id=t["call"][first], parent=t["parent"][first], lo=starts, step=t["step"][first],
        call_index=t["call_index"][first], n_in=n - n_out, n_out=n_out,
    )
    names = zip(t["step"][first].tolist(), t["module"][first].tolist(), t["module_type"][first].tolist())
    for k, (st, m, mt) in enumerate(names):
        c = Call.at(cols, k, s[m], s[mt])
        calls[st].append(c)
        all_calls.append(c)
    by_id = CallIndex(cols.id, all_calls)
    return dict(calls), by_id


def _module_types(trace: Trace) -> dict[str, str]:
    """Module path -> type, from the first record of the module that names one."""
    t = trace.table
    s = trace.strings
    named = np.array([bool(x) for x in s], dtype=bool)[t["module_type"]] if s else np.zeros(len(t), bool)
    rows = np.flatnonzero(named)
    types: dict[str, str] = {}
    for m, mt in zip(t["module"][rows].tolist(), t["module_type"][rows].tolist()):
        types.setdefault(s[m], s[mt])
    return types


def first_step(view: TraceView) -> int:
    """The step whose forward calls are aligned (the first with calls)."""
    with_calls = sorted(view.calls)
    return with_calls[0] if with_calls else 0


def phase_rank(rec: RecordLike) -> int:
    """Order inside a step: weights used by the step, forward, backward."""
    if rec.phase == Phase.OTHER:
        return 0
    return 1 if rec.phase == Phase.FORWARD else 2


def shape_sig(recs: list[Record]) -> tuple[tuple[int, ...], ...]:
    return tuple(r.shape for r in recs if r.is_tensor)


def as_int_ids(values: Sequence[object]) -> np.ndarray:
    """Dense integer ids of hashable values (equal values, equal ids)."""
    table = IdTable()
    return np.array([table.id(v) for v in values], dtype=np.int64)


class IdTable:
    """Dense ids of hashable values, given one value at a time."""

    def __init__(self) -> None:
        self._ids: dict[object, int] = {}

    def id(self, value: object) -> int:
        return self._ids.setdefault(value, len(self._ids))

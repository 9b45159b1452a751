"""Module calls rebuilt from a trace's records (the unit that alignment pairs)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from padiff_trace import Kind, Phase, Record, Trace

__all__ = ["Call", "CallTree", "TraceView", "as_int_ids", "build_tree", "build_view", "first_step", "phase_rank", "shape_sig"]

_FWD_KINDS = (Kind.MODEL_INPUT, Kind.MODULE_INPUT, Kind.MODULE_OUTPUT)


@dataclass(eq=False, slots=True)
class Call:
    """One forward call of one module in one step."""

    id: int
    step: int
    module: str
    module_type: str
    parent: int
    call_index: int
    inputs: list[Record] = field(default_factory=list)
    outputs: list[Record] = field(default_factory=list)
    depth: int = 0

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


def build_tree(calls: list[Call], by_id: dict[int, Call]) -> CallTree:
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


def _cycle_head(c: Call, by_id: dict[int, Call]) -> Call:
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
    by_id: dict[int, Call]
    grads_out: dict[tuple[int, str], Record]  # (call id, position) -> GRAD_OUTPUT
    grads_in: dict[tuple[int, str], Record]  # (call id, position) -> GRAD_INPUT
    weights: dict[int, dict[tuple[str, str], Record]]  # step -> (module, local name) -> PARAM/BUFFER
    param_grads: dict[int, dict[tuple[str, str], Record]]
    probes: dict[int, dict[tuple[str, int], Record]]  # step -> (name, nth occurrence)
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
    """Group a trace's records into calls, gradients, weights, probes and losses."""
    calls: dict[int, list[Call]] = defaultdict(list)
    by_id: dict[int, Call] = {}
    grads_out: dict[tuple[int, str], Record] = {}
    grads_in: dict[tuple[int, str], Record] = {}
    weights: dict[int, dict[tuple[str, str], Record]] = defaultdict(dict)
    pgrads: dict[int, dict[tuple[str, str], Record]] = defaultdict(dict)
    probes: dict[int, dict[tuple[str, int], Record]] = defaultdict(dict)
    probe_count: dict[tuple[int, str], int] = defaultdict(int)
    losses: dict[int, list[Record]] = defaultdict(list)
    types: dict[str, str] = {}
    for rec in trace.records():
        if rec.module_type and rec.module not in types:
            types[rec.module] = rec.module_type
        k = rec.kind
        if k in _FWD_KINDS and rec.call >= 0:
            c = by_id.get(rec.call)
            if c is None:
                c = by_id[rec.call] = Call(
                    rec.call, rec.step, rec.module, rec.module_type, rec.parent, rec.call_index
                )
                calls[rec.step].append(c)
            (c.outputs if k == Kind.MODULE_OUTPUT else c.inputs).append(rec)
        elif k == Kind.GRAD_OUTPUT:
            grads_out[(rec.call, rec.position)] = rec
        elif k == Kind.GRAD_INPUT:
            grads_in[(rec.call, rec.position)] = rec
        elif k in (Kind.PARAM, Kind.BUFFER):
            weights[rec.step][(rec.module, rec.position)] = rec
        elif k == Kind.PARAM_GRAD:
            pgrads[rec.step][(rec.module, rec.position)] = rec
        elif k == Kind.PROBE:
            n = probe_count[(rec.step, rec.position)]
            probe_count[(rec.step, rec.position)] = n + 1
            probes[rec.step][(rec.position, n)] = rec
        elif k == Kind.LOSS:
            losses[rec.step].append(rec)
    trees: dict[int, CallTree] = {}
    for step, step_calls in calls.items():
        step_calls.sort(key=lambda c: c.id)
        trees[step] = build_tree(step_calls, by_id)
    steps = sorted(set(calls) | set(weights) | set(pgrads) | set(losses))
    return TraceView(
        trace=trace,
        framework=str(trace.meta.get("framework", "none")),
        steps=steps,
        calls=dict(calls),
        by_id=by_id,
        grads_out=grads_out,
        grads_in=grads_in,
        weights=dict(weights),
        param_grads=dict(pgrads),
        probes=dict(probes),
        losses=dict(losses),
        module_types=types,
        trees=trees,
    )


def first_step(view: TraceView) -> int:
    """The step whose forward calls are aligned (the first with calls)."""
    with_calls = sorted(view.calls)
    return with_calls[0] if with_calls else 0


def phase_rank(rec: Record) -> int:
    """Order inside a step: weights used by the step, forward, backward."""
    if rec.phase == Phase.OTHER:
        return 0
    return 1 if rec.phase == Phase.FORWARD else 2


def shape_sig(recs: list[Record]) -> tuple[tuple[int, ...], ...]:
    return tuple(r.shape for r in recs if r.is_tensor)


def as_int_ids(values: Sequence[object]) -> np.ndarray:
    """Dense integer ids of hashable values (equal values, equal ids)."""
    table: dict[object, int] = {}
    return np.array([table.setdefault(v, len(table)) for v in values], dtype=np.int64)

"""Module calls rebuilt from a trace's records (the unit that alignment pairs)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from padiff_trace import Kind, Phase, Record, Trace

__all__ = ["Call", "TraceView", "as_int_ids", "build_view", "first_step", "phase_rank", "shape_sig"]

_FWD_KINDS = (Kind.MODEL_INPUT, Kind.MODULE_INPUT, Kind.MODULE_OUTPUT)


@dataclass(eq=False)
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

    @property
    def path(self) -> str:
        return str(self.trace.path)

    def children(self, call: Call) -> list[Call]:
        return [c for c in self.calls.get(call.step, []) if c.parent == call.id]

    def descendants(self, call: Call) -> set[int]:
        """Ids of every call nested (at any depth) inside ``call``."""
        out: set[int] = set()
        for c in self.calls.get(call.step, []):
            p = c.parent
            while p != -1:
                if p == call.id:
                    out.add(c.id)
                    break
                parent = self.by_id.get(p)
                p = parent.parent if parent is not None else -1
        return out


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
    for step_calls in calls.values():
        step_calls.sort(key=lambda c: c.id)
        for c in step_calls:
            parent = by_id.get(c.parent)
            c.depth = parent.depth + 1 if parent is not None else 0
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


def as_int_ids(values: list[object]) -> np.ndarray:
    """Dense integer ids of hashable values (equal values, equal ids)."""
    table: dict[object, int] = {}
    return np.array([table.setdefault(v, len(table)) for v in values], dtype=np.int64)

"""Gates stacked in another order: pairings to try where one weight computes several gates.

A recurrent cell computes its gates with one matrix (or convolution) whose output rows are the
gates stacked: i, f, o, g in one port of a ConvLSTM, i, f, g, o in another (torch's LSTM and
most hand ports), z, r, n against r, z, n for a GRU. Nothing in the
weights' names or shapes says which order a port chose, and each order computes a correct
cell; paired row for row, the two cells differ from their first call on.

The values can tell. Where the first divergence is named at a call of a cell (a module called
again in the step: one call per time step) whose inputs agree, a weight held in that module whose rows are ``k`` times a width of the call's output (``k`` of 2,
3 or 4) and whose rows no matrix of the module reads (an FFN's ``fc1``, four times the width
too, is read by ``fc2``: not gates) may hold ``k`` gates. ``gate_alternatives`` offers the
mapping documents that pair those weights with their rows taken as ``k`` blocks in another
order (``*_blocks``: every other order of 2 or 3 gates, every swap of two of 4); ``run``
records B again with each until one makes a call of the module agree
(``pipeline._alternatives.try_pairings``).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from padiff_trace.matching import RNN_CELL_LAYERS, RNN_GATE_LOCALS, RNN_GATES, canonical_type, module_pattern

from ._layouts import _types
from ._pairings import Alternative, _parent, _pattern, _shapes

if TYPE_CHECKING:
    from padiff_trace.matching import WeightPair

    from ._report import Report

__all__ = ["gate_alternatives"]

_GATES = (4, 3, 2)  # an LSTM's gates, a GRU's, a minimal gated unit's two


def _orders(k: int) -> list[tuple[int, ...]]:
    """The other orders tried for ``k`` gates: all of them for 2 or 3, every swap of two for 4."""
    ident = tuple(range(k))
    if k <= 3:
        return [p for p in itertools.permutations(ident) if p != ident]
    out = []
    for i, j in itertools.combinations(ident, 2):
        p = list(ident)
        p[i], p[j] = p[j], p[i]
        out.append(tuple(p))
    return out


def gate_alternatives(report: Report) -> list[Alternative]:
    """Mapping documents pairing the gate weights of the module the first divergence names
    with their rows as gates in another order (see the module docstring). Empty where no weight
    there looks like stacked gates."""
    d, wm = report.first_divergence, report.weight_map
    if d is None or wm is None:
        return []
    # the call named, or where op records (``--ops``) name an op, the module call around it
    module = d.located.a.call.module if d.located is not None else d.pair.a.module
    calls = [c for c in report.a.calls.get(d.pair.a.step, ()) if c.module == module]
    widths = {n for c in calls[:1] for r in c.tensor_outputs() for n in tuple(r.shape)[1:] if n > 1}
    # a recurrent cell: one module called again in the step (each time step); a layer called once
    # (an attention's fused q|k|v, a GLU) is left to the pairings of packed parts
    if not module or not widths or len(calls) < 2:
        return _layer_gates(report)
    shapes = _shapes(report.a)

    def canon(p: WeightPair) -> tuple[int, ...]:
        shape = shapes.get(p.a, ())
        return tuple(shape[k] for k in p.a_perm) if p.a_perm is not None and len(p.a_perm) == len(shape) else shape

    rx = module_pattern(_pattern(module))  # the module in every block: each cell of a stack

    def inside(m: str) -> bool:
        return any(rx.fullmatch(".".join(m.split(".")[:n])) for n in range(1, m.count(".") + 2))

    held = [p for p in wm.pairs if p.transfer and p.a_blocks is None and canon(p) and inside(_parent(p.a))]
    read = {canon(p)[1] for p in held if len(canon(p)) >= 2}  # widths a matrix of the module reads
    by_rows: dict[int, list[WeightPair]] = {}
    for p in held:
        if (p.a_part is not None or p.b_part is not None) and p.axis == 0:
            continue  # already a share of its rows
        by_rows.setdefault(canon(p)[0], []).append(p)
    ka, _ = wm.side_keys()
    entries = wm.to_json()["weights"]
    out: list[Alternative] = []
    for k in _GATES:
        for rows, ps in sorted(by_rows.items()):
            if rows % k or rows // k not in widths or rows in read or not any(len(canon(p)) >= 2 for p in ps):
                continue
            names = {p.a for p in ps}
            mine: list[dict[str, Any]] = [e for e in entries if e.get(ka) in names]
            shown = ", ".join(sorted(names)[:2]) + (f" and {len(names) - 2} more" if len(names) > 2 else "")
            for order in _orders(k):
                doc = {"version": 1, "weights": [{**e, f"{ka}_blocks": list(order)} for e in mine],
                       "note": f"written by padiff-trace run: {shown} as {k} gates in the order {list(order)}"}
                out.append(Alternative(doc, f"{shown} as {k} gates in the order {list(order)}", _pattern(module)))
        if out:
            return out  # the most gates that fit
    return out or _layer_gates(report)


def _gates_of(module_type: str) -> int | None:
    ctype = canonical_type(module_type)
    return RNN_GATES.get(RNN_CELL_LAYERS.get(ctype, ctype))


def _layer_gates(report: Report) -> list[Alternative]:
    """Where the first divergence names a recurrent layer of a known class on one side (torch's
    ``nn.LSTM`` run over the whole sequence) and the other side's weights paired with its tensors
    belong to modules of no recurrent class (a port's own cell, called once per step inside a
    module that loops): those weights as the layer's gates (``RNN_GATES``) in every other order.
    No call of the cell pairs with the layer's one call, so only a run that then agrees
    throughout keeps such an order (``try_pairings``)."""
    d, wm = report.first_divergence, report.weight_map
    if d is None or wm is None or d.located is None:
        return []
    ka, _ = wm.side_keys()
    types = (_types(report.a), _types(report.b))
    entries = wm.to_json()["weights"]
    out: list[Alternative] = []
    for side, call in enumerate((d.located.a.call, d.located.b.call)):
        k = _gates_of(call.module_type)
        if k is None:
            continue
        names = sorted(p.a for p in wm.pairs if p.transfer and p.a_blocks is None and p.a_part is None and p.b_part is None
                       and _parent((p.a, p.b)[side]) == call.module
                       and (p.a, p.b)[side].rpartition(".")[2].startswith(RNN_GATE_LOCALS)
                       and _gates_of(types[1 - side].get((p.b, p.a)[side], "")) is None)
        if not names:
            continue
        mine = [e for e in entries if e.get(ka) in names]
        shown = ", ".join(names[:2]) + (f" and {len(names) - 2} more" if len(names) > 2 else "")
        for order in _orders(k):
            said = f"{shown} as the {k} gates of {call.module} in the order {list(order)}"
            doc = {"version": 1, "weights": [{**e, f"{ka}_blocks": list(order)} for e in mine],
                   "note": f"written by padiff-trace run: {said}"}
            out.append(Alternative(doc, said, _pattern(d.located.a.call.module), whole_only=True))
    return out

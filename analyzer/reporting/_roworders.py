"""Another row order to try where a layer's output rows are two axes laid out the other way round.

A layer's own code may cut the output of a child Linear into two axes: a dynamic convolution's
kernel predictor gives ``heads * taps`` values per position, an offset predictor ``points * 2``.
One port lays them out head by head (``[H, K]``), another tap by tap (``[K, H]``); each is a
correct model, and with the predictor's rows copied as they stand the predictor's call agrees
while the layer around it does not. Nothing in the names or shapes says which layout a port
chose; the values can.

Where the first divergence is named at a layer whose inputs agree, a whole weight held by a
module inside it whose calls all agree, whose rows are that module's output features (a
Linear's, a conv's channels; not an embedding table's entries), and whose row count is no width
of the layer's own inputs or outputs (the layer's code, not the next layer, reads those rows),
may hold such a grid. ``row_alternatives`` offers the mapping documents reading its rows (and its bias's) as
``[a, b]`` laid out ``[b, a]`` for each way to factor the count (``*_blocks`` with one row a
block); ``run`` keeps the one under which a call of the layer agrees
(``pipeline._alternatives.try_pairings``). A bug that reorders the rows otherwise (taps
reversed) is no such transpose and stays a divergence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._pairings import Alternative, _shapes, confirmed

if TYPE_CHECKING:
    from padiff_trace.matching import WeightPair

    from ._report import Report

__all__ = ["row_alternatives", "transposed_grid"]

_MAX = 6


def transposed_grid(a: int, b: int) -> list[int]:
    """For B's row ``q`` of a ``[b, a]`` grid, the row of A's ``[a, b]`` grid holding the same
    entry (A's ``(i, j)`` is B's ``(j, i)``)."""
    return [(q % a) * b + q // a for q in range(a * b)]


def _factors(n: int) -> list[tuple[int, int]]:
    return [(a, n // a) for a in range(2, n // 2 + 1) if n % a == 0]


def row_alternatives(report: Report) -> list[Alternative]:
    """Mapping documents reading the rows of a weight inside the layer the first divergence
    names as a grid laid out the other way round (see the module docstring); empty where no
    weight there fits."""
    d, wm = report.first_divergence, report.weight_map
    if d is None or wm is None or d.located is None:
        return []
    layer_a, layer_b = d.located.a.call.module, d.located.b.call.module
    if not layer_a or not layer_b:
        return []
    calls = [c for c in report.a.calls.get(d.pair.a.step, ()) if c.module == layer_a]
    widths = {int(r.shape[-1]) for c in calls for r in (*c.tensor_inputs(), *c.tensor_outputs()) if r.shape}
    shapes = _shapes(report.a)

    def rows(p: WeightPair) -> int:
        shape = shapes.get(p.a, ())
        canon = tuple(shape[k] for k in p.a_perm) if p.a_perm is not None and len(p.a_perm) == len(shape) else shape
        return int(canon[0]) if len(canon) >= 2 else 0

    def whole(p: WeightPair) -> bool:
        return (p.transfer and p.a_blocks is None and p.a_part is None and p.b_part is None and p.a_axes is None
                and p.b_axes is None and not p.indexed)

    # every layer of its class: a call of one that agrees confirms the rows as they are
    kind = d.located.a.call.module_type
    same = sorted({c.module for c in report.a.calls.get(d.pair.a.step, ()) if c.module_type == kind})
    if any(confirmed(report, m)[0] for m in same):
        return []
    ka, _ = wm.side_keys()
    entries = wm.to_json()["weights"]
    out: list[Alternative] = []
    for p in wm.pairs:
        owner_a, owner_b = p.a.rpartition(".")[0], p.b.rpartition(".")[0]
        if not (whole(p) and p.a.endswith(".weight") and owner_a.startswith(layer_a + ".")
                and owner_b.startswith(layer_b + ".")):
            continue
        n = rows(p)
        good, bad = confirmed(report, owner_a)
        if n < 4 or n in widths or not good or bad:  # its own calls must agree: only its layout is open
            continue
        # the rows are its output features (a Linear's, a conv's channels), not a table's entries
        if not any(n in tuple(r.shape)[1:] for c in report.a.calls.get(d.pair.a.step, ()) if c.module == owner_a
                   for r in c.tensor_outputs()):
            continue
        inner = owner_a[len(layer_a):]  # the same module in every layer of the class
        names = {q.a for q in wm.pairs if whole(q) and q.a.rpartition(".")[0] in {m + inner for m in same}
                 and rows(q) == n}
        owners = {q.rpartition(".")[0] for q in names}
        mine: list[dict[str, Any]] = [e for e in entries if e.get(ka) in names
                                      or (e.get(ka, "").endswith(".bias") and e[ka].rpartition(".")[0] in owners)]
        for a, b in _factors(n):
            said = f"the rows of {p.a} as [{a}, {b}] read as [{b}, {a}]"
            doc = {"version": 1, "weights": [{**e, f"{ka}_blocks": transposed_grid(a, b)} for e in mine],
                   "note": f"written by padiff-trace run: {said} in every {kind}"}
            out.append(Alternative(doc, said, layer_a))
    return out[:_MAX]

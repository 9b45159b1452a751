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

A layer that puts ``k`` tokens of its own (a class token, a distillation token) beside the
``m`` tokens its child made keeps a table of ``m + k`` position vectors. One port puts the ``k``
tokens first, another last: the two tables are the same rows rotated by ``k``. Where the layer is
named with agreeing inputs, holds such a table (squeezed to the layer output's last two axes),
and a call inside it returned ``m`` tokens, ``rolled_alternatives`` offers the table's rows rotated
by ``k`` each way; the comparison then reads the rest of the model as rows rolled (a layout).
A table rotated by a bug by other than ``k`` is no such layout and stays a divergence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from padiff_trace.arrays import squeezed

from ._pairings import Alternative, _shapes, confirmed

if TYPE_CHECKING:
    from padiff_trace.matching import WeightPair

    from ._report import Report

__all__ = ["rolled_alternatives", "row_alternatives", "transposed_grid"]

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


def _token_counts(report: Report, step: int, layer_a: str, layer_b: str) -> set[int]:
    """Token counts of what the calls inside the two layers returned: a sequence axis
    (``[b, m, d]``) or a feature map's positions (``[b, c, h, w]``: ``h * w``)."""
    out: set[int] = set()
    for view, layer in ((report.a, layer_a), (report.b, layer_b)):
        for c in view.calls.get(step, ()):
            if not c.module.startswith(layer + "."):
                continue
            for r in c.tensor_outputs():
                shape = tuple(int(n) for n in r.shape)
                if len(shape) == 3:
                    out.add(shape[1])
                elif len(shape) == 4:
                    out.update({shape[2] * shape[3], shape[1] * shape[2]})
    return out


def rolled_alternatives(report: Report) -> list[Alternative]:
    """Mapping documents reading a position table of the layer the first divergence names with
    its rows rotated by the count of tokens the layer adds, each way (see the module docstring);
    empty where no table there fits."""
    d, wm = report.first_divergence, report.weight_map
    if d is None or wm is None:
        return []
    # the layer named, or the one whose operation differs first (``--ops``)
    layer_a, layer_b = (d.located.a.call.module, d.located.b.call.module) if d.located else (d.pair.a.module, d.pair.b.module)
    if not layer_a or not layer_b:
        return []
    step = d.pair.a.step
    calls = [c for c in report.a.calls.get(step, ()) if c.module == layer_a]
    kind = calls[0].module_type if calls else ""
    outs = {tuple(int(n) for n in r.shape[-2:]) for c in calls for r in c.tensor_outputs() if len(r.shape) >= 3}
    same = sorted({c.module for c in report.a.calls.get(step, ()) if c.module_type == kind})
    if not outs or any(confirmed(report, m)[0] for m in same):
        return []
    shapes_a, shapes_b = _shapes(report.a), _shapes(report.b)
    ka, _ = wm.side_keys()
    entries = {e.get(ka): e for e in wm.to_json()["weights"]}
    counts = _token_counts(report, step, layer_a, layer_b)
    out: list[Alternative] = []
    for p in wm.pairs:
        shape_a, shape_b = shapes_a.get(p.a, ()), shapes_b.get(p.b, ())
        table = squeezed(shape_a)
        if not (p.transfer and p.a_perm is None and p.a_part is None and p.b_part is None and p.a_blocks is None
                and p.a_axes is None and p.b_axes is None and not p.indexed and len(table) == 2
                and table in outs and squeezed(shape_b) == table and p.a in entries
                and (p.a.rpartition(".")[0] + ".").startswith(layer_a + ".")):
            continue
        n = table[0]
        axis = next(i for i, s in enumerate(shape_a) if s == n)
        axes = [axis, *(i for i in range(len(shape_a)) if i != axis)]
        for k in sorted({n - m for m in counts if 0 < n - m <= n // 2}):
            for order, how in ((list(range(k, n)) + list(range(k)), f"its first {k} moved last"),
                               (list(range(n - k, n)) + list(range(n - k)), f"its last {k} moved first")):
                said = f"the rows of {p.a} rotated, {how}"
                doc = {"version": 1, "weights": [{**entries[p.a], f"{ka}_axes": axes, f"{ka}_blocks": order}],
                       "note": f"written by padiff-trace run: {said}"}
                out.append(Alternative(doc, said, layer_a))
    return out[:_MAX]

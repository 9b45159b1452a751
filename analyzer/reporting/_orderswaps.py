"""Two same-shape tensors only an order paired, tried the other way round.

One port keeps a block's layer scales as modules of their own (``ls1.gamma``, ``ls2.gamma``), the
other as the block's parameters, registered in another order than they are used in (``gamma2``
before ``gamma1``). No name, type or shape tells them apart: the weight matcher pairs them in
the order it has (registration or call order: ``shape+order``, ``role+order``, ``order only``, the
last of them as ``only candidate``), which can be wrong with nothing to say so but the values. When
a run's first divergence is named at a module holding two such pairs (its inputs agree, its output
differs), ``order_alternatives`` gives the mapping document pairing them the other way round;
``run`` keeps that run where a call of the module agrees under it and it diverges later, or
where everything agrees (``pipeline._alternatives.try_pairings``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._pairings import Alternative, _pattern, _shapes

if TYPE_CHECKING:
    from ._report import Report

__all__ = ["order_alternatives"]

# how the weight matcher says a pair rests on an order alone (or was the last left after one)
_BY_ORDER = frozenset({"shape+order", "role+order", "order only", "only candidate"})
_MAX = 2


def _under(name: str, module: str) -> bool:
    return not module or name.startswith(module + ".")


def order_alternatives(report: Report) -> list[Alternative]:
    """Mapping documents swapping two same-shape pairs an order alone made, held by the module
    pair the first divergence names (see the module docstring); empty when there are none."""
    d, wm = report.first_divergence, report.weight_map
    if d is None or wm is None or d.located is None or not d.located.a.call.module or not d.located.b.call.module:
        return []  # a divergence named at a root says nothing about which of the model's tensors
    ka, kb = wm.side_keys()
    ma, mb = d.located.a.call.module, d.located.b.call.module
    shapes_a, shapes_b = _shapes(report.a), _shapes(report.b)
    groups: dict[tuple[tuple[int, ...], tuple[int, ...]], list[tuple[str, str]]] = {}
    for p in wm.pairs:
        if (p.how in _BY_ORDER and p.transfer and p.a_part is None and p.b_part is None and p.a_axes is None
                and _under(p.a, ma) and _under(p.b, mb) and p.a in shapes_a and p.b in shapes_b):
            groups.setdefault((shapes_a[p.a], shapes_b[p.b]), []).append((p.a, p.b))
    out: list[Alternative] = []
    for (sa, sb), pairs in groups.items():
        if len(pairs) != 2 or sa != sb:
            continue
        (a1, b1), (a2, b2) = pairs
        said = f"{a1} with {b2} and {a2} with {b1}"
        doc = {"version": 1, "weights": [{ka: a1, kb: b2}, {ka: a2, kb: b1}],
               "note": f"written by padiff-trace run: {said} (only an order paired them the other way)"}
        out.append(Alternative(doc, said, _pattern(ma)))
    return out[:_MAX]

"""Two same-shape tensors only an order paired, tried the other way round.

One port keeps a block's layer scales as modules of their own (``ls1.gamma``, ``ls2.gamma``), the
other as the block's parameters, registered in another order than they are used in (``gamma2``
before ``gamma1``). No name, type or shape tells them apart: the weight matcher pairs them in
the order it has (registration or call order: ``shape+order``, ``role+order``, ``order only``, the
last of them as ``only candidate``), which can be wrong with nothing to say so but the values. When
a run's first divergence is named at a module holding two such pairs (its inputs agree, its output
differs) and the names' own numbers pair them the other way round (``ls1`` with ``gamma1``),
``order_alternatives`` gives the mapping document pairing them so, in every block alike; ``run``
keeps that run where a call of the module agrees under it and it diverges later, or where
everything agrees (``pipeline._alternatives.try_pairings``). Without such names the values alone
cannot tell a wrong order from a bug that uses the two the other way round in every block
(CaiT's port with its layer scales swapped), and nothing is tried.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._pairings import _DIGITS, Alternative, _pattern, _shapes, _within

if TYPE_CHECKING:
    from ._report import Report

__all__ = ["order_alternatives"]

# how the weight matcher says a pair rests on an order alone (or was the last left after one)
_BY_ORDER = frozenset({"shape+order", "role+order", "order only", "only candidate"})
_MAX = 2


def _numbers(name: str) -> tuple[int, ...]:
    """The numbers a tensor's name carries outside its block indices (``stage1.0.ls2.gamma``: 1,
    2; ``blocks.3.gamma1``: 1)."""
    return tuple(int(d) for part in name.split(".") if not part.isdigit() for d in _DIGITS.findall(part))


def _numbered_crosswise(a1: str, b1: str, a2: str, b2: str) -> bool:
    """Whether the names' own numbers pair the tensors the other way round (``ls1`` with ``gamma1``
    where the order paired ``ls1`` with ``gamma2``): the evidence besides the values that the
    order may be wrong. Without it a swap that the values would take equals a bug that uses the
    two the other way round in every block, and is never tried."""
    n = [_numbers(x) for x in (a1, b1, a2, b2)]
    return bool(n[0]) and n[0] != n[2] and n[0][-1:] == n[3][-1:] and n[2][-1:] == n[1][-1:] and n[0][-1:] != n[1][-1:]


def order_alternatives(report: Report) -> list[Alternative]:
    """Mapping documents swapping two same-shape pairs an order alone made, held by the module
    pair the first divergence names, where the names' numbers pair them the other way round, in
    every block alike (see the module docstring); empty when there are none."""
    d, wm = report.first_divergence, report.weight_map
    if d is None or wm is None or d.located is None or not d.located.a.call.module or not d.located.b.call.module:
        return []  # a divergence named at a root says nothing about which of the model's tensors
    ka, kb = wm.side_keys()
    ma, mb = d.located.a.call.module, d.located.b.call.module
    shapes_a, shapes_b = _shapes(report.a), _shapes(report.b)
    ordered = [p for p in wm.pairs if p.how in _BY_ORDER and p.transfer and p.a_part is None and p.b_part is None
               and p.a_axes is None and p.a in shapes_a and p.b in shapes_b and shapes_a[p.a] == shapes_b[p.b]]
    groups: dict[tuple[int, ...], list[tuple[str, str]]] = {}
    for p in ordered:
        if _within(p.a.rpartition(".")[0], {ma}) and _within(p.b.rpartition(".")[0], {mb}):
            groups.setdefault(shapes_a[p.a], []).append((p.a, p.b))
    out: list[Alternative] = []
    for pairs in groups.values():
        if len(pairs) != 2 or not _numbered_crosswise(*pairs[0], *pairs[1]):
            continue
        (a1, b1), (a2, b2) = pairs
        # the same two in every block: the pairs of the same patterns, block by block
        alike = [sorted(((p.a, p.b) for p in ordered if (_pattern(p.a), _pattern(p.b)) == (_pattern(a), _pattern(b))),
                        key=lambda ab: _blocks(ab[0])) for a, b in pairs]
        if len(alike[0]) != len(alike[1]) or any(_blocks(x[0]) != _blocks(y[0]) for x, y in zip(*alike)):
            alike = [[pairs[0]], [pairs[1]]]
        weights = []
        for (x1, y1), (x2, y2) in zip(*alike):
            weights += [{ka: x1, kb: y2}, {ka: x2, kb: y1}]
        said = f"{a1} with {b2} and {a2} with {b1}"
        doc = {"version": 1, "weights": weights,
               "note": f"written by padiff-trace run: {said} (the names' numbers pair them so; only an order paired them the other way)"}
        out.append(Alternative(doc, said, _pattern(ma)))
    return out[:_MAX]


def _blocks(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in name.split(".") if part.isdigit())

"""Norms in units: a norm whose module sits beside exactly one layer with a weight matrix, and no
other norm (a convolution and its BatchNorm in a ``ConvBN`` of their own), works for that layer, so it pairs
with the norm beside that layer's partner. Two authors register a block's branches in their own
orders (a reparameterisable block's 3x3 branches, its 1x1 branch and its identity BatchNorm in a
list on one side and as named attributes on the other), and a block's norms of one shape are
then told apart by nothing but the layers they sit with.

A norm alone in a block (an identity branch's BatchNorm, beside no layer of its own) pairs with
the one in the block its block's other layers pair with. In a module of several layers and norms
(a stem of two convolutions, each with its BatchNorm), a norm as wide as exactly one layer's
output there, and the only one of that width, works for that layer. ``unit_layers`` finds each norm's
layer; ``mark_mates`` writes into each norm the module of the other side it belongs with
(``MTensor.mate``), which ``_weighttensors.assign`` weighs like a role where the two say so of
each other; a norm whose layer is not paired yet waits until it is (``waits``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

from ._knowledge import NORM_LAYERS, POINTWISE_AS
from ._partners import counterpart_scope
from ._weightmap import WeightPair
from ._weighttensors import MTensor

__all__ = ["mark_mates", "mates_contradict", "mutual_mates", "unit_layers", "waits"]

_OUT_FIRST = frozenset({*POINTWISE_AS, *POINTWISE_AS.values()})  # convolutions and Linears


def unit_layers(side: Iterable[MTensor]) -> dict[str, MTensor]:
    """Norm module -> the weight matrix of the one other layer directly beside it (under its
    module's parent), for the norms that are a unit with one layer: one such layer, one norm."""
    ts = list(side)
    layers: dict[str, dict[str, MTensor]] = defaultdict(dict)
    norms: dict[str, set[str]] = defaultdict(set)
    for t in ts:
        if t.ctype in NORM_LAYERS:
            norms[t.parent].add(t.module)
        elif t.local == "weight" and len(t.cshape) >= 2 and t.info.trainable:
            layers[t.parent][t.module] = t
    out: dict[str, MTensor] = {}
    for t in ts:
        if t.ctype in NORM_LAYERS and len(norms[t.parent]) == 1 and len(layers.get(t.parent, {})) == 1:
            out[t.module] = next(iter(layers[t.parent].values()))
    out.update(_by_width(ts, layers, norms, out))
    return out


def _by_width(ts: list[MTensor], layers: dict[str, dict[str, MTensor]], norms: dict[str, set[str]],
              units: dict[str, MTensor]) -> dict[str, MTensor]:
    """Norms in a module holding as many layers as norms, two or more (a stem ``conv1, bn1, conv2,
    bn2``): where each norm is as wide as the output of exactly one layer beside it, and no other
    norm there is, each works for its layer. Where widths repeat (a residual block's ``bn1`` and
    ``bn2`` both as wide as ``conv1`` and ``conv2``) or a layer has no norm (a transformer layer's
    norms working for layers nested in its attention), nothing is said."""
    width: dict[str, int] = {}
    for t in ts:
        if t.ctype in NORM_LAYERS and t.module not in units and t.cshape:
            width.setdefault(t.module, t.cshape[0])
    out: dict[str, MTensor] = {}
    for parent, mods in norms.items():
        # layers whose canonical weight puts the output channels first (a lookup table's rows
        # are entries, a class of a port's own says nothing)
        beside = {m: w for m, w in layers.get(parent, {}).items() if w.ctype in _OUT_FIRST}
        if len(mods) < 2 or len(beside) != len(mods):
            continue  # a unit of one layer and one norm: said above; a layer or a norm more: nothing
        found = {}
        for mod in mods:
            n = width.get(mod)
            fits = [w for w in beside.values() if w.cshape[0] == n]
            if n is None or len(fits) != 1 or sum(width.get(m) == n for m in mods) != 1:
                break
            found[mod] = fits[0]
        else:  # every norm with a layer of its own width, one to one
            out.update(found)
    return out


def _partners(pairs: Sequence[WeightPair]) -> dict[tuple[str, str], str]:
    """(side, tensor) -> the tensor it is paired with whole."""
    out: dict[tuple[str, str], str] = {}
    for p in pairs:
        if _whole(p):
            out[("a", p.a)] = p.b
            out[("b", p.b)] = p.a
    return out


def _whole(p: WeightPair) -> bool:
    """A copied pair of two whole tensors."""
    return p.a_part is None and p.b_part is None and not p.indexed and p.transfer


def waits(t: MTensor, units: dict[str, dict[str, MTensor]]) -> bool:
    """Whether ``t`` is a norm whose unit's layer is not paired yet: it is taken after the other
    weights, once the layers have partners to read (the other norms of its class go first)."""
    return t.ctype in NORM_LAYERS and t.module in units[t.side] and not units[t.side][t.module].used


def mark_mates(members: Iterable[MTensor], units: dict[str, dict[str, MTensor]], pairs: Sequence[WeightPair],
               by_name: dict[str, dict[str, MTensor]]) -> None:
    """Write into each norm of ``members`` the module of the other side it belongs with, "" where
    the pairs so far say none: for a norm in a unit, the unit its layer's whole partner sits in;
    for a norm alone in a block (an identity branch's BatchNorm), the module the pairs so far make
    its block's counterpart (``counterpart_scope``). The pairs are read only for a class holding
    norms (most classes hold none)."""
    ts = list(members)
    for t in ts:
        t.mate = ""
    norms = [t for t in ts if t.ctype in NORM_LAYERS]
    if not norms:
        return
    partner = _partners(pairs)
    scope: Callable[[str, str], str] | None = None
    for t in norms:
        layer = units[t.side].get(t.module)
        if layer is None:
            if scope is None:
                scope = counterpart_scope([(p.a, p.b) for p in pairs if _whole(p)])
            t.mate = scope(t.parent, t.side) if t.parent else ""
            continue
        other = partner.get((t.side, layer.info.name))
        mate = by_name["b" if t.side == "a" else "a"].get(other) if other is not None else None
        t.mate = mate.parent if mate is not None else ""


def mates_contradict(x: MTensor, y: MTensor, units: dict[str, dict[str, MTensor]]) -> bool:
    """Whether two norms, each in a unit whose layer is paired, sit beside layers whose partners
    are in other units than each other's."""
    return (bool(x.mate and y.mate) and x.module in units[x.side] and y.module in units[y.side]
            and (x.mate, y.mate) != (y.parent, x.parent))


def mutual_mates(xs: list[MTensor], ys: list[MTensor]) -> list[tuple[MTensor, MTensor]]:
    """Norms of a class with more members on one side whose units say so of each other: each
    sits beside a layer whose partner sits beside the other (``mark_mates``), the only such pair
    for both (a stem's BatchNorm against the one beside the stem convolution its own convolution
    paired with, where the other side has more norms of that width elsewhere)."""
    def fit(x: MTensor, y: MTensor) -> bool:
        return bool(x.mate and y.mate) and (x.mate, y.mate) == (y.parent, x.parent)

    out = []
    for x in xs:
        cands = [y for y in ys if fit(x, y)]
        if len(cands) == 1 and sum(fit(z, cands[0]) for z in xs) == 1:
            out.append((x, cands[0]))
    return out

"""Two attentions in one block, each port fusing the other one: a pairing only values can choose.

A block with two attentions (a local and a global one, self and cross) holds one fused q|k|v
and one set of separate q, k, v projections in each port, but not the same ones: one author
fuses the local attention (``qkv``) and keeps the global one apart (``query_global``,
``key_global``, ``value_global``), the other keeps the local one apart (``query``, ``key``,
``value``) and fuses the global one (``qkv_global``). The role names pair the separate
projections with each other and the fused ones with each other: same shapes, same roles, and
the other attention's weights in each.

Where the weight map paired a fused tensor whole with a fused one, and separate tensors in the
fused one's module with separate ones of the other side outside its partner, each covering the
roles the fused names list, ``fused_alternatives`` offers the mapping document that crosses
them: the fused tensor of each side cut into the parts its name lists, paired with the separate
tensors of the other side. ``run`` records B again and keeps it only when the call whose input
differed first (the attention's output projection) or a call of the module the first run named
agrees, or everything does (``pipeline._alternatives.try_pairings``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from padiff_trace.matching import role_words as _roles

from ._pairings import Alternative, _parent, _pattern, _shapes

if TYPE_CHECKING:
    from padiff_trace.matching import WeightPair

    from ._report import Report

__all__ = ["fused_alternatives"]

def _leaf(name: str) -> str:
    return _parent(name).rpartition(".")[2]


def fused_alternatives(report: Report) -> list[Alternative]:
    """The mapping document crossing fused and separate projections (see the module docstring),
    or nothing where the first divergence is not in a module holding such a pairing."""
    d, wm = report.first_divergence, report.weight_map
    if d is None or wm is None:
        return []
    module = d.located.a.call.module if d.located is not None else d.pair.a.module
    shapes = _shapes(report.a)
    ka, kb = wm.side_keys()
    whole = [p for p in wm.pairs if p.transfer and p.a_part is None and p.b_part is None]

    def rows(p: WeightPair) -> int:
        shape = shapes.get(p.a, ())
        return shape[p.a_perm[0]] if p.a_perm is not None and shape else (shape[0] if shape else 0)

    entries: list[dict[str, Any]] = []
    holders: list[str] = []
    for f in whole:
        fa, fb = _roles(_leaf(f.a)), _roles(_leaf(f.b))
        local = f.a.rpartition(".")[2]
        if len(fa) < 2 or sorted(fa) != sorted(fb) or local != f.b.rpartition(".")[2]:
            continue
        home_a, home_b = _parent(f.a), _parent(f.b)
        apart: dict[int, WeightPair] = {}  # role -> the separate pair: A's beside the fused one, B's outside its partner
        for p in whole:
            ra, rb = _roles(_leaf(p.a)), _roles(_leaf(p.b))
            if (len(ra) == 1 and ra == rb and p.a.rpartition(".")[2] == local and _parent(_parent(p.a)) == _parent(home_a)
                    and not _parent(p.b).startswith(home_b + ".") and _parent(p.b) != home_b):
                apart.setdefault(ra[0], p)
        if set(apart) != set(fa) or len({rows(p) for p in apart.values()}) != 1:
            continue
        size = rows(apart[fa[0]])
        for k, r in enumerate(fa):  # A's fused tensor, cut in the order its name lists, against B's separate ones
            entries.append({ka: f.a, kb: apart[r].b, f"{ka}_part": [k * size, (k + 1) * size], "axis": 0})
        for k, r in enumerate(fb):  # B's fused tensor against A's separate ones
            entries.append({ka: apart[r].a, kb: f.b, f"{kb}_part": [k * size, (k + 1) * size], "axis": 0})
        holder = _pattern(_parent(home_a))
        if holder not in holders:
            holders.append(holder)
    if not entries or not any(_pattern(module).startswith(h) or h.startswith(_pattern(module)) for h in holders):
        return []
    said = "the fused and the separate q|k|v projections crossed (each port fuses the other attention)"
    # confirmed where the call whose input differed first (the attention's output projection), or
    # a call of the module the first run named (the block), agrees now
    return [Alternative({"version": 1, "weights": entries, "note": f"written by padiff-trace run: {said}"}, said,
                        holders[0], readers=(_pattern(d.pair.a.module), _pattern(module)))]

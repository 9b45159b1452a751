"""Which modules of the two models are one computation, found from the tensors paired so far:
the places where the weight matcher's later passes look for a tensor's counterpart
(``_leftover``, ``_packs``, ``_units``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from ._weighttensors import MTensor

__all__ = ["counterpart_scope", "partner_modules", "partner_scopes"]


def partner_modules(pairs: list[tuple[str, str]], across_depths: bool = False) -> dict[str, str]:
    """Modules that are one computation, A's path -> B's: modules whose tensors paired whole,
    one module to one module (``pairs``: the paired tensor names), and, upward, parents whose
    partnered children all have their partners under one parent of the other side. With
    ``across_depths``, also a parent whose partnered children have partners at other depths (a
    branch wrapped in a Sequential of its own): the nearest common ancestor of those partners.
    Only a pass that confirms what it pairs by the shapes of whole units asks for that (the
    fused branches of ``_units``): a partner found so says where a block is, not that every
    tensor left inside it has its counterpart at the same depth (a norm one library nests in its
    attention's output module and the other keeps in the block)."""
    seen_a: dict[str, set[str]] = defaultdict(set)
    seen_b: dict[str, set[str]] = defaultdict(set)
    for na, nb in pairs:
        ma, mb = na.rpartition(".")[0], nb.rpartition(".")[0]
        seen_a[ma].add(mb)
        seen_b[mb].add(ma)
    partner = {ma: next(iter(mbs)) for ma, mbs in seen_a.items()
               if len(mbs) == 1 and len(seen_b[next(iter(mbs))]) == 1}
    grown = True
    while grown:
        grown = False
        up: dict[str, set[str]] = defaultdict(set)
        down: dict[str, set[str]] = defaultdict(set)
        kids: dict[str, set[str]] = defaultdict(set)  # A's parent -> its partnered children's partners
        for ma, mb in partner.items():
            if ma and mb:
                up[ma.rpartition(".")[0]].add(mb.rpartition(".")[0])
                down[mb.rpartition(".")[0]].add(ma.rpartition(".")[0])
                kids[ma.rpartition(".")[0]].add(mb)
        taken = set(partner.values())
        for pa, pbs in up.items():
            pb = next(iter(pbs))
            if len(pbs) > 1 and not across_depths:
                continue
            if len(pbs) > 1:  # the children's partners sit at other depths (a branch wrapped in a
                # Sequential of its own on one side): their nearest common ancestor, where that
                # holds none of them itself; neither is a root
                pb = _common_ancestor(kids[pa])
                if not pa or not pb or pb in kids[pa] or down[pb] - {pa}:
                    continue  # (the roots are each other's partners, and no one else's)
                down[pb].add(pa)
            if pa not in partner and len(down[pb]) == 1 and pb not in taken:
                partner[pa] = pb
                taken.add(pb)
                grown = True
    return partner


def _common_ancestor(paths: set[str]) -> str:
    """The deepest module path every one of ``paths`` is inside ("" for the root)."""
    split = [p.split(".") for p in paths]
    common: list[str] = []
    for parts in zip(*split):
        if len(set(parts)) != 1:
            break
        common.append(parts[0])
    return ".".join(common)


def partner_scopes(pairs: list[tuple[str, str]]) -> Callable[[MTensor, MTensor], bool]:
    """Where two tensors left over may pair because the modules around them are one computation
    (``partner_modules``). A tensor's scope is its innermost partnered module (the root aside:
    that is no evidence); two tensors are in the same place when their scopes are partners (a
    graph layer's own ``weight`` against a Linear inside its partner's layer; a time-mix vector
    ``[d]`` against ``[1, 1, d]`` in the partner attention)."""
    partner = partner_modules(pairs)
    inverse = {mb: ma for ma, mb in partner.items()}

    def scope(module: str, known: dict[str, str]) -> str | None:
        m = module
        while m and m not in known:
            m = m.rpartition(".")[0]
        return m or None

    def same_place(x: MTensor, y: MTensor) -> bool:
        sx = scope(x.info.module, partner if x.side == "a" else inverse)
        sy = scope(y.info.module, inverse if y.side == "b" else partner)
        if sx is None or sy is None:
            return False
        return (partner if x.side == "a" else inverse)[sx] == sy

    return same_place


def counterpart_scope(pairs: list[tuple[str, str]]) -> Callable[[str, str], str]:
    """The module of the other side that the pairs so far make the counterpart of a module of
    side ``side`` ("a" or "b"): the nearest ancestor of ``module`` (itself included) holding paired
    tensors, and the nearest common ancestor of those tensors' partners -- whatever each side's
    paths count as blocks (PaddleClas's ``res2a`` against ``layers.0``, whose ConvBN wrappers no
    partner joins one to one). "" where only the root holds pairs, or the partners' common
    ancestor is the root: that says nothing."""
    held: dict[str, dict[str, set[str]]] = {"a": defaultdict(set), "b": defaultdict(set)}
    for na, nb in pairs:
        ma, mb = na.rpartition(".")[0], nb.rpartition(".")[0]
        held["a"][ma].add(mb)
        held["b"][mb].add(ma)

    def scope(module: str, side: str) -> str:
        mine = held[side]
        m = module
        while m:
            partners = {o for k, os in mine.items() if k == m or k.startswith(m + ".") for o in os}
            if partners:
                return _common_ancestor(partners)
            m = m.rpartition(".")[0]
        return ""

    return scope

"""Module pairs a weight map makes certain: the anchors of the call alignment.

Modules whose tensors were matched whole, one module to one module, are the strongest evidence
that two module calls are the same computation (``analyzer.alignment`` pairs their calls first).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable

from ._weightmap import WeightMap

__all__ = ["module_anchors", "module_homes", "module_splits"]


def module_anchors(wm: WeightMap) -> dict[str, str]:
    """Module pairs whose tensors were matched whole, one module to one module: the strongest
    evidence that two module calls are the same computation. A tensor paired in parts with one
    tensor only, and that one with it only (its elements in another order: rotary pairs,
    features concatenated in another order), counts as matched whole."""
    partners: dict[str, set[str]] = defaultdict(set)
    partners_b: dict[str, set[str]] = defaultdict(set)
    for p in wm.pairs:
        partners[p.a].add(p.b)
        partners_b[p.b].add(p.a)
    seen: dict[str, set[str]] = defaultdict(set)
    back: dict[str, set[str]] = defaultdict(set)
    for p in wm.pairs:
        if (p.a_part is None and p.b_part is None) or (len(partners[p.a]) == 1 and len(partners_b[p.b]) == 1):
            ma, mb = p.a.rpartition(".")[0], p.b.rpartition(".")[0]
            seen[ma].add(mb)
            back[mb].add(ma)
    seen = {ma: _outer(mbs) for ma, mbs in seen.items()}
    back = {mb: _outer(mas) for mb, mas in back.items()}
    own_a, own_b = _held(partners), _held(partners_b)
    anchors = {ma: next(iter(mbs)) for ma, mbs in seen.items()
               if len(mbs) == 1 and len(back.get(next(iter(mbs)), ())) == 1
               and not _strays(own_a.get(ma, ()), next(iter(mbs)), partners)
               and not _strays(own_b.get(next(iter(mbs)), ()), ma, partners_b)}
    # one module against copies of it (``_copies``): its calls are the first copy's
    for p in wm.pairs:
        ma, mb = p.a.rpartition(".")[0], p.b.rpartition(".")[0]
        if p.how == "copies" and ma not in anchors and mb not in anchors.values():
            anchors[ma] = mb
    kept = _both_ways(anchors)
    kept.update(_subtree_anchors(partners, partners_b, kept))
    return _both_ways(kept)


def _held(partners: dict[str, set[str]]) -> dict[str, list[str]]:
    """Each module -> the paired tensors it holds itself."""
    out: dict[str, list[str]] = defaultdict(list)
    for t in partners:
        out[t.rpartition(".")[0]].append(t)
    return out


def _strays(tensors: Iterable[str], other: str, partners: dict[str, set[str]]) -> bool:
    """Whether one of a module's own ``tensors`` pairs only outside ``other`` (a bare ``W_Res``
    paired with ``res_proj`` beside ``W_Query``, a part of a fused ``attn.qkv``: the layer is the
    block's, not ``res_proj``'s); a tensor split over ``other`` and its siblings does not stray."""
    return any(not any(_under(x.rpartition(".")[0], other) for x in partners[t]) for t in tensors)


def _outer(modules: set[str]) -> set[str]:
    """``modules`` as the one among them that holds all the others, when there is one (a graph
    layer's own bias and the weight of the Linear inside it: the layer is the partner)."""
    top = [m for m in modules if all(_under(o, m) for o in modules)]
    return {top[0]} if len(top) == 1 else modules


def _both_ways(anchors: dict[str, str]) -> dict[str, str]:
    kept = _nested_consistently(anchors)
    # and the other way: B's root holding a position table of its own is no partner of A's
    # position-embedding module, whose call holds none of the modules B's root holds
    inverse = _nested_consistently({mb: ma for ma, mb in kept.items()})
    return {ma: mb for mb, ma in inverse.items()}


def _subtree_anchors(part_a: dict[str, set[str]], part_b: dict[str, set[str]], anchors: dict[str, str]) -> dict[str, str]:
    """Modules whose subtrees hold exactly each other's tensors, where no module inside pairs
    whole: a hand-written attention with a fused ``qkv`` and a ``proj`` against torch's
    ``MultiheadAttention``, whose packed ``in_proj_weight`` is its own and whose ``out_proj`` it
    never calls. The smallest module holding a group of tensors on each side pairs with the
    smallest holding their partners, when neither holds any other tensor with a partner, each
    side's group is owned by more than one module, and no module around either holds the same.
    ``part_a``/``part_b``: each tensor's partners."""
    under_a, under_b = _tensors_under(part_a), _tensors_under(part_b)
    taken_a, taken_b = set(anchors), set(anchors.values())
    out: dict[str, str] = {}
    for ma, ta in under_a.items():
        tb = set().union(*(part_a[t] for t in ta))
        mb = _common_module(tb)
        if ma in taken_a or mb in taken_b or mb in out.values() or _common_module(ta) != ma:
            continue
        if (under_b.get(mb) == tb and set().union(*(part_b[t] for t in tb)) == ta and _several(ta, part_a, part_b)
                and _several(tb, part_b, part_a) and _outermost(ma, ta, under_a) and _outermost(mb, tb, under_b)):
            out[ma] = mb
    return out


def _outermost(m: str, tensors: set[str], under: dict[str, set[str]]) -> bool:
    """Whether ``m`` is the only module holding exactly ``tensors``: no module around it holds
    the same (paddle's DenseNet transition holds its BN+conv layer and a pool, torch's holds the
    BN, the conv and the pool: which of the two nested paddle modules is torch's is not said by
    the weights)."""
    return m == "" or under.get(m.rpartition(".")[0]) != tensors


def _several(tensors: set[str], mine: dict[str, set[str]], theirs: dict[str, set[str]]) -> bool:
    """Whether ``tensors`` are more than one computation: owned by several modules, or by one
    that holds a tensor paired whole beside others (a layer's bare ``W_Res`` with ``W_Query``..., not
    a packed projection's weight and bias, each only parts)."""
    if _owners(tensors) > 1:
        return True
    return len(tensors) > 1 and any(len(mine[t]) == 1 and len(theirs[next(iter(mine[t]))]) == 1 for t in tensors)


def _owners(tensors: set[str]) -> int:
    """How many modules own ``tensors``: a group held by one module (a packed projection) is no
    container of the other side's several (its q, k and v are not an attention's whole)."""
    return len({t.rpartition(".")[0] for t in tensors})


def _tensors_under(partners: dict[str, set[str]]) -> dict[str, set[str]]:
    """Every module path (the root as "") -> the paired tensors its subtree holds."""
    out: dict[str, set[str]] = defaultdict(set)
    for t in partners:
        parts = t.split(".")[:-1]
        for k in range(len(parts) + 1):
            out[".".join(parts[:k])].add(t)
    return out


def _common_module(tensors: set[str]) -> str:
    """The innermost module holding every tensor of ``tensors``."""
    paths = [t.split(".")[:-1] for t in tensors]
    k = 0
    while paths and all(len(p) > k and p[k] == paths[0][k] for p in paths):
        k += 1
    return ".".join(paths[0][:k]) if paths else ""


def _under(m: str, root: str) -> bool:
    return root in ("", m) or m.startswith(root + ".")


def _nested_consistently(anchors: dict[str, str]) -> dict[str, str]:
    """Anchors whose nesting agrees on both sides: a module that owns a tensor of its own and
    holds other anchored modules (a model's root with a tied head's bias) is no anchor when its
    partner does not hold their partners (HF's ``lm_head`` Linear holds no encoder)."""
    keys = sorted(anchors)
    bad = set()
    for ma in keys:
        mb = anchors[ma]
        lo = bisect.bisect_left(keys, ma + ".") if ma else 0
        for k in keys[lo:]:
            if not _under(k, ma):
                break
            if k != ma and not _under(anchors[k], mb):
                bad.add(ma)
                break
    return {ma: mb for ma, mb in anchors.items() if ma not in bad}


def module_splits(wm: WeightMap) -> dict[str, frozenset[str]]:
    """A module path in A -> the B modules it must not pair with: where one side's module holds
    tensors the other side keeps in several modules (a two-layer LSTM against two one-layer
    LSTMs, a fused projection against separate ones), neither of those is the same computation
    as the whole; and the other way round."""
    b_of: dict[str, set[str]] = defaultdict(set)
    a_of: dict[str, set[str]] = defaultdict(set)
    for p in wm.pairs:
        ma, mb = p.a.rpartition(".")[0], p.b.rpartition(".")[0]
        b_of[ma].add(mb)
        a_of[mb].add(ma)
    apart: dict[str, set[str]] = defaultdict(set)
    for ma, mbs in b_of.items():
        if len(mbs) > 1:  # where one of them holds the others, that one holds the whole
            apart[ma].update(mbs - _outer(mbs) if len(_outer(mbs)) == 1 else mbs)
    for mb, mas in a_of.items():
        if len(mas) > 1:
            whole = _outer(mas)
            for ma in mas:
                if len(whole) != 1 or ma not in whole:
                    apart[ma].add(mb)
    return {ma: frozenset(mbs) for ma, mbs in apart.items()}


def module_homes(wm: WeightMap) -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """Each side's modules holding transferred tensors -> the other side's modules holding their
    partners (whole or in part): where a module's counterpart is, as its weights say (A's
    ``neigh_linear`` whose weight is a part of B's ``lin``: B's ``lin``, never B's ``act``)."""
    homes_a: dict[str, set[str]] = defaultdict(set)
    homes_b: dict[str, set[str]] = defaultdict(set)
    for p in wm.pairs:
        if p.transfer:
            ma, mb = p.a.rpartition(".")[0], p.b.rpartition(".")[0]
            homes_a[ma].add(mb)
            homes_b[mb].add(ma)
    return ({m: frozenset(h) for m, h in homes_a.items()}, {m: frozenset(h) for m, h in homes_b.items()})

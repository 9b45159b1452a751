"""Module pairs a weight map makes certain: the anchors of the call alignment.

Modules whose tensors were matched whole, one module to one module, are the strongest evidence
that two module calls are the same computation (``analyzer.alignment`` pairs their calls first).
"""

from __future__ import annotations

import bisect
from collections import defaultdict

from ._weightmap import WeightMap

__all__ = ["module_anchors"]


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
    anchors = {ma: next(iter(mbs)) for ma, mbs in seen.items() if len(mbs) == 1 and len(back[next(iter(mbs))]) == 1}
    kept = _nested_consistently(anchors)
    # and the other way: B's root holding a position table of its own is no partner of A's
    # position-embedding module, whose call holds none of the modules B's root holds
    inverse = _nested_consistently({mb: ma for ma, mb in kept.items()})
    return {ma: mb for mb, ma in inverse.items()}


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

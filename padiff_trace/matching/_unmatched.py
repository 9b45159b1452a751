"""What the weight matcher leaves unpaired, said (``_weightmatch``'s last step): each tensor
left is skipped with its reason (derived state, a buffer or frozen tensor with no counterpart,
the g of a weight-normed layer whose v paired with a plain weight) or listed as unmatched,
with the same-shape candidates a mapping entry could pin, and groups of one class left in
equal numbers as possibly mismatched."""

from __future__ import annotations

from ._knowledge import WEIGHT_NORM
from ._reparam import G_SKIPPED
from ._weightmap import WeightMap
from ._weighttensors import MTensor
from ._weighttensors import by_blocks as _by_blocks
from ._weighttensors import groups as _groups

__all__ = ["close_map"]


def _magnitude_of_paired(m: WeightMap, by_name: dict[str, MTensor], side: str, t: MTensor) -> bool:
    """``t`` is the g of a weight-normed layer whose v was paired whole with the other side's
    plain weight, or with a part of it (a fused filter | gate), the other side's g, if any,
    left unpaired."""
    owner, _, local = t.info.name.rpartition(".")
    v_local = next((v for v, g in WEIGHT_NORM.items() if g == local), None)
    if v_local is None:
        return False
    v = by_name.get(f"{owner}.{v_local}" if owner else v_local)
    return v is not None and v.used and any((p.a if side == "a" else p.b) == v.info.name
                                            and (p.a_part if side == "a" else p.b_part) is None for p in m.pairs)


def close_map(m: WeightMap, a: list[MTensor], b: list[MTensor], by_name: dict[str, dict[str, MTensor]]) -> WeightMap:
    """``m`` with every tensor of ``a`` and ``b`` left unpaired skipped or listed (see the
    module docstring)."""
    for side, items, bucket in (("a", a, m.unmatched_a), ("b", b, m.unmatched_b)):
        for t in items:
            if t.used:
                continue
            if _magnitude_of_paired(m, by_name[side], side, t):
                t.used = True
                m.skipped.append((side, t.info.name, G_SKIPPED))
            elif t.derived:
                m.skipped.append((side, t.info.name, "derived state (the model computes it): not copied"))
            elif not t.info.is_param:
                m.skipped.append((side, t.info.name, "buffer with no counterpart on the other side"))
            elif not t.info.trainable:
                m.skipped.append((side, t.info.name, "frozen parameter with no counterpart on the other side"))
            else:
                bucket.append(t.info)
    left_a = [t for t in a if not t.used and not t.derived]
    left_b = [t for t in b if not t.used and not t.derived]
    ga = _groups(left_a, lambda t: (t.type_key, t.local))
    gb = _groups(left_b, lambda t: (t.type_key, t.local))
    for c in set(ga) & set(gb):
        for xs, ys in _by_blocks(ga[c], gb[c]):
            if len(xs) == len(ys):
                m.mismatched += [(x.info.name, y.info.name) for x, y in zip(xs, ys)]
    for t, others in [(t, left_b) for t in left_a] + [(t, left_a) for t in left_b]:
        if t.info.is_param and t.info.trainable:
            same = [o.info.name for o in others if o.cshape == t.cshape]
            m.suggestions[t.info.name] = same[:3]
    return m

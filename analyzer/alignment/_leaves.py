"""Tensor leaves of two paired calls, paired: by position where both sides hold the same
positions, else in order by shape (axes of size one aside for positional leaves), names first;
a key/value cache's newest position against all of them (``_newest``); one argument left on
each side, the same one under two names (``_pairing`` pairs the calls)."""

from __future__ import annotations

from padiff_trace import Record
from padiff_trace.arrays import squeezed

from ._newest import newest_pairs

__all__ = ["pair_leaves"]


def _permuted(shape: tuple[int, ...], perm: tuple[int, ...] | None) -> tuple[int, ...] | None:
    if perm is None or len(perm) != len(shape):
        return None
    return tuple(shape[k] for k in perm)


def pair_leaves(
    ra: list[Record], rb: list[Record], perm: tuple[int, ...] | None = None
) -> tuple[list[tuple[Record, Record, tuple[int, ...] | None]], list[Record], list[Record]]:
    """Pair tensor leaves: by position if both sides have the same positions, else in order by
    shape. A scalar (shape ``()``: a flag such as ``use_cache``, a count) carries no shape
    evidence: it pairs only with the leaf of the same position on the other side. One tensor
    left unpaired on each side, of broadcastable shapes, is the same argument named twice."""
    ta = [r for r in ra if r.is_tensor]
    tb = [r for r in rb if r.is_tensor]
    if [r.position for r in ta] == [r.position for r in tb] and not _reordered(ta, tb, perm):
        out = []
        for x, y in zip(ta, tb):
            p = perm if _permuted(x.shape, perm) == y.shape and x.shape != y.shape else None
            out.append((x, y, p))
        return out, [], []
    out, used, start = [], set(), 0
    # a keyword argument or output key named alike on both sides is the same value, wherever it
    # stands (an output dict with an entry more on one side: HF leaves a None pooler out)
    kw_b = {y.position: k for k, y in enumerate(tb) if _named(y.position)}
    named = {}
    for x in ta:
        k = kw_b.get(x.position)
        if k is not None and _named(x.position) and _same_argument(x, tb[k]):
            named[id(x)] = k
            used.add(k)
    for x in ta:
        if id(x) in named:
            k = named[id(x)]
            out.append((x, tb[k], perm if _permuted(x.shape, perm) == tb[k].shape and x.shape != tb[k].shape else None))
            continue
        px = _permuted(x.shape, perm)
        for k in range(start, len(tb)):
            if k in used or ((not x.shape or not tb[k].shape) and x.position != tb[k].position):
                continue
            if tb[k].shape == x.shape or (px is not None and tb[k].shape == px):
                out.append((x, tb[k], None if tb[k].shape == x.shape else perm))
                used.add(k)
                if x.shape:
                    start = k + 1
                break
        else:  # no leaf of its shape: the first positional one of its shape but for axes of size 1 (a
            # GRU run one step returns ``[1, b, h]`` twice where a cell returns ``[b, h]``); named
            # ones pair by name, or as the one left on each side
            for k in range(start, len(tb)):
                if (k not in used and x.shape and not _named(x.position) and not _named(tb[k].position)
                        and squeezed(tuple(tb[k].shape)) == squeezed(tuple(x.shape)) != ()):
                    out.append((x, tb[k], None))
                    used.add(k)
                    start = k + 1
                    break
    paired_a = {id(x) for x, _, _ in out}
    left_a = [x for x in ta if id(x) not in paired_a]
    left_b = [y for k, y in enumerate(tb) if k not in used]
    newest = newest_pairs(left_a, left_b)
    if newest:  # a decoder step with a key/value cache: the newest position against them all
        out.extend(newest)
        done_a, done_b = {id(x) for x, _, _ in newest}, {id(y) for _, y, _ in newest}
        left_a = [x for x in left_a if id(x) not in done_a]
        left_b = [y for y in left_b if id(y) not in done_b]
    if len(left_a) == len(left_b) == 1 and _same_argument(left_a[0], left_b[0]):
        # one tensor argument left on each side, under two names (paddle's ``src_mask``, HF's
        # ``attention_mask``) and maybe two broadcastable shapes: the same argument, compared
        out.append((left_a[0], left_b[0], None))
        return out, [], []
    return out, left_a, left_b


def _reordered(ta: list[Record], tb: list[Record], perm: tuple[int, ...] | None) -> bool:
    """Arguments at the same positions whose shapes disagree where another order makes each
    one's dtype and shape those of exactly one on the other side (``crf(emissions, lengths,
    tags)`` against ``crf(emissions, tags, lengths)``): the two libraries order the arguments
    differently; they pair by shape then, not by position."""
    if all(x.shape == y.shape or _permuted(x.shape, perm) == y.shape for x, y in zip(ta, tb)):
        return False
    sig_a = [(x.dtype, tuple(x.shape)) for x in ta]
    sig_b = [(y.dtype, tuple(y.shape)) for y in tb]
    if all(x.shape for x in ta) and len(set(sig_a)) == len(sig_a) and sorted(sig_a, key=str) == sorted(sig_b, key=str):
        return True
    # results in another order, some only on one side (a quantizer returning (loss, codes,
    # perplexity) against (codes, loss, indices)): each tensor that stands where the other side
    # holds another shape is, by dtype and shape, exactly one leaf on each side
    off = [a for a, x, y in zip(sig_a, ta, tb) if x.shape != y.shape and x.shape]
    return bool(off) and all(sig_a.count(a) == 1 and sig_b.count(a) == 1 for a in off)


def _named(position: str) -> bool:
    """A position reached through a name (``kwargs["mask"]``, ``out["pooler_output"]``), not
    only through indices (``args[1]``, ``out[0]``: orders differ between libraries)."""
    return position.startswith("kwargs") or '["' in position


def _same_argument(x: Record, y: Record) -> bool:
    """Two leftover tensor arguments that can be the same one: both hold values (no Python
    scalar) of shapes numpy can broadcast together. Their dtypes may differ (one library hands
    over a 0/1 mask, the other the additive mask made of it): compared, such a pair differs,
    and passes where its call's outputs show the difference is not used as a number."""
    if not (x.shape and y.shape) or "python" in (x.device, y.device):
        return False
    n = max(len(x.shape), len(y.shape))
    sx, sy = (1,) * (n - len(x.shape)) + tuple(x.shape), (1,) * (n - len(y.shape)) + tuple(y.shape)
    return all(a == b or 1 in (a, b) for a, b in zip(sx, sy))

"""Copies a model keeps of its own weights: an exponential moving average held in buffers, an
averaged model, a frozen reference or teacher that starts as the weights themselves.

Two authors keep such copies under names of their own (``ema_norm_weight`` in the root against
``ema.module.head.norm.weight`` in an averaged-model wrapper), as buffers on one side and frozen
parameters on the other, so nothing in their names or modules pairs them. Their values do:
before the first step a copy holds exactly the values of the tensor it copies. A tensor left
unpaired that does not train, whose step-0 statistics (``trace.STAT_FIELDS``: min, max, mean,
std, ...) are those of one paired tensor of its shape on its own side, is that tensor's
*shadow*; where several paired tensors hold those values (fresh norms are all ones), the one
whose name the shadow's ends with is. Two shadows pair as their sources paired, in the same layout, parts and all -- only where
every pair of the source has a shadow on the other side, and a source has one shadow on each.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import re
from collections.abc import Mapping

from ._weightmap import WeightPair
from ._weighttensors import MTensor

__all__ = ["SHADOW", "pair_shadows"]

logger = logging.getLogger(__name__)

SHADOW = "shadow"  # how a shadow pair is found (``_weightmap.CONFIDENCE``)

_WORD = re.compile(r"[a-z]+|\d+")


def _words(name: str) -> list[str]:
    return _WORD.findall(name.lower())


def _suffix(a: list[str], b: list[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def _usable(fp: tuple[float, ...] | None) -> bool:
    return fp is not None and len(fp) > 0 and all(not math.isnan(v) for v in fp)


def _copies_left(side: list[MTensor]) -> list[MTensor]:
    """What may be a copy: tensors left unpaired that do not train (buffers, frozen parameters)
    and hold numbers. A trained tensor left over is a structural difference, never a copy."""
    return [t for t in side if not t.used and not t.derived and not t.info.integer and not t.info.trainable]


def _sources(side: list[MTensor], fingerprints: Mapping[str, tuple[float, ...]]) -> dict[str, str]:
    """Unpaired tensor -> the paired tensor of its side it is a copy of (see the module docstring);
    a source copied more than once keeps none: nothing tells its copies apart."""
    left = _copies_left(side)
    if not left:
        return {}
    shapes = {t.info.shape for t in left}
    held: dict[tuple[tuple[int, ...], tuple[float, ...]], list[MTensor]] = {}
    for t in side:
        if t.used and not t.derived and t.info.shape in shapes:
            fp = fingerprints.get(t.info.name)
            if _usable(fp):
                assert fp is not None
                held.setdefault((t.info.shape, fp), []).append(t)
    out: dict[str, str] = {}
    for s in left:
        fp = fingerprints.get(s.info.name)
        cands = held.get((s.info.shape, fp)) if _usable(fp) and fp is not None else None
        if not cands:
            continue
        if len(cands) > 1:  # several hold those values: the one the shadow's name ends with
            words = _words(s.info.name)
            scores = [_suffix(words, _words(c.info.name)) for c in cands]
            best = max(scores)
            cands = [c for c, k in zip(cands, scores, strict=True) if k == best] if best > 0 else []
        if len(cands) == 1:
            out[s.info.name] = cands[0].info.name
    copies: dict[str, list[str]] = {}
    for copy, source in out.items():
        copies.setdefault(source, []).append(copy)
    return {copy: source for copy, source in out.items() if len(copies[source]) == 1}


def pair_shadows(a: list[MTensor], b: list[MTensor], fp_a: Mapping[str, tuple[float, ...]],
                 fp_b: Mapping[str, tuple[float, ...]], pairs: list[WeightPair]) -> list[WeightPair]:
    """The pairs of the shadows of ``a`` and ``b`` (their tensors marked used), each the pair of
    its sources with the names replaced."""
    if not _copies_left(a) or not _copies_left(b):  # no statistics read (a live model's are host copies)
        return []
    src_a, src_b = _sources(a, fp_a), _sources(b, fp_b)
    if not src_a or not src_b:
        return []
    shadow_a = {p: s for s, p in src_a.items()}
    shadow_b = {p: s for s, p in src_b.items()}
    of_a: dict[str, list[WeightPair]] = {}
    of_b: dict[str, list[WeightPair]] = {}
    for p in pairs:
        of_a.setdefault(p.a, []).append(p)
        of_b.setdefault(p.b, []).append(p)
    # a source's every pair must have a shadow on the other side, and the other way round
    ok_a, ok_b = set(shadow_a), set(shadow_b)
    while True:
        keep_a = {x for x in ok_a if of_a.get(x) and all(p.b in ok_b for p in of_a[x])}
        keep_b = {y for y in ok_b if of_b.get(y) and all(p.a in keep_a for p in of_b[y])}
        if keep_a == ok_a and keep_b == ok_b:
            break
        ok_a, ok_b = keep_a, keep_b
    new = [dataclasses.replace(p, a=shadow_a[p.a], b=shadow_b[p.b], how=SHADOW)
           for p in pairs if p.a in ok_a and p.b in ok_b]
    by_name = {t.info.name: t for t in (*a, *b)}
    for p in new:
        by_name[p.a].used = by_name[p.b].used = True
        logger.info("paired %s with %s: copies of %s and %s (the same values before the first step)", p.a, p.b,
                    src_a[p.a], src_b[p.b])
    return new

"""One layout per class: a user class's square matrices are held the way its other matrices are.

A layer class of a port's own (StyleGAN2's ``FullyConnectedLayer`` against a rewrite's
``EqualLinear``) has no entry in the layout table: the matcher finds each of its matrices'
orientation from the shapes, ``[in, out]`` against ``[out, in]``. A square matrix of that class
(``[32, 32]``) has no shape to say it and would be paired as stored. One class uses its weight
one way (``x @ W`` or ``x @ W.T``) in every instance, so where every non-square matrix of a pair
of classes (and local names) was paired transposed, its square ones are paired transposed too.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import defaultdict

from ._weightmap import WeightPair
from ._weighttensors import MTensor

__all__ = ["squares_like_their_class"]

logger = logging.getLogger(__name__)


def squares_like_their_class(pairs: list[WeightPair], by_name: dict[str, dict[str, MTensor]]) -> list[WeightPair]:
    """``pairs`` with the square matrices of user classes turned as their class's others are."""
    turned: dict[tuple[str, str, str, str], list[bool]] = defaultdict(list)
    squares: list[int] = []
    for i, p in enumerate(pairs):
        cls = _class(p, by_name)
        if cls is None:
            continue
        x = by_name["a"][p.a]
        if x.info.shape[0] == x.info.shape[1]:
            if p.relative_perm != (1, 0) and p.a_axes is None and p.b_axes is None:
                squares.append(i)
        else:
            turned[cls].append(p.relative_perm == (1, 0))
    out = list(pairs)
    for i in squares:
        p = out[i]
        seen = turned.get(_class(p, by_name) or ("", "", "", ""), [])
        if seen and all(seen):
            logger.info("%s paired transposed with %s, as the other matrices of its class", p.a, p.b)
            out[i] = dataclasses.replace(p, a_perm=tuple(p.a_perm[k] for k in (1, 0)) if p.a_perm else (1, 0), a_axes=(1, 0))
    return out


def _class(p: WeightPair, by_name: dict[str, dict[str, MTensor]]) -> tuple[str, str, str, str] | None:
    """(A's class, B's class, local names) of a 2-D pair where the layout table does not know at
    least one side's class, A's matrix whole (B's whole or a part of a packed matrix: a bare
    ``W_Query`` against the q rows of a fused ``qkv.weight``); None otherwise."""
    x, y = by_name["a"].get(p.a), by_name["b"].get(p.b)
    if (x is None or y is None or p.a_part is not None or not p.transfer or (x.known and y.known)
            or len(x.info.shape) != 2 or len(y.info.shape) != 2 or p.how == "reshape" or p.b_groups != 1):
        return None
    return x.type_key, y.type_key, x.local, y.local

"""Stacked tensors: one tensor ``[N, *s]`` of one side holding the ``N`` tensors of a module
list of the other side along a new first axis (a mixture of experts kept as a list of
``Linear`` experts in one port, as 3-D ``w_gate``/``w_up``/``w_down`` used with a batched
matmul in the other).

A stack pairs with the group of tensors whose module paths differ only in their last index
(``experts.0.w1`` .. ``experts.3.w1``), which must run 0 .. N-1, in the block the stack belongs
to, one shape ``s`` throughout: the stack's slices as they are, or (matrices) transposed - a
stack of an unknown class is used as ``x @ W[i]`` as often as ``x @ W[i].T``, and the shapes
decide, never for a square matrix. Where several groups fit one stack, the role its name says
(``w_gate`` ~ ``w1``/``gate_proj``, ``ROLE_SYNONYMS``) chooses. Where no name says one (``w_in``,
``w_out`` against ``fc1``, ``fc2``), a module's stacks take the groups that fit them in
registration order, one to one and all in one orientation; otherwise nothing is paired.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict

from ..arrays._layout import squeezed
from ._weighttensors import MTensor, role_of_words

__all__ = ["stacked_groups"]

logger = logging.getLogger(__name__)

_LAST_INDEX = re.compile(r"^(.*)\.(\d+)(\.[^.]+)?$")  # a module path ending in ``.<index>`` or ``.<index>.<leaf>``


def _listed(x: MTensor) -> tuple[str, int] | None:
    """(x's group key: its path with the last index a wildcard, the local name; the index)."""
    m = _LAST_INDEX.match(x.info.module)
    if m is None:
        return None
    return f"{m.group(1)}.*{m.group(3) or ''}:{x.type_key}:{x.local}", int(m.group(2))


def _orientation(s: tuple[int, ...], y: MTensor) -> bool | None:
    """How ``y``'s slices hold tensors of shape ``s``: False as they are, True transposed, None
    neither (or a square matrix, whose orientation the shapes cannot tell)."""
    inner = y.cshape[1:]
    if len(s) == 2 and s[0] == s[1]:
        return None
    if inner == s or (len(inner) != len(s) and squeezed(inner) == squeezed(s)):  # axes of size one aside
        return False
    if len(s) == 2 and inner == s[::-1]:
        return True
    return None


def stacked_groups(a: list[MTensor], b: list[MTensor]) -> list[tuple[list[MTensor], MTensor, bool]]:
    """(the group of ``a``'s tensors in index order, ``b``'s stack holding them, transposed or
    not) for every stack of ``b`` one group fits (see the module docstring). Only live,
    trainable tensors are looked at."""
    found: dict[str, dict[int, MTensor]] = defaultdict(dict)
    for x in a:
        got = _listed(x)
        if got is not None:
            found[got[0]][got[1]] = x
    groups = []
    for members in found.values():
        xs = [members.get(i) for i in range(len(members))]
        if len(xs) > 1 and all(x is not None for x in xs) and len({x.cshape for x in xs if x is not None}) == 1:
            groups.append([x for x in xs if x is not None])
    out: list[tuple[list[MTensor], MTensor, bool]] = []
    taken: set[int] = set()
    unsaid: dict[str, list[MTensor]] = defaultdict(list)  # module -> its stacks several groups fit, no name choosing
    for y in b:
        if len(y.cshape) < 2 or not y.info.trainable:
            continue
        fits = _fits(groups, y, taken)
        if len(fits) > 1:  # the role y's name says chooses
            role = role_of_words(y.local) or role_of_words(y.leaf)
            said = [(g, t) for g, t in fits if role is not None and role_of_words(g[0].leaf) == role]
            if not said:
                unsaid[y.info.module].append(y)
            fits = said
        if len(fits) == 1:
            _take(out, taken, fits[0][0], y, fits[0][1])
    for ys in unsaid.values():  # names say nothing: the stacks in the order the groups are registered
        cands = sorted({id(g[0]): g for y in ys for g, _ in _fits(groups, y, taken)}.values(), key=lambda g: g[0].index)
        order = [next((t for g2, t in _fits([g], y, taken) if g2 is g), None) for y, g in zip(ys, cands)]
        if len(cands) == len(ys) and all(t is not None for t in order) and len(set(order)) == 1:
            for y, g, t in zip(ys, cands, order):
                _take(out, taken, g, y, bool(t))
    return out


def _fits(groups: list[list[MTensor]], y: MTensor, taken: set[int]) -> list[tuple[list[MTensor], bool]]:
    """The groups not yet taken that ``y`` can hold stacked, each with its orientation."""
    return [(g, t) for g in groups if id(g[0]) not in taken and len(g) == y.cshape[0] and _same_kind(g[0], y)
            and _blocks_agree(g[0], y) and (t := _orientation(g[0].cshape, y)) is not None]


def _same_kind(x: MTensor, y: MTensor) -> bool:
    """Weights stack weights and biases biases: a list's biases ``[d]`` are no stack of
    per-item weight vectors ``[n, d]`` beside the stacked biases."""
    kinds = {"weight", "bias"}
    return x.local == y.local or not (x.local in kinds and y.local in kinds)


def _take(out: list[tuple[list[MTensor], MTensor, bool]], taken: set[int], g: list[MTensor], y: MTensor,
          transposed: bool) -> None:
    taken.add(id(g[0]))
    out.append((g, y, transposed))
    logger.info("%s holds %s .. %s stacked%s", y.info.name, g[0].info.name, g[-1].info.name,
                " (each transposed)" if transposed else "")


def _blocks_agree(x: MTensor, y: MTensor) -> bool:
    """The stack is in the block the group is (x's indices but the last are y's), or either
    path has no block index to compare."""
    outer = x.key[:-1]
    return not outer or not y.key or outer == y.key

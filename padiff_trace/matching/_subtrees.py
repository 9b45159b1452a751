"""Units told apart by what they hold: the modules of two ports whose subtrees hold the same
tensors, where no name, type or block index relates them.

Two ports of one generator (StyleGAN2's official code against a rewrite) nest the same layers
differently: ``synthesis.b8.conv0`` (a layer holding its weight, bias and noise strength, with
an ``affine`` child) against ``convs.0`` (``conv`` with a ``modulation`` child, ``noise``,
``activate``), with leading axes of size one on one side, matrices transposed, and every name
its own. What they share is the shape of each subtree: the same tensors, up to axes of size one
and the order of axes (``unit_key``). Left over after every other pass, the modules of each side
are put in classes by that key; a class with as many modules on each side (more than one tensor
each, fewer than all) pairs them in registration order, the largest units first, and the search
goes on inside each pair, down to tensors that are the last of their kind in their unit
(``pair_last_standing``). Where the units' own names pair them one to one (``norm1``, ``norm2`` on
both sides, registered in another order), the names win over the order. Nothing is paired
across units, and a class whose counts differ pairs nothing.

Where one side merges axes the other keeps apart (a Conv2D ``[o, c, k, e]`` over a stack of
embeddings against a Conv1d ``[o, c * e, k]`` over them concatenated), no shape key relates the
units; what is still left then is classed again by each tensor's element count only
(``coarse=True``), and the pairing inside each unit still needs a reordering that fits.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable

from ..arrays._layout import squeezed
from ._weighttensors import MTensor

__all__ = ["pair_by_units"]

Within = Callable[[list[MTensor], list[MTensor]], None]  # pairs the last of their kind in one unit pair
Take = Callable[[MTensor, MTensor, tuple[int, ...]], None]  # pairs A's tensor with B's, A's axes in that order

_Key = tuple[tuple[tuple[int, ...], int], ...]


def _tensor_key(t: MTensor, coarse: bool) -> tuple[int, ...]:
    return (math.prod(t.cshape),) if coarse else tuple(sorted(squeezed(t.cshape)))


def unit_key(ts: list[MTensor], coarse: bool = False) -> _Key:
    """What a subtree holds: how many tensors of each shape (axes of size one and axis order
    aside), or with ``coarse`` of each element count (axes merged aside too)."""
    return tuple(sorted(Counter(_tensor_key(t, coarse) for t in ts).items()))


def _units(ts: list[MTensor], coarse: bool) -> dict[_Key, list[list[MTensor]]]:
    """The subtrees of the modules holding ``ts`` (more than one tensor, not all of them), by
    ``unit_key``, each once (a module holding exactly what its only child holds is that child),
    in registration order."""
    under: dict[str, list[MTensor]] = defaultdict(list)
    for t in ts:
        parts = t.module.split(".") if t.module else []
        for k in range(len(parts) + 1):
            under[".".join(parts[:k])].append(t)
    seen: set[frozenset[int]] = set()
    out: dict[_Key, list[list[MTensor]]] = defaultdict(list)
    for members in under.values():
        ids = frozenset(id(t) for t in members)
        if 1 < len(members) < len(ts) and ids not in seen:
            seen.add(ids)
            out[unit_key(members, coarse)].append(sorted(members, key=lambda t: t.index))
    for units in out.values():
        units.sort(key=lambda u: u[0].index)
    return out


def pair_by_units(xs: list[MTensor], ys: list[MTensor], within: Within, take: Take, top: bool = True,
                  coarse: bool = False, counted: bool | None = None) -> None:
    """Pair ``xs`` (A's tensors left) with ``ys`` (B's) unit by unit (module docstring); below
    the top, what no smaller unit took is handed to ``within``, then to ``take`` for those
    whose shapes agree in stored order."""
    if not xs or not ys:
        return
    ua, ub = _units(xs, coarse), _units(ys, coarse)
    claimed: set[int] = set()
    # block indices at the same depths on both sides count the same blocks: units in order must
    # not pair one block's with another's (a norm missing in one block never slides over)
    if counted is None:  # judged once, on everything left
        counted = {len(t.key) for t in xs if t.key} == {len(t.key) for t in ys if t.key}
    for key in sorted(ua.keys() & ub.keys(), key=lambda k: -sum(n for _, n in k)):
        units_a, units_b = ua[key], ub[key]
        if len(units_a) != len(units_b) or any(id(t) in claimed for u in (*units_a, *units_b) for t in u):
            continue
        units_b = _named_alike(units_a, units_b)
        if counted and any(_apart(u, v) for u, v in zip(units_a, units_b)):
            continue
        for u, v in zip(units_a, units_b):
            claimed.update(id(t) for t in (*u, *v))
            pair_by_units(u, v, within, take, top=False, coarse=coarse, counted=counted)
    if not top:
        within([t for t in xs if not t.used], [t for t in ys if not t.used])
        _last_in_stored_order([t for t in xs if not t.used], [t for t in ys if not t.used], take)


def _leaf(u: list[MTensor]) -> str:
    """The name of the module a unit is (the innermost holding all its tensors), lower-cased."""
    paths = [t.module.split(".") for t in u]
    k = 0
    while all(len(p) > k and p[k] == paths[0][k] for p in paths):
        k += 1
    return paths[0][k - 1].lower() if k else ""


def _named_alike(units_a: list[list[MTensor]], units_b: list[list[MTensor]]) -> list[list[MTensor]]:
    """``units_b`` in the order of the units of ``units_a`` of the same name, where the names
    pair every unit one to one (``norm1`` and ``norm2`` on each side, registered in the other
    order by one port): two authors who chose one name meant one module, and the order they
    registered it in says less. Otherwise ``units_b`` as it is (registration order)."""
    na, nb = [_leaf(u) for u in units_a], [_leaf(v) for v in units_b]
    if na == nb or len(set(na)) != len(na) or set(na) != set(nb) or any(n.isdigit() or not n for n in na):
        return units_b
    by_name = dict(zip(nb, units_b))
    return [by_name[n] for n in na]


def _apart(u: list[MTensor], v: list[MTensor]) -> bool:
    """Whether two units sit in blocks their indices say differ (no block index in common)."""
    ku, kv = {t.key for t in u if t.key}, {t.key for t in v if t.key}
    return bool(ku and kv and not ku & kv)


def _last_in_stored_order(xs: list[MTensor], ys: list[MTensor], take: Take) -> None:
    """The last tensors of one unit pair whose shapes agree axis by axis, axes of size one aside
    (``[C, C, k, k]`` against ``[1, C, C, k, k]``, which ``within`` leaves: two equal axes could
    be swapped), each the only one of its shape there: paired in the order they are stored."""
    by_x, by_y = Counter(squeezed(t.cshape) for t in xs), Counter(squeezed(t.cshape) for t in ys)
    for x in xs:
        s = squeezed(x.cshape)
        if by_x[s] == 1 and by_y[s] == 1 and x.info.trainable:
            y = next(t for t in ys if squeezed(t.cshape) == s)
            take(x, y, tuple(range(len(x.cshape))))

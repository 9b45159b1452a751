"""Packed tensors: which run of the other side's tensors a packed one holds, and fused q|k|v
projections packed two ways (the weight matcher's packed passes, ``_weightmatch``)."""

from __future__ import annotations

import dataclasses
import logging
import re
from collections import Counter, defaultdict
from collections.abc import Callable

from ._knowledge import PACK_AXIS
from ._partners import partner_modules
from ._rolenames import SYN, fused_roles, role_of_words, roles_named, roles_of, roles_said
from ._rolenames import role_names as _role_names
from ._weightmap import WeightPair
from ._weighttensors import MTensor, block_pattern, path_words

__all__ = ["hoisted_rest", "hoisted_run", "Kind", "own_kind", "packed_run", "partner_place", "regrouped", "repeat_place"]

logger = logging.getLogger(__name__)
_DIGITS = re.compile(r"\d+")


def partner_place(whole: list[tuple[str, str]]) -> Callable[[MTensor, MTensor], bool | None]:
    """Whether ``y``'s module is inside the partner of x's module, parent or grandparent, the
    nearest that has one (``whole``: the tensor names paired whole so far; the modules they make
    one computation: the attention whose norm paired, the block whose norms paired), whatever
    the two sides' block indices count; never the root's. Where x's own module has a partner
    (one part of x paired already, a packed bias's twin), that partner's siblings are in place
    too. None where none of them has a partner yet."""
    fwd = partner_modules(whole)
    back = {mb: ma for ma, mb in fwd.items()}

    def near(x: MTensor, y: MTensor) -> bool | None:
        known, theirs = (fwd, back) if x.side == "a" else (back, fwd)
        m, up = x.info.module, 0
        while m and m not in known and up < 2:  # the nearest of x's module, parent, grandparent with a partner
            m, up = m.rpartition(".")[0], up + 1
        mine = known.get(m, "") if m else ""
        if not mine:
            return None
        if up == 0 and y.info.module.rpartition(".")[0] == mine.rpartition(".")[0]:
            return True  # x's own module paired with one of the parts: the others are its siblings
        if (y.info.module + ".").startswith(mine + "."):
            return True
        # a container the other side does without (a block's layers in a ``body`` Sequential,
        # partnered with the block itself): the parts may sit beside it, in its parent, where
        # that parent has no partner of its own; never where the partner is one repeat of a list
        # (``blocks.1``): its parent holds the other repeats, no container of its layers
        outer, _, last = mine.rpartition(".")
        return bool(up and outer and not last.isdigit() and outer not in theirs
                    and (y.info.module + ".").startswith(outer + "."))

    return near


def repeat_place(tensors: list[MTensor]) -> Callable[[MTensor, MTensor], bool | None]:
    """Whether ``y`` sits in the same repetition of a repeated module as ``x`` where the two
    sides index their repetitions at other depths (a flat list of four blocks against two
    repeats of two, ``TCN.2`` against ``repeats.1.0``): the i-th of a module's copies (its path
    with block indices as ``*``, in index order) is the i-th of the other's when both repeat as
    often. None where the depths agree (the indices say it), or the counts differ."""
    ranks: dict[int, tuple[int, int]] = {}
    copies: dict[tuple[str, str, str], list[MTensor]] = defaultdict(list)
    for t in tensors:
        if t.key:
            copies[(t.side, block_pattern(t.info.module), t.local)].append(t)
    for same in copies.values():
        keys = sorted({t.key for t in same})
        for t in same:
            ranks[id(t)] = (keys.index(t.key), len(keys))

    def near(x: MTensor, y: MTensor) -> bool | None:
        if len(x.key) == len(y.key) or id(x) not in ranks or id(y) not in ranks:
            return None
        (ix, nx), (iy, ny) = ranks[id(x)], ranks[id(y)]
        return ix == iy if nx == ny else None

    return near


Kind = Callable[[MTensor], tuple[str, tuple[int, ...]]]


def own_kind(t: MTensor) -> tuple[str, tuple[int, ...]]:
    """A tensor's canonical type and shape, as they are."""
    return t.ctype, t.cshape


def packed_run(x: MTensor, live: list[MTensor], same_modules: list[str] | None,
               side: list[MTensor], vocab: frozenset[str] = frozenset(),
               place: Callable[[MTensor, MTensor], bool | None] | None = None,
               kind: Kind = own_kind, own: list[MTensor] | None = None) -> tuple[list[MTensor] | None, int]:
    """The run of the other side's tensors ``x`` packs (``run_along``) and its axis: the first of
    x's ``PACK_AXIS`` axes that has one (a Linear's outputs, then its inputs). ``vocab``: the
    path words of x's own side; ``place``: whether two tensors sit in partnered modules;
    ``kind``: the type and shape a tensor is compared by (a pointwise convolution's as the
    Linear it is: ``POINTWISE_AS``); ``own``: x's side, all of it."""
    for axis in PACK_AXIS.get((x.ctype, x.local), ()):
        if x.used or len(kind(x)[1]) <= axis:
            break
        run = run_along(x, live, axis, same_modules, side, vocab, place, kind, own)
        if run is not None:
            return run, axis
    return None, 0


def run_along(x: MTensor, live: list[MTensor], axis: int, same_modules: list[str] | None,
              side: list[MTensor], vocab: frozenset[str] = frozenset(),
              place: Callable[[MTensor, MTensor], bool | None] | None = None,
              kind: Kind = own_kind, own: list[MTensor] | None = None) -> list[MTensor] | None:
    """The tensors of the other side (``live``, unpaired; ``side``, all of them) that ``x`` holds
    concatenated along ``axis``: siblings of one type and local name, in the same block, whose
    sizes add up to x's (in the same block, or in the partner of x's module: ``place``), and adjacent among their parent's tensors of that type and local name (a fused
    projection replaces neighbours: ``q``, ``kv``, ``proj`` hold no ``q|proj``) unless every
    part's name says a role of one fused projection (``FUSED_ROLES``: Mixtral's ``w1``, ``w2``,
    ``w3`` hold gate and up apart). Where
    several runs fit: the modules an earlier tensor of x's module packed (``same_modules``),
    then runs whose roles x's own name lists (``kv``: k then v), then runs whose names say their
    roles, then the runs whose path words agree best with x's (a word of the run's path that x's
    own side uses elsewhere but not in x's path counts against it: ``visual`` for the text
    tower's packed projection, where the towers are registered in another order), then the
    first (registration order: a path whose blocks carry no index, ``encoder_layer_0``, takes
    the runs in turn). Types and shapes are compared as ``kind`` gives them: a pointwise
    convolution ``[3n, d, 1, 1]`` holds three Linears ``[n, d]``."""
    xtype, xshape = kind(x)
    rest = xshape[:axis] + xshape[axis + 1 :]
    size = {id(y): kind(y)[1][axis] for y in live if len(kind(y)[1]) > axis}
    # a pointwise convolution is taken as a Linear where it is the one holding the others (one
    # fused 1x1 convolution for several Linears), never as a part of a Linear: a head's 1x1
    # convolutions, without block indices to place them, are no attention's output projection
    # (convolutions of one type pack each other as before), unless they sit in the partner of
    # x's module (a focal modulation's one Linear for q|ctx|gates against three 1x1 convolutions)
    named = roles_named(x.leaf)
    # (or where every part's own name says its role in x, a fused projection by its kind or its
    # name: a DDPM attention's 1x1 convolutions ``q``, ``k``, ``v`` against a MultiheadAttention's
    # ``in_proj_weight``; ``by_role`` below)
    cand = [
        y for y in live
        if kind(y)[0] == xtype and y.local == x.local and _placed(x, y, place)
        and (y.ctype == x.ctype or kind(y)[0] == y.ctype or (place is not None and place(x, y) is True)
             or (y.leaf in SYN and (x.packed or bool(named))))
        and len(kind(y)[1]) == len(xshape)
        and kind(y)[1][:axis] + kind(y)[1][axis + 1 :] == rest and size[id(y)] < xshape[axis]
    ]
    by_role = {id(y) for y in cand if not (y.ctype == x.ctype or kind(y)[0] == y.ctype
                                          or (place is not None and place(x, y) is True))}
    by_parent: dict[str, list[MTensor]] = defaultdict(list)
    for y in cand:
        by_parent[y.parent].append(y)
    slot = {id(t): i for i, t in enumerate(t for t in side if t.local == x.local and kind(t)[0] == xtype and t.parent in by_parent)}
    mine = path_words(x.info.module)  # the module holding the packed tensor: its parts' parent
    # a tensor whose name says one role (``out_proj``) holds no parts named for others (q|k)
    one_role = role_of_words(x.leaf)
    runs: list[tuple[int, int, int, list[MTensor]]] = []
    for group in by_parent.values():
        for i in range(len(group)):
            total = 0
            for j in range(i, len(group)):
                total += size[id(group[j])]
                if total > xshape[axis]:
                    break
                if total == xshape[axis] and j > i:
                    run = group[i : j + 1]
                    adjacent = all(slot[id(b)] - slot[id(a)] == 1 for a, b in zip(run, run[1:]))
                    if not adjacent and not fused_roles(run):
                        continue
                    if any(id(y) in by_role for y in run) and not fused_roles(run):
                        continue  # a pointwise convolution is a part only where the run's names say x's roles
                    if one_role is not None and any(r not in (None, one_role) for r in roles_said(run)):
                        continue
                    if own is not None and _one_block_of_many(x, run, side, own):
                        continue  # a tensor of the model packs no one block's parts that every block has
                    mods = [y.info.module for y in run]
                    rank = (0 if same_modules == mods else 1 if named and named in (roles_of(run), roles_said(run))
                            else 2 if _role_names(run) else 3)
                    theirs = path_words(run[0].parent)
                    words = len(mine & theirs) - len((theirs - mine) & vocab)
                    runs.append((rank, -words, run[0].index, run))
    if not runs:
        return None
    runs.sort(key=lambda r: r[:3])
    return in_named_order(runs[0][3], named)


def in_named_order(run: list[MTensor], named: tuple[int, ...]) -> list[MTensor]:
    """``run`` in the order the packed tensor's name lists its parts' roles (``gate_up``: gate,
    then up), where each part's name says one of them, each once; else as it is (the order the
    side registers, or calls, its modules). A name says where a part lies; the order a port
    happens to call its projections in does not."""
    said = roles_said(run)
    if not named or len(named) != len(run) or len(set(named)) != len(named) or set(said) != set(named):
        return run
    return [run[said.index(r)] for r in named]


def hoisted_run(x: MTensor, live: list[MTensor], side: list[MTensor], own: list[MTensor],
                kind: Kind = own_kind) -> tuple[list[MTensor] | None, int]:
    """The layers of one name that the other side keeps once in each of several modules
    (``temb_proj`` in every ResBlock), all of them still unpaired, that ``x`` -- outside any block,
    with no tensor of its kind and shape left on the other side -- holds one after the other
    along its first ``PACK_AXIS`` axis, in the other side's order: a model that projects the
    time embedding for every block at once at its top and hands each block its slice. Layers
    that have twins of their own on x's side (``own``: as many tensors of their type, name and
    shape; an LM head of 2d rows is no hoisted pair of output projections) are none. Exactly
    one such name must fit; else (None, 0)."""
    axes = PACK_AXIS.get((x.ctype, x.local), ())
    if x.used or x.key or not axes:
        return None, 0
    axis = axes[0]
    xtype, xshape = kind(x)
    if len(xshape) <= axis or any(kind(y) == (xtype, xshape) for y in live):
        return None, 0
    rest = xshape[:axis] + xshape[axis + 1 :]
    live_ids = {id(t) for t in live}
    by_leaf: dict[str, list[MTensor]] = defaultdict(list)
    for t in side:
        if t.local == x.local and kind(t)[0] == xtype and not t.derived:
            by_leaf[t.leaf].append(t)
    found = []
    for ts in by_leaf.values():
        parents = {t.parent for t in ts}
        if len(ts) < 2 or len(parents) != len(ts) or any(id(t) not in live_ids for t in ts):
            continue
        if any(x.info.module == p or x.info.module.startswith(p + ".") for p in parents if p):
            continue
        shapes = [kind(t)[1] for t in ts]
        if any(len(sh) != len(xshape) or sh[:axis] + sh[axis + 1 :] != rest for sh in shapes):
            continue
        if sum(sh[axis] for sh in shapes) != xshape[axis]:
            continue
        like = Counter((t.ctype, t.local, t.cshape) for t in ts)
        mine = Counter((t.ctype, t.local, t.cshape) for t in own if not t.derived)
        if any(mine[k] >= n for k, n in like.items()):
            continue  # the layers have twins of their own on x's side
        found.append(sorted(ts, key=lambda t: t.index))
    return (found[0], axis) if len(found) == 1 else (None, 0)


def hoisted_rest(x: MTensor, run: list[MTensor], own_live: list[MTensor],
                 side: list[MTensor]) -> list[tuple[MTensor, list[MTensor], int]]:
    """The other tensors of ``x``'s module (a hoisted projection's bias), each with the tensors of
    its local name of ``run``'s modules, in run order, and the axis they pack along: where they are
    all unpaired and their sizes add up (``own_live``: x's side, unpaired; ``side``: the other)."""
    out = []
    for z in own_live:
        axes = PACK_AXIS.get((z.ctype, z.local), ())
        if z.info.module != x.info.module or z.local == x.local or not axes or len(z.cshape) <= axes[0]:
            continue
        parts = [next((t for t in side if t.info.module == y.info.module and t.local == z.local and not t.used), None)
                 for y in run]
        ts = [t for t in parts if t is not None]
        if len(ts) == len(run) and all(len(t.cshape) > axes[0] for t in ts) and sum(t.cshape[axes[0]] for t in ts) == z.cshape[axes[0]]:
            out.append((z, ts, axes[0]))
    return out


def _one_block_of_many(x: MTensor, run: list[MTensor], side: list[MTensor], own: list[MTensor]) -> bool:
    """Whether ``x``, outside any block, would pack a run inside one of several blocks that each
    hold such a run (their paths alike but for the block indices) while x's side has fewer
    tensors like x (their paths alike but for digits: ``layer1.fcs``, ``layer2.fcs``) than there
    are such blocks: an LM head taken for one block's gate and output projections would leave the
    other blocks' runs without a whole."""
    if x.key or not run[0].key or len({y.key for y in run}) != 1:
        return False
    pattern = block_pattern(run[0].info.module)
    blocks = {t.key for t in side if t.local == run[0].local and block_pattern(t.info.module) == pattern}
    stem = _DIGITS.sub("", x.info.module)
    kin = [t for t in own if not t.key and t.local == x.local and t.ctype == x.ctype and _DIGITS.sub("", t.info.module) == stem]
    return len(kin) < len(blocks)


def _placed(x: MTensor, y: MTensor, place: Callable[[MTensor, MTensor], bool | None] | None) -> bool:
    """Whether ``y`` may be a part of ``x``: inside the partner of x's module (or of its parent,
    grandparent) where one is known; else in the same block. A path without block indices
    (``cross.attn``) fits any block, so only the partner can keep a part out of a module that is
    no twin of x's (a cross-attention's q|k taken for the MLP's ``fc1`` of the first block)."""
    placed = place(x, y) if place is not None else None
    return placed if placed is not None else _same_block(x.key, y.key)


def _same_block(kx: tuple[int, ...], ky: tuple[int, ...]) -> bool:
    """Block indices that do not contradict: equal, or one path has none to compare."""
    return kx == ky or not kx or not ky


def regrouped(pairs: list[WeightPair], by_name: dict[str, dict[str, MTensor]],
              pack_groups: dict[str, dict[str, int]]) -> list[WeightPair]:
    """``pairs`` with each whole-tensor pair of two fused q|k|v projections whose packings are
    both known (``pack_groups``, side -> module -> groups) and differ (head by head on one side,
    q|k|v of all heads on the other: the same three projections in another order) replaced by
    three, q, k and v, each side taking its share of its own groups (equal shares: q has as
    many heads as k and v)."""
    ga, gb = pack_groups["a"], pack_groups["b"]
    if not ga or not gb:
        return pairs
    keep = []
    for p in pairs:
        x, y = by_name["a"][p.a], by_name["b"][p.b]
        na, nb = ga.get(x.info.module), gb.get(y.info.module)  # both packings known, or no regrouping
        axis = PACK_AXIS.get((x.ctype, x.local), (None,))[0]  # q|k|v: the output axis
        n = x.cshape[axis] if axis is not None and len(x.cshape) > axis else 0
        if (na is None or nb is None or na == nb or p.a_part is not None or p.b_part is not None or n == 0
                or n % (3 * na) or n % (3 * nb)):
            keep.append(p)
            continue
        sa, sb = n // (3 * na), n // (3 * nb)
        for i in range(3):
            keep.append(dataclasses.replace(p, how="packed", a_part=(i * sa, (i + 1) * sa), b_part=(i * sb, (i + 1) * sb),
                                            axis=axis or 0, a_groups=na, b_groups=nb))
        logger.info("%s and %s: q|k|v packed in %d vs %d groups, regrouped", p.a, p.b, na, nb)
    return keep

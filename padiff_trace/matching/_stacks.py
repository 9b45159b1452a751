"""Stacked tensors: one tensor ``[N, *s]`` of one side holding the ``N`` tensors of a module
list of the other side along a new first axis (a mixture of experts kept as a list of
``Linear`` experts in one port, as 3-D ``w_gate``/``w_up``/``w_down`` used with a batched
matmul in the other), or concatenated along its first axis, ``[N * s0, *s[1:]]`` (a Res2Net
stage's branch convolutions kept as one ``kernels`` tensor sliced per branch, their biases and
norm parameters likewise).

A stack pairs with the group of tensors whose module paths differ only in one index
(``experts.0.w1`` .. ``experts.3.w1``; the last index first, then the others: a model's
``projection [L, d, m]`` holding the ``layers.0.attn.omega`` .. ``layers.{L-1}.attn.omega`` of a
port that keeps one per layer), which must run 0 .. N-1, in the block the stack belongs
to, one shape ``s`` throughout, trainable as the stack is (buffers stack buffers): the stack's slices as they are, or (matrices) transposed - a
stack of an unknown class is used as ``x @ W[i]`` as often as ``x @ W[i].T``, and the shapes
decide, never for a square matrix. Where several groups fit one stack, the role its name says
(``w_gate`` ~ ``w1``/``gate_proj``, ``ROLE_SYNONYMS``) chooses, or the role of the innermost
module around it that names one (per-head norms ``q_layernorm.norms.0`` .. against ``q_norm``). Where no name says one (``w_in``,
``w_out`` against ``fc1``, ``fc2``), a module's stacks take the groups that fit them in
registration order, one to one and all in one orientation; otherwise nothing is paired.

A stack may hold several lists packed in each element (``stacked_packs``): ``w13 [experts, 2 *
ffn, d]`` is each expert's ``gate_proj`` rows then its ``up_proj`` rows, the layout of grouped
expert weights (``experts.gate_up_proj``). The lists are siblings in one module list, each with as
many members as the stack has elements, and their members' shapes concatenate along one axis to
an element (as it is, or transposed: ``[experts, d, 2 * ffn]``); the names the stack lists
(``gate_up``) order them, else the order the lists are registered in.

Where the two sides count blocks differently (PaddleClas's ``res2a`` holding ``conv1.0`` ..
``conv1.2`` against torchvision's ``layers.0.branches.conv``, one grouped convolution), the stack
and the list are in one block when each sits inside the module the pairs so far make the other's
counterpart (``_partners.counterpart_scope``). A vector stack beside a stack that took a list (a
grouped convolution's BatchNorm) holds that list's vectors (the branches' norms).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable

from ..arrays._layout import concat_axis, squeezed
from ._packs import in_named_order
from ._rolenames import role_of_words, roles_named
from ._weighttensors import MTensor

__all__ = ["pair_stacked_packs", "stacked_groups", "stacked_packs"]

logger = logging.getLogger(__name__)

def _listed(x: MTensor) -> list[tuple[str, int]]:
    """(a group key of x: its path with one index a wildcard, the local name; that index), for
    each index of its path, the last first."""
    parts = x.info.module.split(".")
    out = []
    for k in reversed(range(len(parts))):
        if parts[k].isdigit():
            key = ".".join([*parts[:k], "*", *parts[k + 1:]])
            out.append((f"{key}:{x.type_key}:{x.local}", int(parts[k])))
    return out


def _orientation(s: tuple[int, ...], y: MTensor, n: int, laid: str | None = None) -> str | None:
    """How ``y``'s first axis holds ``n`` tensors of shape ``s``: ``slices`` as they are,
    ``transposed`` (matrices), ``concat`` one after the other along it, None neither (or a square
    matrix, whose orientation the shapes cannot tell, unless ``laid``: the one orientation every
    stack of non-square matrices in its module shows)."""
    if y.cshape[0] == n and len(y.cshape) >= 2:
        inner = y.cshape[1:]
        if len(s) == 2 and s[0] == s[1]:
            return laid if inner == s else None
        if inner == s or (len(inner) != len(s) and squeezed(inner) == squeezed(s)):  # axes of size one aside
            return "slices"
        if len(s) == 2 and inner == s[::-1]:
            return "transposed"
        return None
    if s and y.cshape == (n * s[0], *s[1:]):
        return "concat"
    return None


Counterpart = Callable[[str, str], str]  # (module, side) -> the other side's module the pairs make its counterpart


def stacked_groups(a: list[MTensor], b: list[MTensor],
                   counterpart: Counterpart | None = None) -> list[tuple[list[MTensor], MTensor, str]]:
    """(the group of ``a``'s tensors in index order, ``b``'s stack holding them, how:
    ``_orientation``) for every stack of ``b`` one group fits (see the module docstring). A stack
    holds trainable tensors or buffers as the group does. ``counterpart``: the module of the other
    side the pairs so far make a module's counterpart (``_partners.counterpart_scope``): a stack
    and a group whose paths count blocks differently are in one block where each sits inside the
    other's counterpart."""
    groups = _index_groups(a)
    out: list[tuple[list[MTensor], MTensor, str]] = []
    taken: set[int] = set()
    # a vector [N * n] is N vectors [n] one after the other only in a module where a tensor of more
    # axes holds the same list so (the branches' biases beside their kernels): any even vector splits
    holds: dict[str, set[str]] = defaultdict(set)
    # module -> how the stacks of matrices it holds keep them (``slices``/``transposed``), where
    # every stack whose shapes show it says the same: its stacks of square matrices are kept
    # alike (a hypernetwork's ``w1``, ``w2`` [N, d, d] beside ``w3`` [N, d, k] used as ``x @ w[i]``);
    # stacks that disagree (a low-rank ``U`` as it is beside ``V`` transposed) say nothing
    laid: dict[str, str] = {}
    # matrices, then (where that showed a module's layout) its square ones, then vectors
    for flat in (False, False, True):
        unsaid: dict[str, list[MTensor]] = defaultdict(list)  # module -> its stacks several groups fit, no name choosing
        for y in b:
            if not y.cshape or (len(y.cshape) == 1) != flat:
                continue
            fits = _fits(groups, y, taken, holds if flat else None, counterpart, laid)
            if len(fits) > 1:  # the role y's name says chooses
                role = role_of_words(y.local) or _role(y.info.module)
                said = [(g, t) for g, t in fits if role is not None and (role_of_words(g[0].leaf) or _role(_list_of(g))) == role]
                if not said:
                    unsaid[y.info.module].append(y)
                fits = said
            if len(fits) == 1:
                _take(out, taken, fits[0][0], y, fits[0][1])
        for ys in unsaid.values():  # names say nothing: the stacks in the order the groups are registered
            cands = sorted({tuple(map(id, g)): g for y in ys
                            for g, _ in _fits(groups, y, taken, holds if flat else None, counterpart, laid)}.values(),
                           key=lambda g: g[0].index)
            order = [next((t for g2, t in _fits([g], y, taken, holds if flat else None, counterpart, laid) if g2 is g), None)
                     for y, g in zip(ys, cands)]
            if len(cands) == len(ys) and all(t is not None for t in order) and len(set(order)) == 1:
                for y, g, t in zip(ys, cands, order):
                    _take(out, taken, g, y, str(t))
        shown: dict[str, set[str]] = defaultdict(set)
        for _, y, how in out:
            if how in ("slices", "transposed") and len(y.cshape) == 3 and y.cshape[1] != y.cshape[2]:
                shown[y.info.module].add(how)
        laid = {m: hows.pop() for m, hows in shown.items() if len(hows) == 1}  # stacks that disagree say nothing
        for g, y, _ in out:  # the stack's module holds the list, and so do the modules beside it (a
            # grouped convolution's BatchNorm next to it holds the branches' norms)
            holds[y.info.module].add(_list_of(g))
            holds[y.info.module.rpartition(".")[0] + ".*"].add(_list_of(g))
    return out


def _index_groups(a: list[MTensor]) -> list[list[MTensor]]:
    """``a``'s tensors grouped by their paths with one index a wildcard (``_listed``), each group
    complete (indices 0 .. n-1, n > 1) and of one shape, in index order."""
    found: dict[str, dict[int, MTensor]] = defaultdict(dict)
    for x in a:
        for key, i in _listed(x):
            found[key][i] = x
    groups = []
    for members in found.values():
        xs = [members.get(i) for i in range(len(members))]
        if len(xs) > 1 and all(x is not None for x in xs) and len({x.cshape for x in xs if x is not None}) == 1:
            groups.append([x for x in xs if x is not None])
    return groups


def stacked_packs(a: list[MTensor], b: list[MTensor], counterpart: Counterpart | None = None
                  ) -> list[tuple[list[list[MTensor]], MTensor, int, list[int], bool]]:
    """(the lists of ``a`` packed in each element of ``b``'s stack, in packing order; the stack;
    the axis of an element they concatenate along; each list's size along it; whether the
    elements hold them transposed) for every stack of ``b`` several lists fill (module docstring)."""
    groups = _index_groups(a)
    out: list[tuple[list[list[MTensor]], MTensor, int, list[int], bool]] = []
    taken: set[int] = set()
    for y in b:
        if len(y.cshape) < 2:
            continue
        n = y.cshape[0]
        fit = [g for g in groups if len(g) == n and id(g[0]) not in taken and _same_kind(g[0], y)
               and g[0].info.trainable == y.info.trainable and g[0].info.is_param == y.info.is_param
               and (_blocks_agree(g, y) or _counterparts(g, y, counterpart))]
        by_list: dict[tuple[str, str], list[list[MTensor]]] = defaultdict(list)
        for g in fit:  # the lists' weights with weights, their biases with biases
            by_list[_list_of(g), g[0].local].append(g)
        found = []
        for listed in by_list.values():
            if len(listed) < 2 or any(len({g[i].info.module.rpartition(".")[0] for g in listed}) != 1 for i in range(n)):
                continue  # members of one element must be siblings (``experts.2.gate_proj``, ``experts.2.up_proj``)
            lists = _packing_order(listed, y)
            shapes = [g[0].cshape for g in lists]
            inner = y.cshape[1:]
            fits = [(False, concat_axis(shapes, inner))]
            if len(inner) == 2 and inner[0] != inner[1]:
                fits.append((True, concat_axis(shapes, inner[::-1])))
            fits = [(t, c) for t, c in fits if c is not None]
            if len(fits) == 1:
                found.append((lists, fits[0]))
        if len(found) == 1:  # one way only: several would be a guess
            lists, (turned, cut) = found[0]
            assert cut is not None
            out.append((lists, y, cut[0], cut[1], turned))
            taken.update(id(g[0]) for g in lists)
            logger.info("%s holds %s packed in each element", y.info.name, " | ".join(g[0].info.name for g in lists))
    return out


def pair_stacked_packs(a: list[MTensor], b: list[MTensor], pair: Callable[..., None],
                       counterpart: Counterpart | None = None) -> None:
    """Pair each member of the lists ``stacked_packs`` finds with its rows of its element of the
    stack (``pair(x, y, how, x_part, y_part, axis, used=..., yi=element)``)."""
    for lists, y, axis, sizes, turned in stacked_packs(a, b, counterpart):
        if turned:  # each element holds the lists transposed: the canonical view swaps its axes
            y.perm = tuple((y.perm or tuple(range(len(y.cshape))))[k] for k in (0, 2, 1))
            y.cshape = (y.cshape[0], y.cshape[2], y.cshape[1])
        for i in range(y.cshape[0]):  # element i: the lists' i-th members one after the other
            start = 0
            for g, size in zip(lists, sizes):
                pair(g[i], y, "stacked", None, (start, start + size), axis, used=False, yi=i,
                     y_axes=(0, 2, 1) if turned else None)
                g[i].used = True
                start += size
        y.used = True


def _packing_order(lists: list[list[MTensor]], y: MTensor) -> list[list[MTensor]]:
    """The lists in the order ``y``'s name lists their roles (``gate_up``), else as registered."""
    lists = sorted(lists, key=lambda g: g[0].index)
    firsts = in_named_order([g[0] for g in lists], roles_named(y.local) or roles_named(y.leaf))
    return [next(g for g in lists if g[0] is x) for x in firsts]


def _role(path: str) -> int | None:
    """The role the innermost module of ``path`` that names one says, inside its block (the
    list ``q_layernorm.norms`` says q, as its stack ``q_norm`` does); None: none says one."""
    for word in reversed(path.split(".")):
        if word.isdigit():
            break
        role = role_of_words(word)
        if role is not None:
            return role
    return None


def _list_of(g: list[MTensor]) -> str:
    """The module list a group's members sit in: their paths up to the index they differ by."""
    parts = [x.info.module.split(".") for x in g]
    k = next((i for i in range(len(parts[0])) if len({p[i] if i < len(p) else None for p in parts}) > 1), len(parts[0]))
    return ".".join(parts[0][:k])


def _fits(groups: list[list[MTensor]], y: MTensor, taken: set[int],
          holds: dict[str, set[str]] | None = None, counterpart: Counterpart | None = None,
          laid: dict[str, str] | None = None) -> list[tuple[list[MTensor], str]]:
    """The groups not yet taken that ``y`` can hold stacked, each with its orientation; with
    ``holds`` (module -> the lists its other stacks hold; ``parent.*``: the lists a stack beside
    it holds), only those lists; ``laid``: module -> how its stacks of matrices keep them."""
    return [(g, t) for g in groups if not any(id(x) in taken for x in g) and _same_kind(g[0], y)
            and g[0].info.trainable == y.info.trainable and g[0].info.is_param == y.info.is_param
            and (_blocks_agree(g, y) or _counterparts(g, y, counterpart))
            and (holds is None or _list_of(g) in holds.get(y.info.module, ())
                 or _list_of(g) in holds.get(y.info.module.rpartition(".")[0] + ".*", ()))
            and (t := _orientation(g[0].cshape, y, len(g), (laid or {}).get(y.info.module))) is not None]


def _counterparts(g: list[MTensor], y: MTensor, counterpart: Counterpart | None) -> bool:
    """Whether the pairs so far make the block of ``g``'s list and the block of stack ``y`` one:
    each sits inside the other's counterpart (``counterpart``), neither the root."""
    if counterpart is None:
        return False
    lst = _list_of(g)
    of_list, of_stack = counterpart(lst, g[0].side), counterpart(y.info.module, y.side)
    return bool(of_list and of_stack) and _inside(y.info.module, of_list) and _inside(lst, of_stack)


def _inside(module: str, scope: str) -> bool:
    return module == scope or module.startswith(scope + ".")


def _same_kind(x: MTensor, y: MTensor) -> bool:
    """Weights stack weights and biases biases: a list's biases ``[d]`` are no stack of
    per-item weight vectors ``[n, d]`` beside the stacked biases."""
    kinds = {"weight", "bias"}
    return x.local == y.local or not (x.local in kinds and y.local in kinds)


def _take(out: list[tuple[list[MTensor], MTensor, str]], taken: set[int], g: list[MTensor], y: MTensor,
          how: str) -> None:
    taken.add(id(g[0]))
    out.append((g, y, how))
    logger.info("%s holds %s .. %s %s", y.info.name, g[0].info.name, g[-1].info.name,
                {"slices": "stacked", "transposed": "stacked, each transposed"}.get(how, "one after the other"))


def _blocks_agree(g: list[MTensor], y: MTensor) -> bool:
    """The stack is in the block the group is: the group's indices but the one its members count
    are y's, and that one is below y's (a stack in ``body.0`` holds a list inside that block, never
    ``stages.0`` .. ``stages.2``' tensors); or either path has no block index to compare."""
    keys = [x.key for x in g]
    pos = next((k for k in range(len(keys[0])) if len({key[k] if k < len(key) else None for key in keys}) > 1),
               len(keys[0]) - 1)
    outer = keys[0][:pos] + keys[0][pos + 1:]
    return not y.key or (pos >= len(y.key) and (not outer or outer == y.key))

"""The tensors as the weight matcher sees them, and the evidence that pairs them.

``normalise`` puts each tensor of a side in its canonical terms: canonical module type and
local name (``_knowledge`` aliases), canonical layout and shape, block indices of its path
(``layers.3`` -> 3), derived or not, packed role or not. ``groups``/``by_blocks`` form the
classes the passes assign within; ``assign`` scores the candidate pairs of one class (the
same role by module name, shared path words, registration order).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from .._errors import MappingError
from ._callshapes import by_call_shapes, call_signatures, held_calls
from ._knowledge import (
    AFFINE_ALIASES,
    BACKWARD_WORDS,
    DERIVED_STATE,
    LAYER_INDEXED_LOCALS,
    LOCAL_ALIASES,
    NORM_LAYERS,
    PACKED_LOCALS,
    PACKED_ROLES,
    PARAMETRIZED_UNDER,
    RAW_WEIGHTS,
    RNN_CELL_LAYERS,
    TYPE_WORDS,
    WEIGHT_NORM,
)
from ._match import TypeResolver, group_key, same_canonical
from ._observed import layout_key
from ._rolenames import SYN as _SYN
from ._rolenames import same_role as _same_role
from ._weightmap import TensorInfo
from ._weightsides import WeightSide

__all__ = ["MTensor", "assign", "by_blocks", "distinguishing_words", "groups", "names_agree", "normalise", "part_shape", "path_words", "word_set"]

_INT = re.compile(r"(?:^|\.)(\d+)(?=\.|$)")
_CELL_LOCAL = re.compile(r"^(?:weight|bias)_(?:ih|hh|hr)$")
_LAYER_INDEXED = {t: re.compile(p) for t, p in LAYER_INDEXED_LOCALS.items()}
_WORD = re.compile(r"[a-z]+|\d+")


@dataclass(eq=False)
class MTensor:
    """One tensor of one side in canonical terms (see the module docstring)."""

    info: TensorInfo
    index: int
    side: str
    ctype: str  # canonical type of the tensor's role ("linear" for MHA in_proj_*)
    known: bool
    local: str  # canonical local name
    perm: tuple[int, ...] | None  # stored -> canonical
    cshape: tuple[int, ...]
    key: tuple[int, ...]  # block indices in the module path
    derived: bool
    packed: bool  # a role of PACKED_ROLES: expected to be several tensors of the other side
    used: bool = False
    owner: str = ""  # the layer a parametrization keeps this tensor for (``PARAMETRIZED_UNDER``), else ""
    sub: tuple[int, ...] = ()  # the layer index its local name carries (``weight_hh_l1``: (1,)), also in ``key``
    turned: bool = False  # its canonical view was transposed to fit (a bare matrix stored [in, out])
    place: bool = False  # the last index of ``key`` is a layer's place in a pipeline (``_positions``), not a block's
    beside: tuple[tuple[object, ...], ...] = ()  # a norm's: the layers next to it (``siblings``)
    mate: str = ""  # a norm's: the module of the other side it belongs with (``_unitnorms.mark_mates``)
    # what its module's first call took and returned, finest first (``call_signatures``); () before a run
    sig: tuple[object, ...] = ()

    @property
    def block_key(self) -> tuple[int, ...]:
        """``key`` without a pipeline place: the indices of the repeated blocks holding the tensor."""
        return self.key[:-1] if self.place and self.key else self.key

    @property
    def module(self) -> str:
        """The layer the tensor belongs to (a parametrized layer's, not its parametrization's)."""
        return self.owner or self.info.module

    @property
    def parent(self) -> str:
        return self.module.rpartition(".")[0]

    @property
    def leaf(self) -> str:
        return self.module.rpartition(".")[2].lower()

    @property
    def type_key(self) -> str:
        """The class key: equivalent types share one (paddle's rank-generic ``BatchNorm`` and
        ``BatchNorm2D`` are one class), a user-defined class stays apart from known layers."""
        return group_key(self.ctype) if self.known else "user:" + self.ctype


def normalise(side: WeightSide, tag: str) -> list[MTensor]:
    res = TypeResolver(side.framework, side.classes)
    types = {t.module: t.module_type for t in side.tensors}
    held = {(t.module, t.local) for t in side.tensors}
    positions = _positions(types)
    bidirectional = {t.module for t in side.tensors if t.local.endswith("_reverse")}
    beside_calls = held_calls(side.call_shapes, types.keys())
    out = []
    for i, t in enumerate(side.tensors):
        owner = t.module[: -len(PARAMETRIZED_UNDER)] if t.module.endswith(PARAMETRIZED_UNDER) else ""
        rt = res.resolve(types.get(owner, t.module_type) if owner else t.module_type)
        ctype, local = rt.canonical, t.local
        raw = t.is_param and (t.local in WEIGHT_NORM or t.local in RAW_WEIGHTS)  # a v, a weight before spectral norm
        if owner and raw and owner in types:  # the layer's weight, reparametrised
            local = "weight"
        else:
            owner = ""
            if raw and rt.known:  # kept on the layer itself (paddle, torch's legacy)
                local = "weight"
        for group, aliases in LOCAL_ALIASES.items():
            if same_canonical(group, ctype):
                local = aliases.get(local, local)
        if not rt.known and local in AFFINE_ALIASES and (t.module, AFFINE_ALIASES[local]) not in held:
            local = AFFINE_ALIASES[local]  # a hand-written norm's gamma and beta
        key = tuple(int(x) for x in _INT.findall(t.module))
        layer_type = RNN_CELL_LAYERS.get(ctype)
        if layer_type is not None and _CELL_LOCAL.match(local):  # one cell: its layer's tensors, one direction
            ctype = layer_type
            local += "_reverse" if _tokens(t.module) & BACKWARD_WORDS else ""
        indexed = _LAYER_INDEXED.get(ctype)
        m = indexed.match(local) if indexed is not None else None
        sub: tuple[int, ...] = ()
        if m is not None:  # layer k of a multi-layer RNN: a block index, as rnns.{k} would be
            # one direction of its own (no ``_reverse`` tensor beside it) runs backward where its
            # path says so, as a cell's does: ``bwd_gru.weight_ih_l0`` is ``weight_ih_l0_reverse``
            backward = t.module not in bidirectional and bool(_tokens(t.module) & BACKWARD_WORDS)
            local = m["local"] + (m["direction"] or ("_reverse" if backward else ""))
            sub = (int(m["layer"]),)
            key = (*key, *sub)
        role = PACKED_ROLES.get((ctype, local)) or (PACKED_LOCALS.get(local) if not rt.known else None)
        # a v or a raw weight is stored as the layer stores its weight (paddle's Linear: [in, out])
        stored = "weight" if raw and local == "weight" and not owner else t.local
        perm = res.layout(t.module_type, stored) or side.layouts.get(layout_key(t.module_type, t.local))
        if perm is not None and len(perm) != len(t.shape):
            perm = None
        cshape = tuple(t.shape[k] for k in perm) if perm is not None else tuple(t.shape)
        derived = (local in DERIVED_STATE or t.local in DERIVED_STATE) and not t.trainable
        derived = derived or (not t.is_param and (not t.persistent or t.pattern))
        out.append(
            MTensor(
                t, i, tag, role[0] if role else ctype, rt.known, role[1] if role else local, perm, cshape,
                key, derived, role is not None, owner=owner, sub=sub, place=t.module in positions,
                sig=call_signatures(side.call_shapes, t.module, beside_calls),
            )
        )
    return siblings(out)


def siblings(ts: list[MTensor]) -> list[MTensor]:
    """Each norm's tensor (``NORM_LAYERS``) with ``beside`` set: the trainable tensors of the other
    layers under its module's parent, norms aside (type class, local name, canonical shape,
    sorted), the layers it works with.
    Two norms of one shape inside units of their own (a BatchNorm before a 3x3 convolution, one
    before a 1x1) are told apart by the convolution beside each, where the two authors'
    names and registration orders say nothing."""
    by_parent: dict[str, list[MTensor]] = defaultdict(list)
    for t in ts:
        if t.info.trainable:
            by_parent[t.parent].append(t)
    for t in ts:
        if t.ctype in NORM_LAYERS:
            t.beside = tuple(sorted((o.type_key, o.local, o.cshape) for o in by_parent.get(t.parent, ())
                                    if o.module != t.module and o.ctype not in NORM_LAYERS))
    return ts


def _unit_scope(t: MTensor) -> str:
    """The module around the unit holding ``t`` (a block around its conv-norm units)."""
    return t.parent.rpartition(".")[0]


def _positions(types: dict[str, str]) -> set[str]:
    """Modules whose last path component is their place in a container of layers of several types
    (``classifier.1``, a BatchNorm between two Linears; ``conv5.1`` after a convolution): that
    number counts the steps of one pipeline, not repeated blocks (``layers.3``, ``heads.1`` among
    layers of one type), and says nothing about which block of the other side a layer is in."""
    kinds: dict[str, set[str]] = defaultdict(set)
    for m, ty in types.items():
        parent, _, last = m.rpartition(".")
        if last.isdigit():
            kinds[parent].add(ty)
    return {m for m in types if m.rpartition(".")[2].isdigit() and len(kinds[m.rpartition(".")[0]]) > 1}


def part_shape(t: MTensor, part: tuple[int, int] | None, axis: int = 0, groups: int = 1, source: str = "",
               index: int | None = None) -> tuple[int, ...]:
    """The canonical shape of ``t``'s share: its element ``index`` along axis 0 (a stack), then
    ``part`` of that along ``axis``."""
    shape = t.cshape
    if index is not None:
        if len(shape) < 2 or index >= shape[0]:
            raise MappingError(f"{source}: {t.info.name} {list(t.info.shape)} has no element {index} along axis 0 "
                               f"(canonical {list(shape)})")
        shape = shape[1:]
    if part is None:
        return shape
    if axis >= len(shape):
        raise MappingError(f"{source}: axis {axis} is not an axis of {t.info.name} {list(t.info.shape)}")
    return shape[:axis] + ((part[1] - part[0]) * groups,) + shape[axis + 1 :]


def groups(items: Iterable[MTensor], key: object) -> dict[tuple[object, ...], list[MTensor]]:
    out: dict[tuple[object, ...], list[MTensor]] = defaultdict(list)
    for t in items:
        out[key(t)].append(t)  # type: ignore[operator]
    return out


def block_pattern(module: str) -> str:
    """``module`` with its block indices as ``*`` (``convs.2.mlp`` -> ``convs.*.mlp``)."""
    return _INT.sub(lambda m: m.group(0)[: -len(m.group(1))] + "*", module)


def by_blocks(xs: list[MTensor], ys: list[MTensor]) -> list[tuple[list[MTensor], list[MTensor]]]:
    """Split a class by block indices when both sides index the same blocks (a block holding a
    tensor more on one side leaves that block unmatched: never shifted into another slot).
    When the block indices name different blocks (``blocks.0.bn1`` vs ``features.3.body.1``:
    the numbers do not count the same things) and the class holds as many tensors on each
    side, it stays whole and pairs by registration order; with other counts too, it is split
    where the indices agree and the rest stays unmatched, unless the two sides index at other
    depths (``block1.0`` against ``stages.0.blocks.0`` and ``decoder.mlps.0``: an index one
    side writes into a word; equal numbers there are a coincidence). A layer's place in a
    pipeline of other layers (``classifier.1``, ``conv5.1``) is no block index (``block_key``)."""
    ka, kb = Counter(t.block_key for t in xs), Counter(t.block_key for t in ys)
    if not set(ka) & set(kb) or (set(ka) != set(kb) and (len(xs) == len(ys) or _depths(ka) != _depths(kb))):
        return [(xs, ys)]
    out = []
    for k in sorted(set(ka) | set(kb)):
        out.append(([t for t in xs if t.block_key == k], [t for t in ys if t.block_key == k]))
    return out


def _depths(keys: Counter[tuple[int, ...]]) -> set[int]:
    return {len(k) for k in keys if k}


def names_agree(x: MTensor, y: MTensor) -> bool:
    """Whether two tensors' paths say they are the same: the same block indices, or a shared
    path word or role name (``query`` ~ ``q_proj``) in their modules."""
    if x.key and x.key == y.key:
        return True
    if x.leaf in _SYN and _same_role(x.leaf, y.leaf):
        return True
    return bool(_tokens(x.info.module) & _tokens(y.info.module))


def _distinguishing(words: list[frozenset[str]]) -> list[frozenset[str]]:
    """Each member's path words that some other member of its group lacks (words every member
    shares, ``encoder`` or ``layer``, say nothing about which member is which)."""
    common = frozenset.intersection(*words) if words else frozenset()
    return [w - common for w in words]


_GENERIC_LOCALS = frozenset({"weight", "bias"})


def distinguishing_words(ts: list[MTensor]) -> list[frozenset[str]]:
    """Each tensor's full-name words (a bare ``text_projection`` counts its own name, a Linear's
    ``weight`` does not) that some other tensor of the list lacks."""
    return _distinguishing([_tokens(t.info.name) - _GENERIC_LOCALS for t in ts])


def word_set(t: MTensor) -> frozenset[str]:
    """``t``'s full-name words that may tell it apart (``distinguishing_words``' words)."""
    return _tokens(t.info.name) - _GENERIC_LOCALS


def _ranks_within(mine: list[frozenset[str]], other: list[frozenset[str]]) -> list[tuple[frozenset[str], int, int]]:
    """Each member's part of the group, its rank in that part and the part's size. The parts are
    what the distinguishing words both sides share say, where each such word marks as many
    members on both sides (``visual`` on two LayerNorms of each): two towers registered in
    another order (text first on one side) keep each tower's own order."""
    count_m = Counter(w for ws in mine for w in ws)
    count_o = Counter(w for ws in other for w in ws)
    shared = {w for w, k in count_m.items() if count_o.get(w) == k}
    sigs = [ws & shared for ws in mine]
    size = Counter(sigs)
    seen: Counter[frozenset[str]] = Counter()
    out = []
    for s in sigs:
        out.append((s, seen[s], size[s]))
        seen[s] += 1
    return out


def _type_words(ctype: str) -> frozenset[str]:
    """The words of module names that only say a module of canonical type ``ctype`` is of its
    type (``TYPE_WORDS``: ``bn`` for a BatchNorm)."""
    return next((ws for prefix, ws in TYPE_WORDS.items() if ctype.startswith(prefix)), frozenset())


def _named_words(t: MTensor) -> frozenset[str]:
    """The words of ``t``'s module path, less those of its own name that only say its type
    (``fuse_bn``: fuse; a parent's name keeps every word: ``conv.pointwise1`` keeps conv), a role's
    synonyms as one word."""
    parent, _, leaf = t.module.rpartition(".")
    return _roles(_tokens(parent)) | _roles(_tokens(leaf) - _type_words(t.ctype))


def _roles(words: frozenset[str]) -> frozenset[str]:
    """``words`` with each one a ``ROLE_SYNONYMS`` group holds as that group's role (a block's
    ``shortcut`` and ``downsample`` are one word then, wherever in the path they stand)."""
    return frozenset(f"<role {_SYN[w]}>" if w in _SYN else w for w in words)


def _tokens(path: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(path.lower()) if not w.isdigit())


def path_words(path: str) -> frozenset[str]:
    """The words of a module path (``visual.transformer.resblocks.0`` -> visual, transformer,
    resblocks): block indices left out."""
    return _tokens(path)


def _named_apart(ts: list[MTensor]) -> dict[int, tuple[frozenset[str], int]]:
    """Members whose parent holds several members of the group, each under another name
    (``norm1``, ``norm2``: the same block's two norms; a list index is no name): member index ->
    the names its parent holds and the parent's rank among the parents holding those names, in
    the group's order (a root's ``stem_norm`` and ``down_norm`` do not shift the blocks' ranks)."""
    leaves: dict[str, list[str]] = defaultdict(list)
    for t in ts:
        leaves[t.parent].append(t.leaf)
    apart = [p for p, ls in leaves.items()
             if len(ls) > 1 and len(set(ls)) == len(ls) and all(any(c.isalpha() for c in x) for x in ls)]
    seen: Counter[frozenset[str]] = Counter()
    rank: dict[str, tuple[frozenset[str], int]] = {}
    for p in apart:
        names = frozenset(leaves[p])
        rank[p] = (names, seen[names])
        seen[names] += 1
    return {i: rank[t.parent] for i, t in enumerate(ts) if t.parent in rank}


def assign(xs: list[MTensor], ys: list[MTensor], order_weight: float = 0.5) -> list[tuple[MTensor, MTensor, bool]]:
    """Pairs of two equally long groups. Each candidate pair scores its evidence: the same role
    by module name (``query`` ~ ``q_proj``: 3), a path word that tells members of the group
    apart on both sides (``attention.layer_norm`` ~ ``attention.output.LayerNorm`` beside a
    plain ``layer_norm`` ~ ``output.LayerNorm``: 1 each), the overlap of its path words (encoder
    vs decoder, self vs cross attention: up to 1), and registration order (the same rank: 0.5,
    nearby: less; libraries register a block's parts in whatever order their ``__init__``
    lists them, so a distinguishing name outweighs it). Groups in the order the models call
    their modules (``in_call_order``) weigh the same rank by ``order_weight`` instead (2: more
    than the words of names can add up to, less than a role they state): two implementations
    of one model compute its steps in one order, while names are each author's own. Pairs are taken best first; with no names to go by, that is the sides' order."""
    n = len(xs)
    if n == 1 or n > 512:
        return [(x, y, False) for x, y in zip(xs, ys)]
    split = by_call_shapes(xs, ys)
    if split is not None:
        return [pair for sx, sy in split for pair in assign(sx, sy, order_weight)]
    tx = [_named_words(x) for x in xs]
    ty = [_named_words(y) for y in ys]
    dx, dy = _distinguishing(tx), _distinguishing(ty)
    rx, ry = _ranks_within(dx, dy), _ranks_within(dy, dx)
    px, py = _named_apart(xs), _named_apart(ys)
    bx, by = Counter((_unit_scope(x), x.beside) for x in xs), Counter((_unit_scope(y), y.beside) for y in ys)
    cand = []
    for i, x in enumerate(xs):
        for j, y in enumerate(ys):
            role = 3.0 if _same_role(x.leaf, y.leaf) and x.leaf in _SYN else 0.0
            if not role and x.leaf == y.leaf and i in px and px[i] == py.get(j):
                # ``norm1`` ~ ``norm1`` beside ``norm2`` (the digits are part of the name), in
                # parents of one rank: the same block's two norms, registered in another order
                role = 1.5
            union = len(tx[i] | ty[j])
            words = len(tx[i] & ty[j]) / union if union else 0.0
            words += len(dx[i] & dy[j])
            if x.beside and x.beside == y.beside and bx[_unit_scope(x), x.beside] == by[_unit_scope(y), y.beside] == 1:
                words += 1.0  # the one norm of its block beside these layers, on both sides: a name of its own
            (si, ri, ni), (sj, rj, _) = rx[i], ry[j]
            # registration order: the rank among the members the shared words put in one part of
            # the group (each author registers the parts in their own order); the order of the
            # calls is one computation's, read whole
            if si == sj and order_weight < 1.0:
                order = order_weight if ri == rj else 0.25 * (1 - abs(ri - rj) / ni)
            else:
                order = order_weight if i == j else 0.25 * (1 - abs(i - j) / n)
            # norms that say of each other they belong together (``_unitnorms``): as strong as a role
            mate = 3.0 if x.mate and (x.mate, y.mate) == (y.parent, x.parent) else 0.0
            cand.append((-(role + mate + words + order), abs(i - j), i, j))
    cand.sort()
    got: dict[int, int] = {}
    taken: set[int] = set()
    for _, _, i, j in cand:
        if i not in got and j not in taken:
            got[i] = j
            taken.add(j)
    return [(xs[i], ys[got[i]], got[i] != i) for i in range(n)]


"""The weight-matching engine: which tensor of model A is which tensor of model B.

Used by ``record --weights-from`` (trace A onto a live model B) and by the analyzer
(weights and parameter gradients of two traces) alike, so both always agree.

It is an assignment over all tensors of both sides, in passes, each confident or silent:

1. **pins** from a mapping file (``_pins``: ``weights`` entries, and ``modules`` entries whose
   tensors pair by local name); then tensors with the same full name, type class and shape;
2. **structure**: tensors are put in classes by (canonical module type, canonical local
   name, shape in the canonical layout); within a class, by the block indices of their
   paths (``layers.3`` -> 3). A group with as many tensors on each side pairs in
   registration order -- unless the module names alone assign every tensor of the
   group one-to-one (``query``~``q_proj``), which then wins;
3. **packed**: a tensor that is several tensors of the other side concatenated along the
   known axis (fused q|k|v, fused gate|up, torch MHA ``in_proj_*``), in either direction:
   the parts are siblings, consecutive, with the same block indices, and their sizes add up;
   in a module the side packs head by head (``pack_groups``), each part takes its share of
   every group;
4. structure again (packing frees the rest of a block), then **reshape**: one type class and
   local name, shapes that differ by a head split or merge (``[d, d]`` vs ``[d, heads, dim]``),
   then **shape+order**: what is left, grouped by local name and shape alone (the types
   differ: reported); then an output projection one side ties to its embedding (**tied**);
5. **derived** state (rotary tables, position ids, non-persistent buffers) pairs the same
   way but is never copied, only compared; a derived tensor one model keeps once (outside
   any block) and the other once per block is compared with every per-block copy.

Whatever is left is unmatched. A trainable parameter with no same-shape candidate left on
the other side is one-sided (a structural difference the caller reports and copies around);
one with candidates is ambiguous (the caller refuses and names them); a frozen tensor or
buffer is skipped with its reason. Nothing is ever paired
by a coin flip: a group whose sizes differ stays unmatched rather than shifted.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Sequence

from ..arrays._layout import axes_candidates, same_order_reshape, squeezed
from . import _leftover as leftover
from ._anchors import module_anchors, module_splits
from ._copies import first_copy_only, in_counterpart, pair_copies_either_way
from ._evidence import layers_apart, named_alike, trained_alike, weight_of
from ._inorder import pair_in_order, subtree_place
from ._knowledge import POINTWISE_AS
from ._logspace import mark_logged
from ._match import pointwise_key as _pointwise_key
from ._matchstate import MatchState
from ._newaxis import pair_new_axis_parts
from ._ownpacks import packed_places, pair_ancestor_packs, pair_extra_inputs, pair_own_packs, pair_partner_packs
from ._packs import hoisted_rest, hoisted_run, packed_run, partner_place, regrouped, repeat_place
from ._partners import partner_modules, partner_scopes
from ._pins import apply_pins
from ._rolenames import roles_contradict, roles_named
from ._roles import pair_same_roles
from ._shadows import pair_shadows
from ._stacks import pair_stacked_packs, stacked_groups
from ._subtrees import pair_by_units
from ._summed import pair_summed_biases
from ._unitnorms import mark_mates, mates_contradict, mutual_mates, waits
from ._units import pair_packed_units
from ._weightmap import WeightMap
from ._weightsides import WeightPin, WeightSide, mapping_pins, side_from_records
from ._weighttensors import MTensor as _T
from ._weighttensors import assign as _assign
from ._weighttensors import by_blocks as _by_blocks
from ._weighttensors import groups as _groups
from ._weighttensors import names_agree as _names_agree
from ._weighttensors import path_words as _path_words

__all__ = ["WeightSide", "WeightPin", "mapping_pins", "match_weights", "side_from_records", "module_anchors", "module_splits"]

logger = logging.getLogger(__name__)


class _Matcher(MatchState):
    """The passes, in the order ``match_weights`` runs them (module docstring)."""

    # ------------------------------------------------------------------ pass 1: pins
    def pins(self, pins: Sequence[WeightPin], module_pins: Sequence[tuple[str, str]]) -> None:
        apply_pins(pins, module_pins, self.a, self.b, self.by_name, self.map, self.pair)

    # ------------------------------------------------------------------ pass 1b: same names
    def same_names(self) -> None:
        """Tensors with the same full name, type class and canonical shape on both sides pair
        first: two libraries that name a tensor alike mean the same tensor, and an extra tensor
        elsewhere (a model built without an optional part) must not unsettle them."""
        by_b = {t.info.name: t for t in self.live(self.b)}
        for x in self.live(self.a):
            y = by_b.get(x.info.name)
            if y is None or y.used:
                continue
            if y.cshape == x.cshape and y.type_key == x.type_key:
                self.pair(x, y, "name")
            elif squeezed(x.cshape) == squeezed(y.cshape) and (y.type_key == x.type_key or not (x.known or y.known)):
                # the same name, shapes that differ only by axes of size 1 (a 0-d scale against a
                # [1] one): no element moves; each author's own class holding it says nothing
                self.pair(x, y, "reshape")

    # ------------------------------------------------------------------ pass 2: structure
    def structure(self, derived: bool = False, by_type: bool = True) -> None:
        how = "derived" if derived else ("structure" if by_type else "shape+order")

        def cls(t: _T) -> tuple[object, ...]:
            return (t.type_key if by_type else "", t.local, t.cshape)

        ga, gb = _groups(self.live(self.a, derived), cls), _groups(self.live(self.b, derived), cls)
        # weights first: a module's other tensors (bias, ...) then follow the module they belong to; a
        # norm whose unit's layer is unpaired pairs in a round after the other weights (``_unitnorms``)
        order = sorted(set(ga) & set(gb), key=lambda k: (k[1] != "weight", ga[k][0].index))
        wait = {id(t) for c in order if c[1] == "weight" and not derived for t in (*ga[c], *gb[c]) if waits(t, self.units)}
        late = [c for c in order if any(id(t) in wait for t in (*ga[c], *gb[c]))]
        for c, last in [*((c, False) for c in order if c[1] == "weight"), *((c, True) for c in late),
                        *((c, False) for c in order if c[1] != "weight")]:
            if c[1] != "weight" and not derived:
                self.follow_modules()
            held = set() if last else wait
            xs_all = [t for t in ga[c] if not t.used]
            ys_all = [t for t in gb[c] if not t.used]
            mark_mates([*xs_all, *ys_all], self.units, self.map.pairs, self.by_name)
            if not derived and c[1] != "weight" and (len(xs_all) > 1 or len(ys_all) > 1):
                # several of a kind: a bias pairs by following its weight, never by rank on its own
                xs_all = [t for t in xs_all if not self._weight_left(t)]
                ys_all = [t for t in ys_all if not self._weight_left(t)]
            for block_a, block_b in _by_blocks(xs_all, ys_all):
                xs, ys = trained_alike(block_a, block_b)
                if len(xs) != len(ys):
                    for x, y, named in named_alike(xs, ys, lambda x, y: True):
                        if id(x) not in held and id(y) not in held:
                            self.pair(x, y, named)
                    for x, y in mutual_mates([x for x in xs if not x.used], [y for y in ys if not y.used]):
                        if id(x) not in held and id(y) not in held:
                            self.pair(x, y, "units")
                    continue
                for x, y, by_name in _assign(xs, ys, self.order_weight):
                    if id(x) in held or id(y) in held:
                        continue
                    if roles_contradict(x, y) or mates_contradict(x, y, self.units):
                        # a query is no value projection, a norm no partner of one beside another layer's partner
                        logger.info("left %s and %s apart: their names (or the layers beside them) say other roles", x.info.name, y.info.name)
                        continue
                    if not by_name and self.apart(x, y):
                        logger.info("left %s and %s apart: the tensors paired so far pair their blocks, or the "
                                    "modules inside them, otherwise", x.info.name, y.info.name)
                        continue
                    if not derived and c[1] != "weight" and layers_apart(x, y, self.by_name):
                        logger.info("left %s and %s apart: their layers' weights cannot be one", x.info.name, y.info.name)
                        continue
                    if not by_type and x.known and y.known and x.ctype != y.ctype:
                        logger.info("paired %s with %s by shape and order: types differ (%s vs %s)",
                                    x.info.name, y.info.name, x.info.module_type, y.info.module_type)
                    found = "name" if by_name and not derived else how
                    if found == "structure" and (len(xs) > 1 or last) and not _names_agree(x, y):  # names say nothing:
                        found = "units" if last and x.mate and (x.mate, y.mate) == (y.parent, x.parent) else "role+order"
                    self.pair(x, y, found)

    def _kind(self, t: _T) -> tuple[str, tuple[int, ...]]:
        """``t``'s canonical type and shape; a pointwise convolution's as the Linear it is
        (``POINTWISE_AS``: ``[out, in, 1, 1]`` as ``[out, in]``), so that one fused 1x1
        convolution holds several Linears' rows."""
        if _pointwise_key(t, self.by_name[t.side]) == t.type_key:
            return t.ctype, t.cshape
        return POINTWISE_AS[t.ctype], t.cshape[:2] if len(t.cshape) > 2 else t.cshape

    def _weight_left(self, t: _T) -> bool:
        """Whether ``t``'s module has a weight still unpaired: where several tensors of its class
        are left, its other tensors (a bias) wait for it and pair by following it
        (``follow_modules``), never by rank on their own."""
        w = weight_of(t, self.by_name)
        return w is not None and w is not t and not w.used and not w.derived

    def across_blocks(self) -> None:
        if self.order_weight > 1:  # both sides in the order the models call their modules
            leftover.pair_across_blocks(self.live(self.a), self.live(self.b), self.pair)

    # ------------------------------------------------------------------ pass 3: packed
    def packed(self) -> None:
        # parts in the partner of the packed tensor's module (its other tensors paired there) are
        # in its block whatever the two sides' block indices count
        partners = partner_place(self.whole())
        repeats = repeat_place([*self.a, *self.b])  # else the i-th copy of a repeated module, indexed at other depths

        def place(x: _T, y: _T) -> bool | None:
            known = partners(x, y)
            return known if known is not None else repeats(x, y)

        for big_side, small_side in ((self.a, self.b), (self.b, self.a)):
            vocab = frozenset().union(*(_path_words(t.info.module) for t in big_side))
            # a tensor whose name says what it packs (``kv``: k then v; ``in_proj_weight``: a packed
            # role by the tables) first: one whose name says nothing (an FFN's ``fc_in`` [2d, d])
            # must not take those parts first
            for x in sorted(self.live(big_side), key=lambda t: not (roles_named(t.leaf) or t.packed)):
                run, axis = packed_run(x, self.live(small_side), self.pack_of.get(x.info.module), small_side, vocab, place,
                                       self._kind, big_side)
                hoisted = False
                if run is None:  # else one layer per block, hoisted into one tensor at the model's top
                    run, axis = hoisted_run(x, self.live(small_side), small_side, big_side, self._kind)
                    hoisted = run is not None
                if run is None:
                    continue
                # packed head by head (``QKV_PACKING``): each part's share of every group
                g = self.pack_groups[x.side].get(x.info.module, 1) if axis == 0 else 1
                self._pack(x, run, axis, g if g >= 1 and not any(y.cshape[axis] % g for y in run) else 1)
                self.pack_of[x.info.module] = [y.info.module for y in run]
                if hoisted:  # the module's other tensors (its bias) hold the same layers' tensors
                    for z, parts, z_axis in hoisted_rest(x, run, self.live(big_side), small_side):
                        self._pack(z, parts, z_axis)

    def _pack(self, x: _T, run: list[_T], axis: int, g: int = 1) -> None:
        """Pair ``x`` with each tensor of ``run`` as its share along ``axis``, one after the
        other (of each of ``g`` groups, where x is packed head by head)."""
        start = 0
        for y in run:
            n = y.cshape[axis] // g
            self.pair(x, y, "packed", (start, start + n), None, axis, used=False, xg=g)
            y.used = True
            start += n
        x.used = True

    def stacked(self) -> None:
        """A tensor ``[N, *s]`` holding a module list's N tensors of the other side (experts as a
        list against 3-D weights), ``[N * s0, ...]`` one after the other, or several lists packed in
        each element (``_stacks``). Where it pairs any, the structure passes run again."""
        before = len(self.map.pairs)
        counterpart = self.counterpart()
        for one, other in ((self.a, self.b), (self.b, self.a)):
            for xs, y, how in stacked_groups(self.live(one), self.live(other), counterpart):
                if how == "transposed":  # its slices hold the matrices transposed: the canonical view swaps them
                    y.perm = tuple((y.perm or tuple(range(len(y.cshape))))[k] for k in (0, 2, 1))
                    y.cshape = (y.cshape[0], y.cshape[2], y.cshape[1])
                for i, x in enumerate(xs):
                    n = x.cshape[0] if x.cshape else 1  # "concat": one after the other along axis 0, a packed tensor's parts
                    self.pair(x, y, *(("packed", None, (i * n, (i + 1) * n)) if how == "concat" else ("stacked", None, (i, i + 1))),
                              0, used=False, y_axes=(0, 2, 1) if how == "transposed" else None)
                    x.used = True
                y.used = True
            pair_stacked_packs(self.live(one), self.live(other), self.pair, counterpart)
        if len(self.map.pairs) > before:
            self.structure()
            self.structure(by_type=False)

    def reshaped(self) -> None:
        """Tensors of one type class and local name whose shapes differ by a head split or merge
        (``[d, d]`` vs ``[d, heads, head_dim]``: the same elements in the same order), or a
        pointwise convolution's against a Linear's (``POINTWISE_AS``): paired within their class
        by the same evidence as structure, converted by a reshape."""
        def cls(t: _T) -> tuple[object, ...]:
            return (_pointwise_key(t, self.by_name[t.side]), t.local, math.prod(t.cshape))

        def fits(x: _T, y: _T) -> bool:
            return same_order_reshape(x.cshape, y.cshape) or x.cshape == y.cshape

        ga, gb = _groups(self.live(self.a), cls), _groups(self.live(self.b), cls)
        # weights first, as in ``structure``: a bias follows the module its weight paired with
        for c in sorted(set(ga) & set(gb), key=lambda k: (k[1] != "weight", ga[k][0].index)):
            if c[1] != "weight":
                self.follow_modules()
            xs_all = [t for t in ga[c] if not t.used]
            ys_all = [t for t in gb[c] if not t.used]
            for xs, ys in _by_blocks(xs_all, ys_all):
                if len(xs) != len(ys):
                    for x, y, named in named_alike(xs, ys, fits):
                        self.pair(x, y, named)
                    continue
                if not all(fits(x, y) for x, y in zip(xs, ys)):
                    continue
                for x, y, by_name in _assign(xs, ys, self.order_weight):
                    if fits(x, y) and not roles_contradict(x, y) and (by_name or not self.apart(x, y)):
                        how = "structure" if x.cshape == y.cshape else "reshape"
                        logger.info("paired %s %s with %s %s (%s)", x.info.name, list(x.cshape), y.info.name,
                                    list(y.cshape), how)
                        self.pair(x, y, how)

    def regroup(self) -> None:
        self.map.pairs = regrouped(self.map.pairs, self.by_name, self.pack_groups)

    def last_resort(self) -> None:
        """What is still left pairs where it is unique, named apart or in order (``_leftover``)."""
        whole = self.whole()
        # first within modules the pairs so far make one computation, then block by block
        self.follow_modules()  # a paired module's buffers first: what is left in a unit is the unit's
        partners = partner_modules(whole)
        # fused branches are whole units whose shapes confirm them: their block may be found across depths
        pair_packed_units(self.live(self.a), self.live(self.b), partner_modules(whole, across_depths=True), self.pair)
        pair_own_packs(self.live(self.a), self.live(self.b), packed_places(self.map.pairs), self.pair)
        pair_partner_packs(self.live(self.a), self.live(self.b), partners, self.pair)
        pair_ancestor_packs(self.live(self.a), self.live(self.b), partners, self.pair)
        pair_extra_inputs(self.live(self.a), self.live(self.b), partners, self.pair)
        pair_summed_biases(self.live(self.a), self.live(self.b), self.map.pairs, self.pair)
        moved = pair_new_axis_parts(self.live(self.a), self.live(self.b), self.pair)
        self.map.pairs = [dataclasses.replace(p, a_axes=moved[p.a]) if p.a in moved and p.a_part is not None else
                          dataclasses.replace(p, b_axes=moved[p.b]) if p.b in moved and p.b_part is not None else p
                          for p in self.map.pairs]  # said in the map: a mapping file written from it pairs them alike
        for place in (partner_scopes(whole), None):
            leftover.pair_left_over([t for t in self.live(self.a) if t.info.is_param],
                           [t for t in self.live(self.b) if t.info.is_param], self.take_left, place)
        # the i-th copy of a repeated module is the i-th where the sides count their copies at
        # other depths (``blocks.2`` against ``stages.1.0``)
        repeats = repeat_place([*self.a, *self.b])

        def block(x: _T, y: _T) -> bool:
            return x.key == y.key or bool(repeats(x, y))

        for place in (partner_scopes(whole), None):  # then the last ones standing in their place, any layout
            leftover.pair_last_standing(self.live(self.a), self.live(self.b), self.take_axes, place or block)
            leftover.pair_last_packed(self.live(self.a), self.live(self.b), self.pair_marked, place, self.turn)
            leftover.pair_shared(self.a, self.b, self.partner, self.pair, place)
        leftover.pair_last_shared(self.live(self.a), self.live(self.b), self.pair_marked, partner_scopes(self.whole()))
        # the last ones standing in modules of one user class wherever the models put them (seed vectors)
        leftover.pair_last_standing(self.live(self.a), self.live(self.b), self.take_axes, leftover.same_user_class)
        # inside a unit pair anywhere, but not the i-th copy of a repeated module with another
        for coarse in (False, True):  # units by their tensors' shapes, then by their element counts
            pair_by_units([t for t in self.live(self.a) if t.info.trainable], [t for t in self.live(self.b) if t.info.trainable],
                          lambda xs, ys: leftover.pair_last_standing(xs, ys, self.take_axes,
                                                                     lambda x, y: repeats(x, y) is not False),
                          self.take_axes, coarse=coarse)
        # tensors of one role wherever they sit (position tables on the root against one per stage)
        pair_same_roles([t for t in self.live(self.a) if t.info.trainable], [t for t in self.live(self.b) if t.info.trainable],
                        self.take_axes, self.map.pairs, self.by_name["a"])
        # the one trainable tensor left on each side, wherever the two models keep it (a table of
        # position biases at the root against one in the first block): nothing else can be its partner
        last_a = [t for t in self.live(self.a) if leftover.trainable_left(t)]
        last_b = [t for t in self.live(self.b) if leftover.trainable_left(t)]
        if len(last_a) == 1 and len(last_b) == 1 and len(axes_candidates(last_a[0].cshape, last_b[0].cshape)) == 1:
            # (one order of the axes fits: where two do, nothing tells which, and nothing is guessed)
            leftover.pair_last_standing(last_a, last_b, self.take_axes, lambda x, y: True)
        # one module against copies of it; what they leave standing then pairs in its counterpart
        if pair_copies_either_way(self.a, self.b, self.pair, self.counterpart()):
            pair_copies_either_way(self.a, self.b, self.pair, self.counterpart(), (1, 1))
            self.map.pairs[:] = first_copy_only(self.map.pairs)
            for where in (in_counterpart(self.counterpart()), None):
                leftover.pair_last_standing(self.live(self.a), self.live(self.b), self.take_axes, where or block)
                leftover.pair_last_packed(self.live(self.a), self.live(self.b), self.pair_marked, where, self.turn)
        self.follow_modules()  # a module's buffers follow a weight the passes above paired (BatchNorm's statistics)
        for place in (partner_scopes(whole), None):  # state the model carries, in its partner layer first
            leftover.pair_last_state(self.live(self.a), self.live(self.b), self.take_axes, place)

    def state_in_order(self) -> None:
        """State left once the copies are taken, alike on both sides: in registration order."""
        for place in (partner_scopes(self.whole()), None):
            leftover.pair_last_state(self.live(self.a), self.live(self.b), self.take_axes, place, in_order=True)

    def extra_rows(self) -> None:
        leftover.pair_extra_rows(self.live(self.a), self.live(self.b), self.pair)

    def tied(self) -> None:
        leftover.pair_tied(self.a, self.b, self.live, self.pair)

    def in_order(self) -> None:
        """In the order both models compute (both sides call-ordered only): groups nothing else
        tells apart (``_inorder``), as ``order only``: ``run`` tries them the other way round
        where the values disagree (``analyzer.order_alternatives``)."""
        if self.order_weight > 1:
            place = subtree_place([(p.a, p.b) for p in self.map.pairs])
            pair_in_order(self.live(self.a), self.live(self.b), place, self.pair)

    def shadows(self) -> None:
        """Copies of paired weights (an EMA in buffers, an averaged model) pair as their weights
        did (``_shadows``)."""
        self.map.pairs += pair_shadows(self.a, self.b, *self.fingerprints, self.map.pairs)

    def shared_derived(self) -> None:
        leftover.pair_shared_derived(self.live(self.a, derived=True), self.live(self.b, derived=True), self.pair)

def match_weights(
    a: WeightSide,
    b: WeightSide,
    pins: Sequence[WeightPin] = (),
    module_pins: Sequence[tuple[str, str]] = (),
) -> WeightMap:
    """Match every tensor of ``a`` with ``b`` (see the module docstring for the passes)."""
    m = _Matcher(a, b)
    m.pins(pins, module_pins)
    m.same_names()
    m.structure()
    m.reshaped()  # a pointwise conv is a Linear before fused runs are looked for among the Linears
    m.packed()
    m.structure()
    m.reshaped()
    m.structure(by_type=False)
    m.across_blocks()
    m.stacked()
    m.last_resort()
    m.extra_rows()
    m.tied()
    m.in_order()
    m.shadows()
    m.state_in_order()
    m.structure(derived=True, by_type=False)
    m.shared_derived()
    m.regroup()
    wm = m.finish()
    wm.pairs = mark_logged(wm.pairs)  # a parameter one side keeps in log space, as the names say
    order_a = {t.info.name: t.index for t in m.a}
    wm.pairs.sort(key=lambda p: (order_a.get(p.a, 0), p.a_part or (0, 0), p.b_part or (0, 0)))
    logger.info("weight map: %s", wm.summary_lines()[0])
    return wm

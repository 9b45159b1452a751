"""The weight matcher's last pass: tensors no earlier pass paired, paired only where the
evidence left is unambiguous (``_weightmatch``)."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

from ..arrays._layout import axes_between, concat_axis, merge_order, squeezed, stable_permutation
from ._knowledge import LOOKUP_TABLES
from ._rolenames import role_words
from ._weighttensors import MTensor, assign, distinguishing_words, groups, word_set

Pair = Callable[..., None]  # the matcher's ``pair(x, y, how, x_part, y_part, axis)``

logger = logging.getLogger(__name__)

__all__ = ["trainable_left", "pair_across_blocks", "pair_extra_rows", "pair_last_packed", "pair_last_standing", "pair_last_state", "pair_shared", "pair_left_over", "pair_shared_derived", "pair_tied"]


def pair_left_over(la: list[MTensor], lb: list[MTensor], take: Callable[[MTensor, MTensor, str], None],
                   same_place: Callable[[MTensor, MTensor], bool] | None = None) -> None:
    """What is still left pairs only where it is unique: the one tensor of its block on each
    side with this shape, or its transpose (a library head stored [in, out] in a class the
    tables do not know; a bare matrix ``text_projection`` against a Linear
    ``text_projection.weight``). Where several fit, a path word that tells them apart on both
    sides pairs them first (``text_projection`` ~ ``text_projection.weight`` beside
    ``vision_projection`` ~ ``visual_projection.weight``), then uniqueness again, then a
    block's group in registration order when one layout fits it all. A square matrix of a class
    whose layout no table knows pairs with another class's only as it stands, never transposed
    to fit: where the run then diverges inside its module, ``run`` tries it transposed and the
    values decide (``square_alternatives``). Shapes that differ by axes of size one ([C, 1, 1]
    against [C]) fit as a reshape. ``same_place``: where two tensors may pair (default: the same
    block indices); ``partner_scopes`` gives a narrower one."""
    place = same_place or (lambda x, y: x.key == y.key)

    def fits(x: MTensor, y: MTensor) -> bool:
        if x.used or y.used or not place(x, y) or x.cshape == ():
            return False
        if len(x.cshape) != len(y.cshape):  # axes of size one more or fewer ([C, 1, 1] ~ [C]), or a
            # convolution [out, in, p, p] against a Linear over flattened patches [out, in * p * p]
            return squeezed(x.cshape) == squeezed(y.cshape) or _patches(x.cshape, y.cshape)
        if len(x.cshape) == 2 and x.cshape[0] == x.cshape[1] and x.ctype != y.ctype:
            return x.cshape == y.cshape and not (x.known and y.known)  # as it stands; the values may transpose it
        return x.cshape == y.cshape or (len(x.cshape) == 2 and x.cshape[::-1] == y.cshape)

    def alike(x: MTensor, y: MTensor) -> bool:  # a trainable tensor is the other's trainable one first
        return x.info.trainable == y.info.trainable

    def narrow(x: MTensor, cands: list[MTensor]) -> list[MTensor]:
        return [y for y in cands if alike(x, y)] if len(cands) > 1 else cands

    def named(x: MTensor) -> MTensor | None:
        """The one candidate whose path shares a word with ``x``'s that tells the
        candidates apart (and no other tensor of ``x``'s side does so with it)."""
        ys = narrow(x, [y for y in lb if fits(x, y)])
        xs = [o for o in la if any(fits(o, y) for y in ys)]
        if len(xs) < 2 or not ys:
            return None
        # one candidate that several fit (``res_proj.weight`` ~ ``W_Query``, ``W_Res``...): its
        # own words tell which (the rivals have no other candidate)
        dx, dy = distinguishing_words(xs), distinguishing_words(ys) if len(ys) > 1 else [word_set(ys[0])]
        i = xs.index(x)
        hits = [j for j in range(len(ys)) if dx[i] & dy[j]]
        if len(hits) != 1 or sum(1 for k in range(len(xs)) if dx[k] & dy[hits[0]]) != 1:
            return None
        return ys[hits[0]]

    def unique(x: MTensor) -> MTensor | None:
        ys = narrow(x, [y for y in lb if fits(x, y)])
        if len(ys) != 1:
            return None
        rivals = [o for o in la if fits(o, ys[0])]
        if len(rivals) > 1:
            rivals = [o for o in rivals if alike(o, ys[0])]
        return ys[0] if rivals == [x] else None

    def ordered(x: MTensor) -> MTensor | None:
        """Groups of one block that fit each other one to one, in registration order (the
        role and the order say it, names nothing: ``fc1``, ``fc2`` ~ bare ``w1``, ``w2``),
        each taken in one layout: all as stored, or all transposed."""
        ys = [y for y in lb if fits(x, y)]
        xs = [o for o in la if any(fits(o, y) for y in ys)]
        ys = [y for y in lb if any(fits(o, y) for o in xs)]
        if len(xs) < 2 or len(xs) != len(ys):
            return None
        got = [(o, y) for o, y, _ in assign(xs, ys)]
        # one layout for the group: as stored (axes of size one aside: no element moves) or transposed
        if not all(fits(o, y) for o, y in got) or len({squeezed(o.cshape) == squeezed(y.cshape) for o, y in got}) != 1:
            return None
        return next(y for o, y in got if o is x)

    progress = True
    while progress:
        progress = False
        for find, how in ((named, "only candidate"), (unique, "only candidate"), (ordered, "shape+order")):
            for x in la:
                y = None if x.used else find(x)
                if y is not None:
                    take(x, y, how)
                    progress = True


def trainable_left(t: MTensor) -> bool:
    """A trainable tensor no pass paired yet (a 0-d one aside)."""
    return not t.used and t.info.trainable and t.cshape != ()


def pair_last_standing(la: list[MTensor], lb: list[MTensor],
                       take: Callable[[MTensor, MTensor, tuple[int, ...]], None],
                       same_place: Callable[[MTensor, MTensor], bool] | None = None) -> None:
    """Trainable tensors still left pair, whatever their classes, where each is the other's only
    candidate in its place: as many elements, and one reordering of its axes makes one the other
    (``axes_between``; among several, the one of its own local name: a hand-written norm's
    ``gamma`` and ``beta`` against a known norm's ``weight`` and ``bias``, ``AFFINE_ALIASES``; else
    the one of the role its layer's name says, ``q_map`` ~ ``wq``):
    an embedding table ``[V, C]`` against a pointwise convolution
    ``[C, V, 1]`` fed one-hot tokens, a Linear ``[in, C*k*k]`` against a transposed
    convolution ``[in, C, k, k]`` fed a 1x1 input, a user class's ``[n, m, p]`` against
    ``[m, n, p]``; where axes of equal size make several fit, the one that keeps them in order
    (``stable_permutation``). Nothing else left on either side there could be its partner; the values of
    the run then confirm it or not. ``same_place`` as for ``pair_left_over``."""
    place = same_place or (lambda x, y: x.key == y.key)

    def left(t: MTensor) -> bool:  # a scalar too where the modules around it say the place
        return trainable_left(t) or (same_place is not None and not t.used and t.info.trainable)

    def fit(x: MTensor, y: MTensor) -> tuple[int, ...] | None:
        if not (left(x) and left(y) and place(x, y)) or math.prod(x.cshape) != math.prod(y.cshape):
            return None
        # several reorderings: the one that keeps axes of equal size in their order, where the
        # other axes say a reordering is needed (a table [15, 15, k, u] against [k, u, 15, 15])
        q = merge_order(x.cshape, y.cshape)
        return q if q is not None else stable_permutation(x.cshape, y.cshape)

    progress = True
    while progress:
        progress = False
        for x in la:
            ys = [(y, q) for y in lb if (q := fit(x, y)) is not None]
            rivals = [o for o in la if ys and fit(o, ys[0][0]) is not None]
            if len(ys) > 1:  # a scale and a shift of one shape: the one of the same local name, if one,
                # across classes (where the classes agree, the structure passes left them apart on purpose)
                named = [(y, q) for y, q in ys if y.local == x.local and y.type_key != x.type_key]
                rivals = [o for o in la if named and o.local == x.local and fit(o, named[0][0]) is not None]
                if not named and (role := role_words(x.leaf)):  # else the one of the role its layer's name says
                    named = [(y, q) for y, q in ys if role_words(y.leaf) == role]  # (q_map ~ wq)
                    rivals = [o for o in la if named and role_words(o.leaf) == role and fit(o, named[0][0]) is not None]
                ys = named
            if len(ys) != 1 or len(rivals) != 1:
                continue
            y, q = ys[0]
            take(x, y, q)
            progress = True


def same_user_class(x: MTensor, y: MTensor) -> bool:
    """Whether two tensors sit in modules of one class of the user's own (its name, on both
    sides: ``PMA`` and ``PMA``): a place for the last ones standing when nothing else says one."""
    return not x.known and not y.known and x.type_key == y.type_key


def pair_last_state(la: list[MTensor], lb: list[MTensor], take: Callable[..., None],
                    same_place: Callable[[MTensor, MTensor], bool] | None = None, in_order: bool = False) -> None:
    """Tensors the model carries from step to step (a queue of negatives, a memory bank, its
    write pointer, a codebook its forward rewrites), still left, pair where each is the other's
    only candidate in its place: state in the state dict (a buffer; not derived, not a mask),
    integers with integers, as many elements, one reordering of the axes making one the other (a
    queue ``[K, D]`` against ``[D, K]``). Where several fit each other all alike and as many on
    each side (a codebook and its running sum, ``[K, D]`` each, against ``[D, K]`` each), they
    pair in registration order (``in_order``: once copies of the weights found by their values
    are taken; ``shape+order``: nothing but the order tells them apart), a frozen parameter among
    them (a buffer or a frozen parameter: which an author registers is a convention). Without
    its partner's values a run starts from another state, and every step after differs."""
    place = same_place or (lambda x, y: x.key == y.key)

    def state(t: MTensor) -> bool:  # (a frozen parameter only in order: as the only candidate, a copy's place)
        return not (t.used or (t.info.is_param and (t.info.trainable or not in_order)) or t.derived or t.info.pattern
                    or not t.info.persistent)

    def fit(x: MTensor, y: MTensor) -> tuple[int, ...] | None:
        if not (state(x) and state(y) and place(x, y)) or x.info.integer != y.info.integer:
            return None
        if math.prod(x.cshape) != math.prod(y.cshape) or len(x.cshape) != len(y.cshape):
            return None
        return axes_between(x.cshape, y.cshape) if x.cshape else ()

    if not in_order:
        for x in la:
            ys = [(y, q) for y in lb if (q := fit(x, y)) is not None]
            if len(ys) == 1 and sum(1 for o in la if fit(o, ys[0][0]) is not None) == 1:
                take(x, *ys[0])
        return
    for x in la:  # several alike: in registration order, where every one fits every other alike
        mates = [y for y in lb if fit(x, y) is not None]
        xs = [o for o in la if fit(o, mates[0]) is not None] if mates else []
        if len(mates) < 2 or len(xs) != len(mates):
            continue
        axes = {fit(o, y) for o in xs for y in mates}
        if len(axes) != 1 or any(fit(o, y) is None for o in xs for y in mates):
            continue
        q = axes.pop()
        assert q is not None
        for o, y in zip(sorted(xs, key=lambda t: t.index), sorted(mates, key=lambda t: t.index)):
            take(o, y, q, "shape+order")


def pair_last_packed(la: list[MTensor], lb: list[MTensor], pair: Pair,
                     same_place: Callable[[MTensor, MTensor], bool] | None = None,
                     turn: Callable[[MTensor], None] | None = None) -> None:
    """The one trainable tensor left in its place on one side holds the several left beside it
    on the other, concatenated along one axis (axes of size one aside: two attention vectors
    ``[1, H, D]`` against one ``[H, 2D]``): each is its part, in registration order (``run``
    lets the values try the other order where that diverges). Bare matrices of a class whose
    layout no table knows (``W_Query [in, out]`` against a fused ``qkv.weight [3 * out, in]``)
    are parts transposed where only that fits (``turn`` transposes one, ``pair`` then pairs it
    and marks it turned). ``same_place`` as for ``pair_left_over``."""
    place = same_place or (lambda x, y: x.key == y.key)

    def holds(xs: list[MTensor], y: MTensor) -> tuple[tuple[int, list[int]] | None, bool]:
        """Where ``xs`` concatenate to ``y`` (None: they do not), and whether only transposed."""
        found = concat_axis([squeezed(x.cshape) for x in xs], y.cshape)
        turned = found is None and turn is not None and all(len(x.cshape) == 2 and not x.known for x in xs)
        if turned:
            found = concat_axis([squeezed(x.cshape[::-1]) for x in xs], y.cshape)
        return found, turned

    for big_side, small_side in ((lb, la), (la, lb)):
        for y in big_side:
            if not trainable_left(y):
                continue
            xs = sorted((x for x in small_side if trainable_left(x) and place(x, y)), key=lambda t: t.index)
            if len(xs) < 2:
                continue
            # another tensor left in that place that the parts could make is a rival; one they
            # cannot make (a stack of other shapes beside a table of tokens) is none
            if any(o is not y and trainable_left(o) and any(place(x, o) for x in xs) and holds(xs, o)[0] is not None
                   for o in big_side):
                continue
            found, turned = holds(xs, y)
            if found is None:
                continue
            axis, sizes = found
            start = 0
            for x, size in zip(xs, sizes):
                stop = start + size
                if turned and turn is not None:
                    turn(x)
                logger.info("paired %s with part %d:%d of %s, the last left in their place", x.info.name, start, stop,
                            y.info.name)
                pair(x, y, "packed", None, (start, stop), axis, used=False)
                x.used = True
                start = stop
            y.used = True


def pair_last_shared(la: list[MTensor], lb: list[MTensor], pair: Pair,
                     same_place: Callable[[MTensor, MTensor], bool] | None = None) -> None:
    """The one trainable tensor left in its place on one side, against the one left on the other
    of its type and local name that is k copies of it along one axis (k of 2 to 4): one model
    shares a projection where the other packs k of them (GATv2's ``share_weights``: one Linear for
    source and target, against ``lin [2 * out, in]``). Each part pairs with the one tensor, as
    tied: copied into every part, its gradient compared with the sum of the parts'. Only with the
    one tensor on A's side (the trace copied from): a single tensor on B's side could receive one
    part only, and a rank's shard of A's tensor (``_shardreplay``) is sliced, not shared.
    ``same_place``: the modules the pairs so far make partners (called after the other passes)."""
    place = same_place or (lambda x, y: x.key == y.key)
    for y in lb:
        if not trainable_left(y):
            continue

        def kin(x: MTensor, y: MTensor = y) -> bool:
            return trainable_left(x) and x.ctype == y.ctype and x.local == y.local and len(x.cshape) == len(y.cshape)

        xs = [x for x in la if kin(x) and place(x, y)]
        if len(xs) != 1 or any(o is not y and kin(o) and place(xs[0], o) for o in lb):
            continue
        x = xs[0]
        apart = [k for k, (m, n) in enumerate(zip(x.cshape, y.cshape)) if m != n]
        if len(apart) != 1 or y.cshape[apart[0]] % x.cshape[apart[0]]:
            continue
        axis, size = apart[0], x.cshape[apart[0]]
        copies = y.cshape[axis] // size
        if not 2 <= copies <= 4:
            continue
        for k in range(copies):
            logger.info("paired %s with part %d:%d of %s: one tensor shared where the other side packs %d",
                        x.info.name, k * size, (k + 1) * size, y.info.name, copies)
            pair(x, y, "tied", None, (k * size, (k + 1) * size), axis, used=False)
        x.used = y.used = True


def pair_shared(la: list[MTensor], lb: list[MTensor], partner: Callable[[MTensor], MTensor | None], pair: Pair,
                same_place: Callable[[MTensor, MTensor], bool] | None = None) -> None:
    """A module one model calls twice and the other keeps as two copies (a shared activation
    with a parameter in a Sequential, a layer reused across depth): a trainable tensor left over
    whose sibling of its class, local name and shape under the same parent paired with a tensor
    of the other side, where that side has nothing of the kind left in the place, is that tensor
    again: paired as tied (copied from it; its gradient is compared with the sum of the copies').
    ``partner``: the tensor a tensor paired with whole, or None."""
    place = same_place or (lambda x, y: x.key == y.key)

    for mine, theirs in ((lb, la), (la, lb)):
        for y in mine:
            if not trainable_left(y):
                continue
            twins = [t for t in mine if t is not y and t.used and t.parent == y.parent and t.ctype == y.ctype
                     and t.local == y.local and t.cshape == y.cshape and t.info.module != y.info.module]
            xs = [x for t in twins if (x := partner(t)) is not None]
            if len(xs) != 1 or any(trainable_left(o) and o.ctype == y.ctype and o.local == y.local and place(o, y)
                                   for o in theirs):
                continue
            logger.info("paired %s with %s: one module called again on one side, a copy of it on the other",
                        xs[0].info.name, y.info.name)
            pair(xs[0], y, "tied")


def _patches(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    conv, lin = (a, b) if len(a) > len(b) else (b, a)
    return len(lin) == 2 and len(conv) >= 3 and conv[0] == lin[0] and math.prod(conv[1:]) == lin[1]



def pair_across_blocks(la: list[MTensor], lb: list[MTensor], pair: Pair) -> None:
    """Both sides in the order the models call their modules (the caller checks): a class whose
    block groups differ in size (a norm one model keeps before its first block and the other
    inside it) pairs whole, in that order, when both sides have as many left."""
    ga = groups(la, lambda t: (t.type_key, t.local, t.cshape))
    gb = groups(lb, lambda t: (t.type_key, t.local, t.cshape))
    for c in sorted(set(ga) & set(gb), key=lambda k: ga[k][0].index):
        xs, ys = ga[c], gb[c]
        if len(xs) != len(ys) or all(x.key == y.key for x, y in zip(xs, ys)):
            continue  # block by block, structure has its say
        for x, y in zip(xs, ys):
            logger.info("paired %s with %s in the order the models call them, across blocks", x.info.name, y.info.name)
            pair(x, y, "call order")


def pair_extra_rows(la: list[MTensor], lb: list[MTensor], pair: Pair) -> None:
    """Lookup tables left over, one side's each with more rows than its partner's (a padding row,
    a padded vocabulary: ``LOOKUP_TABLES``): the tables of one width pair in registration order
    when every pair has its extra rows on the same side, by the same count; the rows both have
    are the bigger table's first ones (only those are copied and compared)."""
    def tables(live: list[MTensor]) -> dict[tuple[object, ...], list[MTensor]]:
        return groups([t for t in live if t.info.is_param and t.ctype in LOOKUP_TABLES and len(t.cshape) == 2],
                      lambda t: (t.cshape[1],))

    ga, gb = tables(la), tables(lb)
    for width in set(ga) & set(gb):
        xs, ys = ga[width], gb[width]
        extra = {x.cshape[0] - y.cshape[0] for x, y in zip(xs, ys)}
        if len(xs) != len(ys) or len(extra) != 1 or 0 in extra:
            continue
        for x, y in zip(xs, ys):
            n = min(x.cshape[0], y.cshape[0])
            logger.info("paired %s %s with %s %s: the first %d rows", x.info.name, list(x.cshape), y.info.name,
                        list(y.cshape), n)
            big_a = x.cshape[0] > y.cshape[0]
            pair(x, y, "extra rows", (0, n) if big_a else None, None if big_a else (0, n), 0)


def pair_tied(a: list[MTensor], b: list[MTensor], live: Callable[[list[MTensor]], list[MTensor]], pair: Pair) -> None:
    """An output projection one model ties to its token embedding (the embedding matrix used
    again, no tensor of its own) and the other keeps as a tensor: when a side's only trainable
    matrix left has exactly the shape of the other side's only embedding matrix of that shape (a
    position table beside it is another shape), and the other side has no matrix left, it is
    that embedding again (copied from it; in training they part by design: a tied matrix takes
    both uses' gradients). ``live``: a side's tensors not paired yet."""
    for one, other in ((a, b), (b, a)):
        left = [t for t in live(one) if t.info.is_param and t.info.trainable and len(t.cshape) == 2]
        if len(left) != 1 or any(t.info.is_param and len(t.cshape) == 2 for t in live(other)):
            continue
        y = left[0]
        embs = [x for x in other if x.ctype == "embedding" and x.info.trainable and x.cshape == y.cshape]
        if len(embs) != 1:
            continue
        logger.info("paired %s with %s: tied to the embedding on one side only", embs[0].info.name, y.info.name)
        pair(embs[0], y, "tied")


def pair_shared_derived(la: list[MTensor], lb: list[MTensor], pair: Pair) -> None:
    """Derived state (``la``/``lb``: each side's derived tensors left) that one model keeps once,
    outside any block, and the other once per block (one rotary table for the model vs one per
    attention layer; one causal mask vs one per layer): every per-block copy is compared with
    the single one. Never copied."""
    for one, many in ((la, lb), (lb, la)):
        singles = groups([t for t in one if not t.used], lambda t: (t.local, t.cshape))
        copies = groups([t for t in many if not t.used], lambda t: (t.local, t.cshape))
        for c in set(singles) & set(copies):
            xs, ys = singles[c], copies[c]
            keys = [y.key for y in ys]  # block indices: one copy in each block
            if len(xs) != 1 or xs[0].key or len(ys) < 2 or not all(keys) or len(set(keys)) != len(keys):
                continue
            x = xs[0]
            for y in ys:
                pair(x, y, "shared derived", used=False)
                y.used = True
            x.used = True

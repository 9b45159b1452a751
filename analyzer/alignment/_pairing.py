"""Pairing: module calls (mapping pins, weight anchors, hierarchical alignment), tensor leaves, weights.

A wrong pair is worse than no pair: two calls may pair by order only with
positive evidence - the same first output shape and either equivalent framework
types, or both user-defined with compatible names or contents; or, as a type
difference, alone in the same slot with the same shapes (``_align``).
"""

from __future__ import annotations

import itertools
import logging
import math
from collections import Counter, abc
from dataclasses import dataclass, field

from padiff_trace.matching import Mapping, SidedEntry, SidedMapping, orient, resolve, types_equivalent

from ._align import Segmenter, features
from ._apart import Apart
from ._calls import Call, CallTree, TraceView, first_step
from ._leaves import pair_leaves
from ._moved import moved_across

__all__ = ["CallPair", "Alignment", "HOW", "align_views", "pair_leaves"]

logger = logging.getLogger(__name__)


@dataclass(eq=False, slots=True)
class CallPair:
    a: Call
    b: Call
    how: str  # "root", "mapping", "anchor", "contents", "order", "type" or "shape" (see HOW)
    entry: SidedEntry | None = None  # the mapping entry that pinned it
    slot: int = field(default=-1, repr=False)  # its index in the pair table that holds it (no dict by id)

    @property
    def blackbox(self) -> bool:
        return self.entry is not None and self.entry.blackbox

    @property
    def perm(self) -> tuple[int, ...] | None:
        return self.entry.transpose if self.entry is not None else None

    @property
    def type_differs(self) -> bool:
        """Paired as a type difference: different module classes in the same slot."""
        return self.how == "type"


# what each ``CallPair.how`` means (reports print these)
HOW: dict[str, str] = {
    "root": "the models' top-level calls",
    "mapping": "pinned by the mapping file",
    "anchor": "their weights matched",
    "contents": "the same weight-matched (or mapped) modules inside",
    "order": "call order, nesting, equivalent types and shapes",
    "type": "same slot and shapes, different module types",
    "shape": "the only module of its type in its slot, same input shapes, different output shapes",
    "moved": "the same layer type at the edge of a paired call on one side, next to its partner on the other",
}


@dataclass(eq=False)
class Alignment:
    """Pairing of step ``step_a``/``step_b`` forward calls, reusable for every step."""

    a: TraceView
    b: TraceView
    pairs: list[CallPair]
    unpaired_a: list[Call]
    unpaired_b: list[Call]
    hidden_a: list[Call] = field(default_factory=list)  # inside black boxes
    hidden_b: list[Call] = field(default_factory=list)
    module_pairs: dict[str, str] = field(default_factory=dict)
    module_entries: dict[str, SidedEntry] = field(default_factory=dict)  # A's module -> the entry mapping it

    def by_key(self) -> dict[tuple[str, int], CallPair]:
        return {p.a.key: p for p in self.pairs}

    @property
    def type_differences(self) -> list[CallPair]:
        return [p for p in self.pairs if p.type_differs]


def _modules(v: TraceView) -> set[str]:
    mods = set(v.module_types)
    mods.update(c.module for cs in v.calls.values() for c in cs)
    return mods


@dataclass(frozen=True)
class _Pin:
    b: Call
    how: str  # "mapping", "anchor" or "root"
    entry: SidedEntry | None = None


def align_views(
    a: TraceView, b: TraceView, mapping: Mapping | SidedMapping | None = None, anchors: dict[str, str] | None = None,
    apart: dict[str, frozenset[str]] | None = None,
    homes: tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]] | None = None,
    parts: abc.Collection[tuple[str, str]] = (),
) -> Alignment:
    """Pair the forward calls of the first step of both traces.

    ``mapping``: applied to A and B (a ``Mapping`` is oriented here, by the traces' frameworks);
    its ``modules`` entries pin calls. ``anchors``: module path in A -> module path in B for
    modules whose weights matched each other; their calls pair n-th with n-th (as mapping pins
    do; the mapping wins). ``apart``: module path in A -> B modules its calls never pair with
    (``module_splits``: one side's module holds what the other keeps in several). ``homes``: each
    side's weighted modules -> the other side's modules holding their partners (``module_homes``). ``parts``: anchors of a part's layer and the whole layer
(``_joined.split_layers``), which stay where the weights put them though their outputs differ
(by the other parts' share). Everything else is aligned hierarchically between the pins (``_align``).
    """
    sided = orient(mapping, a.framework, b.framework) if mapping is not None else None
    step_a, step_b = first_step(a), first_step(b)
    ca, cb = a.calls.get(step_a, []), b.calls.get(step_b, [])
    ta, tb = a.tree(step_a), b.tree(step_b)
    resolved = resolve(sided, _modules(a), _modules(b)) if sided is not None else []
    anchored = _wrapped(_anchor_pairs(anchors, resolved), a, b, ca, cb, frozenset(parts))
    pins = _nested(_pins(ca, cb, resolved, anchored), a, b, ta, tb)
    if ta.roots and tb.roots and ta.roots[0].id not in pins and tb.roots[0].id not in {p.b.id for p in pins.values()}:
        pins[ta.roots[0].id] = _Pin(tb.roots[0], "root")
    hidden_a, hidden_b = _hidden(pins, a.by_id, ta, tb)
    pins = {i: p for i, p in pins.items() if i not in hidden_a and p.b.id not in hidden_b}
    ruled_out = Apart.of(apart, anchored, homes)
    seg = Segmenter(
        ta, tb, features(ca, cb),
        pin_a={i: p.b for i, p in pins.items()},
        pin_b={p.b.id: a.by_id[i] for i, p in pins.items()},
        hidden_a=hidden_a, hidden_b=hidden_b, apart=ruled_out,
    )
    opened = [(a.by_id[i], p.b) for i, p in pins.items() if p.entry is None or not p.entry.blackbox]
    pairs = [CallPair(a.by_id[i], p.b, p.how, p.entry) for i, p in pins.items()]
    pairs += [CallPair(f.a, f.b, f.how) for f in seg.run(opened)]
    pairs += [CallPair(x, y, "moved") for x, y in moved_across([(p.a, p.b) for p in pairs], ta, tb, a.by_id, b.by_id,
                                                                 ruled_out.allows)]
    pairs.sort(key=lambda p: p.a.id)
    used_a, used_b = {p.a.id for p in pairs}, {p.b.id for p in pairs}
    al = Alignment(
        a,
        b,
        pairs,
        [c for c in ca if c.id not in used_a and c.id not in hidden_a],
        [c for c in cb if c.id not in used_b and c.id not in hidden_b],
        [c for c in ca if c.id in hidden_a],
        [c for c in cb if c.id in hidden_b],
        module_entries={mod_a: entry for mod_a, _, entry in resolved},
    )
    al.module_pairs = _module_pairs(al, resolved, anchors or {})
    hows = Counter(p.how for p in pairs)
    logger.info(
        "aligned %d call pairs (%s); %d/%d unpaired",
        len(pairs), ", ".join(f"{k} {v}" for k, v in sorted(hows.items())), len(al.unpaired_a), len(al.unpaired_b),
    )
    return al


def _by_module(calls: list[Call]) -> dict[str, list[Call]]:
    out: dict[str, list[Call]] = {}
    for c in calls:
        out.setdefault(c.module, []).append(c)
    return out


def _anchor_pairs(anchors: dict[str, str] | None, resolved: list[tuple[str, str, SidedEntry]]) -> list[tuple[str, str]]:
    """Anchors whose modules the mapping does not already pair (the mapping wins)."""
    mapped_a = {x for x, _, _ in resolved}
    mapped_b = {y for _, y, _ in resolved}
    return [(x, y) for x, y in (anchors or {}).items() if x not in mapped_a and y not in mapped_b]


def _kinds(c: Call) -> tuple[str, ...]:
    """The kinds of a call's tensor inputs (float, integer, bool), in order."""
    return tuple(str(getattr(r, "dtype", ""))[:1] for r in c.tensor_inputs())


def _shapes(c: Call) -> tuple[int, ...]:
    """The element counts of a call's tensor outputs (a layout moves no element: a patch
    convolution's ``[b, c, h, w]`` is a Linear's ``[b, h * w, c]``)."""
    return tuple(math.prod(getattr(r, "shape", ())) for r in c.tensor_outputs())


def _wrapped(anchors: list[tuple[str, str]], a: TraceView, b: TraceView, ca: list[Call], cb: list[Call],
             parts: frozenset[tuple[str, str]] = frozenset()) -> list[tuple[str, str]]:
    """Anchors moved up to the module that wraps one side's weight-owner, when the owner is
    called on another kind of input than its partner, or returns other sizes, and the wrapper
    matches the partner there: a codebook a quantiser holds itself (called on features) against
    an ``nn.Embedding`` inside the other side's quantiser (called on the chosen indices); an
    ``Embedding`` whose rows a bag module sums against an ``EmbeddingBag``. The wrapper must
    hold no other anchored module, so the weights still say it is the same computation. A part's
    layer against the whole layer (``parts``) returns a share of the sum: its statistics say nothing."""
    first_a, first_b = _by_module(ca), _by_module(cb)
    held_a = {x for x, _ in anchors}
    held_b = {y for _, y in anchors}
    out = []
    for x, y in anchors:
        xs, ys = first_a.get(x), first_b.get(y)
        if xs and ys and (_kinds(xs[0]) != _kinds(ys[0]) or _shapes(xs[0]) != _shapes(ys[0])):
            wy = _up(y, ys[0], xs[0], b, held_b)
            wx = None if wy is not None else _up(x, xs[0], ys[0], a, held_a)
            out.append((wx or x, wy or y))
        elif xs and ys and (x, y) not in parts and not _same_stats(xs[0], ys[0]):
            wy = _up(y, ys[0], xs[0], b, held_b, _same_stats)
            wx = None if wy is not None else _up(x, xs[0], ys[0], a, held_a, _same_stats)
            out.append((wx or x, wy or y))
        else:
            out.append((x, y))
    return out


def _up(module: str, call: Call, partner: Call, v: TraceView, held: set[str],
        same: abc.Callable[[Call, Call], bool] | None = None) -> str | None:
    """The innermost enclosing call of ``call`` that matches ``partner`` where ``call`` does not
    (its inputs' kinds, or its outputs' sizes; with ``same``, that test), when no call between
    (itself included) belongs to another anchored module."""
    kinds, shapes = _kinds(partner), _shapes(partner)
    for p in v.ancestors(call):
        inner = {c.module for c in v.tree(p.step).descendants(p)} | {p.module}
        if (inner & held) - {module}:
            return None
        if same is not None:
            if same(p, partner):
                return p.module
        elif (_kinds(p) == kinds != _kinds(call)) or (_shapes(p) == shapes != _shapes(call)):
            return p.module
    return None


def _same_stats(x: Call, y: Call) -> bool:
    """Whether the first tensor outputs of two calls have the same statistics (any layout: sums
    and extremes do not depend on the order of the elements) to 1e-3: with one side's weights
    copied into the other, the call that computes the same thing returns the same values, where
    the weight-owner inside a wrapper that scales its output (an embedding times sqrt(width)
    inside the module on one side, in a wrapper on the other) does not."""
    ox, oy = x.tensor_outputs(), y.tensor_outputs()
    if not ox or not oy:
        return True  # nothing to tell them apart
    try:
        sx, sy = ox[0].stats, oy[0].stats
        pairs = [(float(sx[k]), float(sy[k])) for k in ("l2", "mean_abs", "max", "min")]
    except (AttributeError, KeyError, TypeError, ValueError, OSError):
        return True
    return all(abs(p - q) <= 1e-3 * max(abs(p), abs(q), 1e-12) for p, q in pairs)


def _pins(
    ca: list[Call], cb: list[Call], resolved: list[tuple[str, str, SidedEntry]], anchors: list[tuple[str, str]]
) -> dict[int, _Pin]:
    """A call id -> its fixed partner: the n-th call of a mapped (then anchored) module
    with the n-th call of its counterpart."""
    pins: dict[int, _Pin] = {}
    taken: set[int] = set()
    todo = [(x, y, "mapping", e) for x, y, e in resolved] + [(x, y, "anchor", None) for x, y in anchors]
    if not todo:
        return pins
    by_a, by_b = _by_module(ca), _by_module(cb)
    for mod_a, mod_b, how, entry in todo:
        for x, y in zip(by_a.get(mod_a, []), by_b.get(mod_b, [])):
            if x.id not in pins and y.id not in taken:
                pins[x.id] = _Pin(y, how, entry)
                taken.add(y.id)
    return pins


def _nested(pins: dict[int, _Pin], a: TraceView, b: TraceView, ta: CallTree, tb: CallTree) -> dict[int, _Pin]:
    """``pins`` without the anchored pairs whose contents pair elsewhere: a module one side calls
    once around a loop (a decoder running every time step) against its partner the other side
    calls once per step (the loop drawn one level up). Its n-th call against the partner's n-th
    is no pair when calls inside it are pinned to calls inside another call of the partner
    module, or when it takes inputs of other sizes (all time steps' tokens against one step's);
    the calls inside still pair one by one."""
    count_a = Counter(c.module for c in a.calls.get(first_step(a), []))
    calls_b = _by_module(b.calls.get(first_step(b), []))
    drop = set()
    for i, p in pins.items():
        x = a.by_id[i]
        if p.how != "anchor" or count_a[x.module] == len(calls_b.get(p.b.module, ())):
            continue
        elsewhere, same_sizes = False, _sizes_in(x) == _sizes_in(p.b)
        if same_sizes:  # (other sizes say it already; no subtree read)
            inside_y = {c.id for c in tb.descendants(p.b)}
            others = {c.id for y in calls_b.get(p.b.module, ()) if y.id != p.b.id for c in tb.descendants(y)}
            elsewhere = any(pins[c.id].b.id in others and pins[c.id].b.id not in inside_y
                            for c in ta.descendants(x) if c.id in pins)
        if elsewhere or not same_sizes:
            logger.info("%s is not paired with %s: %s (a loop drawn at another level)", x.label, p.b.label,
                        f"calls inside it pair with calls inside other calls of {p.b.module or '<root>'}" if elsewhere
                        else f"called {count_a[x.module]} and {len(calls_b[p.b.module])} times, on inputs of other sizes")
            drop.add(i)
    return {i: p for i, p in pins.items() if i not in drop}


def _sizes_in(c: Call) -> tuple[int, ...]:
    return tuple(math.prod(getattr(r, "shape", ())) for r in c.tensor_inputs())


def _hidden(pins: dict[int, _Pin], by_id_a: abc.Mapping[int, Call], ta: CallTree, tb: CallTree) -> tuple[set[int], set[int]]:
    """Ids of the calls inside black-box pins, on each side."""
    hidden_a: set[int] = set()
    hidden_b: set[int] = set()
    for i, p in pins.items():
        if p.entry is not None and p.entry.blackbox:
            hidden_a.update(c.id for c in ta.descendants(by_id_a[i]))
            hidden_b.update(c.id for c in tb.descendants(p.b))
    return hidden_a, hidden_b


def _module_pairs(
    al: Alignment, resolved: list[tuple[str, str, SidedEntry]], anchors: dict[str, str]
) -> dict[str, str]:
    """Module path pairs from the mapping, the anchors, call pairs, then children of paired parents."""
    pairs: dict[str, str] = {}
    taken: set[str] = set()
    known = itertools.chain(
        ((a_mod, b_mod) for a_mod, b_mod, _ in resolved), anchors.items(), ((p.a.module, p.b.module) for p in al.pairs)
    )
    for a_mod, b_mod in known:
        if a_mod not in pairs and b_mod not in taken:
            pairs[a_mod] = b_mod
            taken.add(b_mod)
    mods_b = _modules(al.b)
    for mod in sorted((m for m in _modules(al.a) if m and m not in pairs), key=lambda s: (s.count("."), s)):
        parent, _, leaf = mod.rpartition(".")
        target = f"{pairs[parent]}.{leaf}" if pairs.get(parent) else (leaf if parent in pairs else None)
        if target is None and mod in mods_b:
            target = mod
        if target is None or target not in mods_b or target in taken:
            continue
        if types_equivalent(al.a.module_types.get(mod, ""), al.b.module_types.get(target, "")) is False:
            continue
        pairs[mod] = target
        taken.add(target)
    return pairs

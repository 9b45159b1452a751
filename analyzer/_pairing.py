"""Pairing: module calls (mapping pins + global order alignment), tensor leaves, weights.

A wrong pair is worse than no pair: two calls may pair by order only with
positive evidence - the same first output shape and either equivalent framework
types, or both user-defined with compatible names or contents.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from padiff_trace import Record
from padiff_trace._match import align, canonical_type, is_known_type, types_equivalent

from ._calls import Call, TraceView, as_int_ids, first_step, shape_sig
from ._mapping import Mapping, MappingEntry, resolve
from ._metrics import RowSlice

__all__ = ["CallPair", "Alignment", "align_views", "pair_leaves", "pair_weights", "WEIGHT_NAMES"]

logger = logging.getLogger(__name__)

# paddle local name -> torch local name; names absent here must be equal
WEIGHT_NAMES = {"_mean": "running_mean", "_variance": "running_var"}
IGNORED_WEIGHTS = {"num_batches_tracked"}
# torch MultiheadAttention packs paddle's q/k/v projections row-wise: in_proj_weight [3E, E] holds
# q_proj.weight, k_proj.weight, v_proj.weight (each transposed: paddle Linear weights are [in, out])
_PACKED = {"in_proj_weight": "weight", "in_proj_bias": "bias"}
_PROJ = ("q_proj", "k_proj", "v_proj")

_W = Record | RowSlice

_PIN = 1e6


@dataclass(eq=False)
class CallPair:
    a: Call
    b: Call
    how: str  # "root", "mapping" or "order"
    entry: MappingEntry | None = None

    @property
    def blackbox(self) -> bool:
        return self.entry is not None and self.entry.blackbox

    @property
    def perm(self) -> tuple[int, ...] | None:
        return self.entry.transpose if self.entry is not None else None


@dataclass(eq=False)
class Alignment:
    """Pairing of step ``step_a``/``step_b`` forward calls, reusable for every step."""

    a: TraceView
    b: TraceView
    swap: bool  # True when A is the torch trace (mapping keys then name B's modules)
    pairs: list[CallPair]
    unpaired_a: list[Call]
    unpaired_b: list[Call]
    hidden_a: list[Call] = field(default_factory=list)  # inside black boxes
    hidden_b: list[Call] = field(default_factory=list)
    module_pairs: dict[str, str] = field(default_factory=dict)
    module_entries: dict[str, MappingEntry] = field(default_factory=dict)

    def by_key(self) -> dict[tuple[str, int], CallPair]:
        return {p.a.key: p for p in self.pairs}


def _modules(v: TraceView) -> set[str]:
    return set(v.module_types) | {c.module for cs in v.calls.values() for c in cs}


def align_views(a: TraceView, b: TraceView, mapping: Mapping | None = None) -> Alignment:
    """Pair the forward calls of the first step of both traces."""
    swap = a.framework == "torch" and b.framework == "paddle"
    ca = a.calls.get(first_step(a), [])
    cb = b.calls.get(first_step(b), [])
    pins: dict[int, tuple[int, MappingEntry | None, str]] = {}  # index in ca -> (index in cb, entry, how)
    resolved = resolve(mapping, _modules(a), _modules(b), swap) if mapping is not None else []
    ia = {c.id: i for i, c in enumerate(ca)}
    ib = {c.id: i for i, c in enumerate(cb)}
    by_mod_a = _by_module(ca)
    by_mod_b = _by_module(cb)
    module_entries: dict[str, MappingEntry] = {}
    pinned_b: set[int] = set()
    for mod_a, mod_b, entry in resolved:
        module_entries[mod_a] = entry
        for x, y in zip(by_mod_a.get(mod_a, []), by_mod_b.get(mod_b, [])):
            if ia[x.id] not in pins and ib[y.id] not in pinned_b:
                pins[ia[x.id]] = (ib[y.id], entry, "mapping")
                pinned_b.add(ib[y.id])
    roots_a = [i for i, c in enumerate(ca) if c.parent == -1]
    roots_b = [j for j, c in enumerate(cb) if c.parent == -1]
    if roots_a and roots_b and roots_a[0] not in pins and roots_b[0] not in pinned_b:
        pins[roots_a[0]] = (roots_b[0], None, "root")
        pinned_b.add(roots_b[0])
    hidden_a: set[int] = set()
    hidden_b: set[int] = set()
    for i, (j, entry, _) in pins.items():
        if entry is not None and entry.blackbox:
            hidden_a |= {ia[d] for d in a.descendants(ca[i])}
            hidden_b |= {ib[d] for d in b.descendants(cb[j])}
    score = _score(ca, cb, a, b)
    score[sorted(hidden_a), :] = 0
    score[:, sorted(hidden_b)] = 0
    for i, (j, _, _) in pins.items():
        score[i, :] = 0
        score[:, j] = 0
    for i, (j, _, _) in pins.items():
        score[i, j] = _PIN
    pairs_ij = align(score)
    # second pass: reward pairs whose parents are paired with each other
    parent_of = {i: j for i, j in pairs_ij}
    bonus = np.zeros_like(score)
    pa = np.array([ia.get(c.parent, -1) for c in ca])
    pb = np.array([ib.get(c.parent, -1) for c in cb])
    mapped_parent = np.array([parent_of.get(int(p), -2) if p >= 0 else -1 for p in pa])
    bonus[(mapped_parent[:, None] == pb[None, :]) & (score > 0) & (score < _PIN)] = 0.5
    pairs_ij = align(score + bonus)
    got = dict(pairs_ij)
    for i, (j, _, _) in pins.items():  # crossing pins (reordered modules) are kept too
        got[i] = j
    pairs: list[CallPair] = []
    for i in sorted(got):
        j = got[i]
        pin = pins.get(i)
        how, entry = ("order", None) if pin is None or pin[0] != j else (pin[2], pin[1])
        pairs.append(CallPair(ca[i], cb[j], how, entry))
    used_a, used_b = set(got), set(got.values())
    al = Alignment(
        a,
        b,
        swap,
        pairs,
        [c for i, c in enumerate(ca) if i not in used_a and i not in hidden_a],
        [c for j, c in enumerate(cb) if j not in used_b and j not in hidden_b],
        [ca[i] for i in sorted(hidden_a)],
        [cb[j] for j in sorted(hidden_b)],
        module_entries=module_entries,
    )
    al.module_pairs = _module_pairs(al, resolved)
    logger.info("aligned %d call pairs; %d/%d unpaired", len(pairs), len(al.unpaired_a), len(al.unpaired_b))
    return al


def _by_module(calls: list[Call]) -> dict[str, list[Call]]:
    out: dict[str, list[Call]] = {}
    for c in calls:
        out.setdefault(c.module, []).append(c)
    return out


def _leaf(path: str) -> str:
    return path.rsplit(".", 1)[-1]


def _group(t: str) -> str:
    c = canonical_type(t)
    return "batchnorm" if c.startswith("batchnorm") and c[9:] in ("", "1d", "2d", "3d") else c


def _score(ca: list[Call], cb: list[Call], va: TraceView, vb: TraceView) -> np.ndarray:
    """Evidence that call i of A and call j of B are the same computation (0 = none)."""
    n, m = len(ca), len(cb)
    out_a = [shape_sig(c.outputs) for c in ca]
    out_b = [shape_sig(c.outputs) for c in cb]
    first = as_int_ids([o[0] if o else None for o in out_a + out_b])
    full = as_int_ids(out_a + out_b)
    ins = as_int_ids([shape_sig(c.inputs) for c in ca + cb])
    grp = as_int_ids([_group(c.module_type) for c in ca + cb])
    leaf = as_int_ids([_leaf(c.module) for c in ca + cb])
    path = as_int_ids([c.module for c in ca + cb])
    known = np.array([is_known_type(c.module_type) for c in ca + cb])
    depth = np.array([c.depth for c in ca + cb])

    def outer(x: np.ndarray) -> np.ndarray:
        return x[:n, None] == x[None, n:]

    shape_ok = outer(first)
    ka, kb = known[:n, None], known[None, n:]
    same_type = outer(grp)
    s = np.zeros((n, m), dtype=np.float32)
    s[shape_ok & ka & kb & same_type] = 2.0
    both_user = shape_ok & ~ka & ~kb
    user_named = both_user & (same_type | outer(leaf))
    s[user_named] = 1.5
    # both user-defined, different names: compare what they contain
    rest = np.argwhere(both_user & ~user_named)
    if len(rest):
        sig_a = {i: _contents(va, ca[i]) for i in set(rest[:, 0].tolist())}
        sig_b = {j: _contents(vb, cb[j]) for j in set(rest[:, 1].tolist())}
        for i, j in rest:
            sim = _jaccard(sig_a[i], sig_b[j])
            if sim >= 0.5:
                s[i, j] = 0.5 + sim
    pos = s > 0
    s += pos * (0.5 * outer(full) + 0.25 * outer(ins) + 0.25 * outer(leaf) + 0.25 * outer(path))
    s += pos * 0.1 * (depth[:n, None] == depth[None, n:])
    return s


def _contents(v: TraceView, c: Call) -> Counter[str]:
    ids = v.descendants(c)
    return Counter(_group(v.by_id[i].module_type) for i in ids if is_known_type(v.by_id[i].module_type))


def _jaccard(x: Counter[str], y: Counter[str]) -> float:
    if not x and not y:
        return 0.0
    inter = sum((x & y).values())
    union = sum((x | y).values())
    return inter / union if union else 0.0


def _module_pairs(al: Alignment, resolved: list[tuple[str, str, MappingEntry]]) -> dict[str, str]:
    """Module path pairs from call pairs, the mapping, then children of paired parents."""
    pairs: dict[str, str] = {}
    taken: set[str] = set()
    for a_mod, b_mod, _ in resolved:
        if a_mod not in pairs and b_mod not in taken:
            pairs[a_mod] = b_mod
            taken.add(b_mod)
    for p in al.pairs:
        if p.a.module not in pairs and p.b.module not in taken:
            pairs[p.a.module] = p.b.module
            taken.add(p.b.module)
    mods_b = _modules(al.b)
    for mod in sorted(_modules(al.a), key=lambda s: (s.count("."), s)):
        if mod in pairs or not mod:
            continue
        parent, _, leaf = mod.rpartition(".")
        target = f"{pairs[parent]}.{leaf}" if parent in pairs and pairs[parent] else (leaf if parent in pairs else None)
        if target is None and mod in mods_b:
            target = mod
        if target is None or target not in mods_b or target in taken:
            continue
        if types_equivalent(al.a.module_types.get(mod, ""), al.b.module_types.get(target, "")) is False:
            continue
        pairs[mod] = target
        taken.add(target)
    return pairs


def _permuted(shape: tuple[int, ...], perm: tuple[int, ...] | None) -> tuple[int, ...] | None:
    if perm is None or len(perm) != len(shape):
        return None
    return tuple(shape[k] for k in perm)


def pair_leaves(
    ra: list[Record], rb: list[Record], perm: tuple[int, ...] | None = None
) -> tuple[list[tuple[Record, Record, tuple[int, ...] | None]], list[Record], list[Record]]:
    """Pair tensor leaves: by position if both sides have the same positions, else in order by shape."""
    ta = [r for r in ra if r.is_tensor]
    tb = [r for r in rb if r.is_tensor]
    if [r.position for r in ta] == [r.position for r in tb]:
        out = []
        for x, y in zip(ta, tb):
            p = perm if _permuted(x.shape, perm) == y.shape and x.shape != y.shape else None
            out.append((x, y, p))
        return out, [], []
    out, used, start = [], set(), 0
    for x in ta:
        px = _permuted(x.shape, perm)
        for k in range(start, len(tb)):
            if k in used:
                continue
            if tb[k].shape == x.shape or (px is not None and tb[k].shape == px):
                out.append((x, tb[k], None if tb[k].shape == x.shape else perm))
                used.add(k)
                start = k + 1
                break
    paired_a = {id(x) for x, _, _ in out}
    return out, [x for x in ta if id(x) not in paired_a], [y for k, y in enumerate(tb) if k not in used]


def weight_name(a_name: str) -> str:
    return WEIGHT_NAMES.get(a_name, a_name)


def _unpack(w: dict[tuple[str, str], Record]) -> dict[tuple[str, str], _W]:
    """torch MHA ``in_proj_*`` -> virtual ``q_proj``/``k_proj``/``v_proj`` entries (row slices, read lazily)."""
    out: dict[tuple[str, str], _W] = {}
    for (mod, name), r in w.items():
        local = _PACKED.get(name)
        if local is None or canonical_type(r.module_type) != "multiheadattention" or not r.has_data:
            out[(mod, name)] = r
            continue
        if not r.shape or r.shape[0] % 3:
            out[(mod, name)] = r
            continue
        e = r.shape[0] // 3
        for i, proj in enumerate(_PROJ):
            out[(f"{mod}.{proj}" if mod else proj, local)] = RowSlice(r, i * e, (i + 1) * e)
    return out


def _is_linear_weight(r: _W) -> bool:
    return isinstance(r, RowSlice) and r.position.startswith("in_proj_weight") or (
        canonical_type(r.module_type) == "linear" and r.position == "weight"
    )


def pair_weights(
    al: Alignment, wa: dict[tuple[str, str], Record], wb: dict[tuple[str, str], Record]
) -> tuple[list[tuple[_W, _W, tuple[int, ...] | None]], list[_W], list[_W]]:
    """Pair weights (or parameter gradients) of one step through the module pairs.

    Between paddle and torch, torch MultiheadAttention's packed ``in_proj_weight``/``in_proj_bias``
    pair row by row with paddle's ``q_proj``/``k_proj``/``v_proj`` weights and biases.
    """
    rev = {v: k for k, v in WEIGHT_NAMES.items()}
    fwd = rev if al.swap else WEIGHT_NAMES
    cross = {al.a.framework, al.b.framework} == {"paddle", "torch"}
    if cross:
        wa2: dict[tuple[str, str], _W] = _unpack(wa) if al.a.framework == "torch" else dict(wa)
        wb2: dict[tuple[str, str], _W] = _unpack(wb) if al.b.framework == "torch" else dict(wb)
    else:
        wa2, wb2 = dict(wa), dict(wb)
    out = []
    used: set[tuple[str, str]] = set()
    un_a = []
    for (mod, name), ra in wa2.items():
        if name in IGNORED_WEIGHTS:
            continue
        kb = _b_module(al, mod)
        rb = wb2.get((kb, fwd.get(name, name))) if kb is not None else None
        if rb is None or (kb, fwd.get(name, name)) in used:
            un_a.append(ra)
            continue
        used.add((kb, fwd.get(name, name)))
        perm: tuple[int, ...] | None = None
        entry = al.module_entries.get(mod)
        if entry is not None and entry.transpose and _permuted(ra.shape, entry.transpose) == rb.shape:
            perm = entry.transpose
        elif cross and len(ra.shape) == 2 and (_is_linear_weight(ra) or _is_linear_weight(rb)):
            # paddle Linear weight is [in, out], torch [out, in]: always a transpose, also when square
            perm = (1, 0) if ra.shape[::-1] == rb.shape else None
        out.append((ra, rb, perm))
    un_b = [r for k, r in wb2.items() if k not in used and k[1] not in IGNORED_WEIGHTS]
    return out, un_a, un_b


def _b_module(al: Alignment, mod: str) -> str | None:
    """B's module for A's module ``mod``: the module pairs, else B's child of the parent's pair.

    The fallback reaches modules that exist on one side only as packed rows (torch MHA q/k/v).
    """
    mb = al.module_pairs.get(mod)
    if mb is not None:
        return mb
    parent, _, leaf = mod.rpartition(".")
    if leaf not in _PROJ:
        return None
    pb = al.module_pairs.get(parent)
    if pb is None:
        return None
    return f"{pb}.{leaf}" if pb else leaf

"""Other pairings to try where the names cannot tell two weights apart, and which run went further.

Two sibling projections of one shape (a gated MLP's gate and up: ``w1``/``w2`` in one library,
``gate_proj``/``up_proj`` in another, and which numbered name is the gate differs between
libraries) pair by names and registration order, which can be wrong with nothing in the shapes
to say so. The values can: a call of the module holding them whose inputs agree confirms the
pairing if its outputs agree, and refutes it if they do not (``confirmed``). When a run
diverges inside such a module, some call refutes the pairing and none confirms it, ``run``
records B once more with the two swapped in every block (``pairing_alternatives``: a mapping
file's ``modules`` entries) and keeps that run if a call confirms the swap and its first
divergence comes later (``divergence_key``). A bug that swaps them in one block is not paired
away: another block confirms the names, or the swap diverges in an earlier block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from padiff_trace import Kind
from padiff_trace.matching import module_pattern

from ..alignment._records import value_id

if TYPE_CHECKING:
    from ._report import Report

__all__ = ["Alternative", "confirmed", "diverges_inside", "divergence_key", "fed_by", "first_use", "named_alone",
           "pairing_alternatives", "part_alternatives"]

_INDEX = re.compile(r"(?<=\.)\d+(?=\.|$)|^\d+(?=\.|$)")
_MAX_TRIES = 2
_OP_ROLES = ("op_input", "op_output", "op_grad_output")  # pairs of ops inside module calls (``--ops``)


@dataclass(frozen=True)
class Alternative:
    """Another pairing to record B with: a mapping file's contents, what it pairs in words, and
    the module holding the two weights (A's path, block indices as ``*``)."""

    mapping: dict[str, Any]
    swapped: str
    holder: str
    # no name paired the weights (parts of one tensor in registration order): a value inside the
    # holder that agrees now is confirmation enough (``diverges_inside``); names that paired two
    # sibling modules need a call of the holder to agree
    unnamed: bool = False
    # modules whose calls confirm it instead (their inputs read in the new order, then agreeing):
    # the calls that received the value another port orders otherwise
    readers: tuple[str, ...] = ()
    # parts whose names say no order (``fc_gate``, ``fc_value``: words, not a number): a part's call
    # agrees under either order, so its agreeing does not stop the try
    orderless: bool = False
    # no call of either side pairs with the holder's (a cell looping per step against one layer
    # call): tried whatever the holder's calls say, kept only where the whole run then agrees
    whole_only: bool = False
    # alternatives with one key read the same weights alike where the first run diverged and
    # otherwise further on (packed head by head: as many groups in every block, or heads of one
    # size): ``run`` tries each that goes further and keeps the one going furthest
    rivals: str = ""
    # readers confirm it only where none of their calls with agreeing inputs differs (a pairing
    # taken in every repeat, one of which may be the bug: the others' calls refute it)
    all_readers: bool = False


_DIGITS = re.compile(r"\d+")
_WORDS = re.compile(r"[a-z]+")


def _pattern(module: str) -> str:
    """The module path with every block index a wildcard (``h.3.mlp.w1`` -> ``h.*.mlp.w1``)."""
    return _INDEX.sub("*", module)


def _parent(module: str) -> str:
    return module.rpartition(".")[0]


def _within(module: str, scope: set[str]) -> bool:
    return any(module == s or module.startswith(s + ".") or not s for s in scope)


def pairing_alternatives(report: Report) -> list[Alternative]:
    """Mapping documents (``{"modules": [...]}``) that swap two same-shape sibling weights the
    weight map paired by name or order, inside the module pair the first divergence names (or
    the module holding it), each with what it pairs in words; the most likely first, at most
    two. Empty when the run aligned, was pinned by a mapping, or nothing there could be swapped."""
    d, wm = report.first_divergence, report.weight_map
    if d is None or wm is None:
        return []
    ka, kb = wm.side_keys()
    if (ka, kb) not in (("paddle", "torch"), ("torch", "paddle")):  # a mapping's modules name the frameworks
        return []
    # the calls named, or (an op's record, ``--ops``) the modules the differing records belong to
    ma, mb = (d.located.a.call.module, d.located.b.call.module) if d.located else (d.pair.a.module, d.pair.b.module)
    scope_a, scope_b = {ma, _parent(ma)} if "." in ma else {ma}, {mb, _parent(mb)} if "." in mb else {mb}
    shapes_a = _shapes(report.a)
    shapes_b = _shapes(report.b)
    groups: dict[tuple[str, str, tuple[int, ...], tuple[int, ...]], list[tuple[str, str]]] = {}
    for p in wm.pairs:
        if p.a_part is not None or p.b_part is not None or p.how == "mapping" or not p.a.endswith(".weight"):
            continue
        mod_a, mod_b = p.a.rpartition(".")[0], p.b.rpartition(".")[0]
        if not (_within(_parent(mod_a), scope_a) or _within(_parent(mod_b), scope_b)):
            continue
        sa, sb = shapes_a.get(p.a), shapes_b.get(p.b)
        if sa is None or sb is None or len(sa) != 2:
            continue
        groups.setdefault((_parent(mod_a), _parent(mod_b), sa, sb), []).append((mod_a, mod_b))
    out: list[Alternative] = []
    for (pa, pb, _, _), mods in sorted(groups.items(), key=lambda kv: (kv[0][0] != ma and kv[0][0] != _parent(ma), kv[0][0])):
        if len(mods) != 2 or pa == pb == "":
            continue
        (a1, b1), (a2, b2) = mods
        swapped = f"{a1} with {b2} and {a2} with {b1}"
        doc = {"version": 1, "modules": [{ka: _pattern(a1), kb: _pattern(b2)}, {ka: _pattern(a2), kb: _pattern(b1)}],
               "note": f"written by padiff-trace run: {swapped} in every block (names or order paired them the other way)"}
        out.append(Alternative(doc, swapped, _pattern(pa)))
    return out[:_MAX_TRIES]


def part_alternatives(report: Report) -> list[Alternative]:
    """Mapping documents (``{"weights": [...]}``) swapping the two equal parts of a packed
    tensor that the weight map filled in registration order from two tensors no name told
    apart (``[1, H, D]`` source and target vectors against one ``[H, 2D]``), for every tensor
    packed from tensors of the same local names, when the first divergence is inside the module
    holding them; a packed layer's weight and bias swap together (a GLU's value|gate projection
    against two Linears). Empty otherwise."""
    d, wm = report.first_divergence, report.weight_map
    if d is None or wm is None:
        return []
    ka, kb = wm.side_keys()
    scope = _scope(d)
    held = packed_in_order(wm)

    def local(name: str) -> str:
        return name.rpartition(".")[2]

    kinds: dict[tuple[str, str, tuple[str, ...]], list[list[Any]]] = {}
    for (side, name), ps in held.items():
        parts = [p.b_part if side == kb else p.a_part for p in ps]
        if len(ps) != 2 or parts[0][1] - parts[0][0] != parts[1][1] - parts[1][0]:
            continue
        others = tuple(local(p.a if side == kb else p.b) for p in ps)
        kinds.setdefault((side, local(name), others), []).append(ps)
    kinds = _with_their_layers(kinds, kb)
    out = []
    for (side, _, _), groups in kinds.items():
        mods = {n.rpartition(".")[0] for ps in groups for p in ps for n in (p.a, p.b)}
        if not any(m == s or m.startswith(s + ".") or (s and s.startswith(m + ".")) for m in mods for s in scope if s):
            continue
        if all(_named_in_order(ps, side == kb) for ps in groups):
            continue  # the packed layer's name lists its parts in the order they were filled
        entries = []
        for p1, p2 in groups:
            for p, q in ((p1, p2), (p2, p1)):
                part = list(q.b_part if side == kb else q.a_part)
                entries.append({ka: p.a, kb: p.b, f"{side}_part": part, "axis": p.axis})
        said = " and ".join(f"{p.a} with {p.b} part {list(q.b_part if side == kb else q.a_part)}"
                            for p, q in ((groups[0][0], groups[0][1]), (groups[0][1], groups[0][0])))
        holder = _pattern(groups[0][0].a.rpartition(".")[0])
        out.append(Alternative({"version": 1, "weights": entries, "note": f"written by padiff-trace run: {said}"},
                               said, holder, unnamed=True, orderless=_orderless(groups[0], side == kb)))
    return out[:_MAX_TRIES]


# why a side's named call is one the other side has no counterpart for (an activation module
# against inline code): what fed it may be the other module's parts in another order
_ONE_SIDED = ("one side only", "unverified")


def _scope(d: Any) -> set[str]:
    """The modules the first divergence names, and, where a side names a call of its own that the
    other side computes inline (a SwiGLU module reading a packed up|gate projection), that call's
    parent too: the packed layer feeding it sits beside it, not in it."""
    if d.located is None:
        return {d.pair.a.module, d.pair.b.module}
    out = set()
    for side in (d.located.a, d.located.b):
        out.add(side.call.module)
        if side.why in _ONE_SIDED:
            out.add(side.call.module.rpartition(".")[0])
    return out


def _with_their_layers(kinds: dict[Any, list[list[Any]]], kb: str) -> dict[Any, list[list[Any]]]:
    """Kinds of packed tensors (one local name each: every block's ``proj.weight``) merged where
    they are held by the same modules: a packed layer's weight and bias swap together."""
    def modules(groups: list[list[Any]], side: str) -> set[str]:
        return {(p.b if side == kb else p.a).rpartition(".")[0] for ps in groups for p in ps}

    merged: list[tuple[Any, list[list[Any]], set[str]]] = []
    for key, groups in kinds.items():
        mods = modules(groups, key[0])
        for k, (key2, groups2, mods2) in enumerate(merged):
            if key2[0] == key[0] and mods2 & mods:
                merged[k] = (key2, groups2 + groups, mods2 | mods)
                break
        else:
            merged.append((key, list(groups), mods))
    return {key: groups for key, groups, _ in merged}


def _named_in_order(ps: list[Any], packed_in_b: bool) -> bool:
    """Whether the packed layer's own name lists its parts, by the word that tells each part's
    layer apart from the other's, in the order the weight map filled them (``res_skip_conv``
    holding ``res_conv`` then ``skip_conv``; ``gate_up_proj``): no other order to try."""
    parts = sorted(ps, key=lambda p: (p.b_part if packed_in_b else p.a_part)[0])
    leaf = (parts[0].b if packed_in_b else parts[0].a).rpartition(".")[0].rpartition(".")[2]
    said = _WORDS.findall(leaf.lower())
    words = [set(_WORDS.findall((p.a if packed_in_b else p.b).rpartition(".")[0].rpartition(".")[2].lower()))
             for p in parts]
    at = []
    for i, mine in enumerate(words):
        own = mine.difference(*(w for j, w in enumerate(words) if j != i))
        hits = [said.index(w) for w in own if w in said]
        if len(hits) != 1:
            return False
        at.append(hits[0])
    return at == sorted(set(at))


def _orderless(ps: list[Any], parts_in_a: bool) -> bool:
    """Whether the names of two parts say no order: they differ by words (``fc_gate``,
    ``fc_value``), not only by a number (``conv1``, ``conv2``; ``branch.0``, ``branch.1``), which
    counts them in the order a packed tensor of both holds them."""
    names = [p.a if parts_in_a else p.b for p in ps]
    stems = {_DIGITS.sub("", n) for n in names}
    return len(stems) == len(names)


def packed_in_order(wm: Any) -> dict[tuple[str, str], list[Any]]:
    """(side holding the parts, its tensor) -> the weight map's pairs of a packed tensor cut one
    range per part (no ``*_groups``): the parts the matcher filled in registration order."""
    ka, kb = wm.side_keys()
    held: dict[tuple[str, str], list[Any]] = {}
    for p in wm.pairs:
        if p.how != "packed" or (p.a_part is None) == (p.b_part is None) or p.a_groups > 1 or p.b_groups > 1:
            continue
        side, name = (kb, p.b) if p.b_part is not None else (ka, p.a)
        held.setdefault((side, name), []).append(p)
    return held


def confirmed(report: Report, holder: str) -> tuple[int, int]:
    """The calls of the modules matching ``holder`` (A's paths, ``*`` one component: the module
    holding the two weights, in every block) whose inputs all agree: (how many return outputs
    that agree, how many do not) -- each a pairing of its weights confirmed or refuted by the
    values. Calls after the first divergence receive inputs that differ and say nothing."""
    t = report.pairs
    if not len(t):
        return 0, 0
    rx = module_pattern(holder)
    cp, outs = t.col("cp"), t.role_mask("output")
    fwd = t.role_mask("input", "output") & (cp >= 0)
    ins_ok: dict[int, bool] = {}
    outs_ok: dict[int, bool] = {}
    for i in np.flatnonzero(fwd).tolist():
        k = int(cp[i])
        if rx.match(t.call_pairs[k].a.module):
            seen = outs_ok if outs[i] else ins_ok
            seen[k] = seen.get(k, True) and bool(t.passed[i])
    judged = [k for k in outs_ok if ins_ok.get(k, True)]
    good = sum(outs_ok[k] for k in judged)
    return good, len(judged) - good


def named_alone(report: Report, holder: str) -> bool:
    """Whether the first divergence is located at a call of a module matching ``holder`` (A's
    paths) that pairs with no call of B (a framework cell against a cell written inline): its
    calls can confirm no pairing of its weights, only a run that gets past it can."""
    d, rx = report.first_divergence, module_pattern(holder)
    if d is None or d.located is None or not rx.fullmatch(d.located.a.call.module):
        return False
    return not any(rx.match(cp.a.module) for cp in report.pairs.call_pairs)


def _shapes(view: Any) -> dict[str, tuple[int, ...]]:
    """Full tensor name -> shape of the first recorded step's weights."""
    if not view.weights:
        return {}
    recs = view.weights[min(view.weights)].values()
    return {r.tensor_name: tuple(r.shape) for r in recs}


def diverges_inside(report: Report, holder: str) -> bool:
    """Whether the first divergence is named inside a module matching ``holder`` (or at it): a
    run that goes further than another there made a value inside it agree that differed, which
    confirms its pairing where a bug elsewhere in the module keeps every call of it differing."""
    d = report.first_divergence
    if d is None:
        return False
    rx = module_pattern(holder)
    m = d.located.a.call.module if d.located else d.pair.a.module
    while m:
        if rx.match(m):
            return True
        m = m.rpartition(".")[0]
    return False


def fed_by(report: Report, side: str, module: str) -> bool:
    """Whether the first divergence is an op whose record on ``side`` ("a" or "b") read a value
    that the call of ``module``, or a call or an op inside it, returned in that step: an operand
    of a call on that side only, which the op comparison sets against nothing, so the op that
    differs does not clear that call."""
    d = report.first_divergence
    if d is None or not d.pair.role.startswith("op_"):
        return False
    rec = getattr(d.pair, side)
    trace = getattr(report, side).trace
    t = trace.table
    kind, step = t["kind"], t["step"]
    read = {value_id(trace[int(q)]) for q in t["seq"][(t["call"] == rec.call) & (kind == int(Kind.OP_INPUT))]}
    read.discard(None)
    made = np.isin(kind, (int(Kind.MODULE_OUTPUT), int(Kind.OP_OUTPUT))) & (step == rec.step)
    for q in t["seq"][made]:
        r = trace[int(q)]
        if (r.module == module or r.module.startswith(module + ".")) and value_id(r) in read:
            return True
    return False


def divergence_key(report: Report) -> tuple[float, float, float]:
    """How far a run got before its first divergence: (step, A's record number, B's); aligned
    runs are infinitely far. Comparable between two runs of one A trace against recordings of
    one B spec: A's records are the same in both, B's may pair with other calls of A. With op
    records (``--ops``) only module-level pairs count: how ops of one call pair depends on the
    values inside it, and a pairing is judged by the modules it makes agree."""
    d = report.first_divergence
    if d is None or report.exit_code == 0:
        return (float("inf"), float("inf"), float("inf"))
    t = report.pairs
    ops = t.role_mask(*_OP_ROLES)
    if ops.any():
        failed = t.failing & ~ops
        rows = np.flatnonzero(failed)
        if not len(rows):
            return (float("inf"), float("inf"), float("inf"))
        is_input = t.role_mask("input")
        outs = np.flatnonzero(failed & ~is_input)
        i = int(outs[0]) if len(outs) else int(rows[0])
        early = np.flatnonzero(failed[:i] & is_input[:i])
        first = t[int(early[0]) if len(early) else i]
        ra, rb = first.a, first.b
    else:
        ra, rb = d.pair.a, d.pair.b
    return (float(rb.step), float(ra.seq), float(rb.seq))


def first_use(report: Report, modules: set[str]) -> float:
    """A's first record number, in the step of the run's first divergence, of a call's input or
    output of one of ``modules`` (or of a module inside one): where weights they hold first act.
    Infinite when none of them was called there (or the run agrees)."""
    d = report.first_divergence
    if d is None or report.exit_code == 0 or not modules:
        return float("inf")
    step = d.pair.b.step
    seqs = [r.a.seq for r in report.pairs if r.b.step == step and r.role in ("input", "output")
            and any(r.a.module == m or r.a.module.startswith(m + ".") for m in modules)]
    return float(min(seqs)) if seqs else float("inf")

"""Other pairings to try where two ports hold one weight in layouts only the values tell apart
(the rotary layouts of q and k: ``_rotary``).

**Patches flattened.** A patch embedding is a convolution ``[out, in, p, p]`` in one port and
a Linear over flattened patches ``[out, in * p * p]`` in the other; the weight matcher pairs
them by a reshape, which flattens each patch channels first. A port that flattens it
channels last (``(p1 p2 c)``) holds the same weights in another order: ``patch_alternatives``
gives the mapping document that reorders the convolution's axes first.

**Square matrices transposed.** A matrix of a class of a port's own (a CRF's transitions) that
is square holds ``[from, to]`` in one port and ``[to, from]`` in the other with one shape:
``square_alternatives`` gives the mapping document that transposes it, for such matrices inside
the module the first divergence names.

**Features concatenated in another order.** One port concatenates four neighbours (Swin's patch
merging), gate and up, or several heads' features as ``[x0, x1, x2, x3]``, the other as ``[x0,
x2, x1, x3]``: the same values, chunks of the feature axis in another order, and every weight
that reads them (a norm's scale and shift, a Linear's inputs) holds its chunks in that order.
Where the first divergence is such a value (``chunk_order``: the other side's chunks found one by
one among this side's), ``concat_alternatives`` gives the mapping document that pairs each
chunk of those weights with its counterpart; the comparison then reads the values in the other
side's order (``alignment._slices.regroup_orders``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

from padiff_trace.matching import is_known_type, module_pattern

from ._pairings import Alternative, _parent, _pattern, _shapes, packed_in_order

if TYPE_CHECKING:
    from ._report import Report

__all__ = ["chunk_order", "concat_alternatives", "grouped_alternatives", "patch_alternatives",
           "square_alternatives"]

_MAX_CHUNKS = 8  # concatenations of more parts than this are not looked for
_SAME = 1e-4  # chunks this close (relative to the largest magnitude) hold the same values


def patch_alternatives(report: Report) -> list[Alternative]:
    """Mapping documents pairing each convolution weight that the weight map paired with a 2-D
    weight by a reshape, inside the module the first divergence names, with its input axis moved
    last first (``*_axes``: channels-last patches); empty when there is none."""
    d, wm = report.first_divergence, report.weight_map
    if d is None or wm is None:
        return []
    ka, kb = wm.side_keys()
    scope = {d.located.a.call.module, d.located.b.call.module} if d.located else {d.pair.a.module, d.pair.b.module}
    shapes = {ka: _shapes(report.a), kb: _shapes(report.b)}
    out = []
    for p in wm.pairs:
        if p.how != "reshape" or p.a_part is not None or p.b_part is not None:
            continue
        for side, name, other in ((ka, p.a, p.b), (kb, p.b, p.a)):
            shape, peer = shapes[side].get(name), shapes[kb if side == ka else ka].get(other)
            mod = name.rpartition(".")[0]
            if shape is None or peer is None or len(shape) < 3 or len(peer) != 2 or not any(
                    s and (mod == s or mod.startswith(s + ".") or s.startswith(mod + ".")) for s in scope):
                continue
            axes = [0, *range(2, len(shape)), 1]
            said = f"{name} flattened channels last (axes {axes}) against {other}"
            doc = {"version": 1, "weights": [{ka: p.a, kb: p.b, f"{side}_axes": axes}],
                   "note": f"written by padiff-trace run: {said}"}
            # judged by the calls of the module named (its inputs agree; the patches are cut inside it)
            named = d.located.a.call.module if d.located else d.pair.a.module
            # or by the call of the layer itself: its output agrees once the weight is read in
            # the other order (its inputs, image against patches, are another representation),
            # where the module named does more than cut patches (a position table of its own)
            out.append(Alternative(doc, said, _pattern(named or p.a.rpartition(".")[0]),
                                   readers=(_pattern(p.a.rpartition(".")[0]),)))
    return out[:2]


def _types(view: Any) -> dict[str, str]:
    """Full tensor name -> the class of the module holding it (the first recorded step's weights)."""
    if not view.weights:
        return {}
    recs = view.weights[min(view.weights)].values()
    return {r.tensor_name: r.module_type for r in recs}


def square_alternatives(report: Report) -> list[Alternative]:
    """Mapping documents pairing a square matrix of a class no layout table knows (on one side at
    least: a Linear's weight against a bare ``[H, H]`` parameter mixing heads), inside the
    module the first divergence names, transposed: a transition matrix one port stores
    ``[from, to]`` and the other ``[to, from]`` has one shape either way, and only the values
    can say which (``run`` keeps the pairing a call of the module confirms)."""
    d, wm = report.first_divergence, report.weight_map
    if d is None or wm is None:
        return []
    ka, kb = wm.side_keys()
    named = d.located.a.call.module if d.located else d.pair.a.module
    shapes = _shapes(report.a)
    types_a, types_b = _types(report.a), _types(report.b)
    out = []
    for p in wm.pairs:
        shape = shapes.get(p.a)
        mod = p.a.rpartition(".")[0]
        # a layer class with a known layout on both sides holds it as the tables say
        known = is_known_type(types_a.get(p.a, "")) and is_known_type(types_b.get(p.b, ""))
        if (shape is None or len(shape) != 2 or shape[0] != shape[1] or shape[0] < 2 or not p.transfer
                or p.a_part is not None or p.b_part is not None or known
                or (p.a_perm is not None and p.b_perm is not None)
                or not named or not (mod == named or mod.startswith(named + "."))):
            continue
        said = f"{p.a} transposed against {p.b}"
        doc = {"version": 1, "weights": [{ka: p.a, kb: p.b, f"{ka}_axes": [1, 0]}],
               "note": f"written by padiff-trace run: {said}"}
        out.append(Alternative(doc, said, _pattern(named)))
    return out[:2]


# a head's feature count in the order a packed projection of unknown layout is tried head by head
_HEAD_SIZES = (64, 128, 32, 16, 8, 80, 96, 256)
_GROUP_TRIES = 3


def grouped_alternatives(report: Report) -> list[Alternative]:
    """Mapping documents taking the parts of a packed tensor the weight map cut ``[q | k | v]``
    (one range each, in registration order: its class is not among the known packings) head by
    head instead, ``[q_0 k_0 v_0 | q_1 k_1 v_1 | ...]``: each part's share of every one of ``g``
    equal groups (``*_groups``). The head count is not recorded: ``g`` is tried for the head
    sizes ``_HEAD_SIZES`` the parts allow, in that order, when the first divergence is in the
    module holding the packed tensor or around it; ``run`` keeps the one a call confirms."""
    d, wm = report.first_divergence, report.weight_map
    if d is None or wm is None:
        return []
    ka, kb = wm.side_keys()
    scope = {d.located.a.call.module, d.located.b.call.module} if d.located else {d.pair.a.module, d.pair.b.module}
    held = packed_in_order(wm)
    kinds: dict[tuple[str, str], list[list[Any]]] = {}  # (side, module pattern) -> each packed tensor's pairs
    near: set[tuple[str, str]] = set()  # modules with a packed tensor where the divergence is
    for (side, name), ps in held.items():
        ps.sort(key=lambda p: (p.b_part if side == kb else p.a_part)[0])
        if len(ps) < 2:
            continue
        kind = (side, _pattern(name.rpartition(".")[0]))
        kinds.setdefault(kind, []).append(ps)
        if any(_near(name.rpartition(".")[0], s) for s in scope if s):
            near.add(kind)
    out = []
    for (side, pattern), tensors in kinds.items():
        if (side, pattern) not in near:
            continue
        first = [hi - lo for lo, hi in ((p.b_part if side == kb else p.a_part) for p in tensors[0])]
        tried = [0, 0]
        for hd in _HEAD_SIZES:
            g = first[0] // hd if first[0] % hd == 0 else 0
            if g < 2:
                continue
            # as many groups in every block, or (stages of other widths) heads of one size in every block
            for by_size in (False, True):
                entries = _head_by_head(tensors, side, (ka, kb), g, hd if by_size else None)
                if (not entries or tried[by_size] == _GROUP_TRIES
                        or (by_size and all(e[f"{side}_groups"] == g for e in entries))):
                    continue
                tried[by_size] += 1
                said = (f"{pattern} packed head by head, heads of {hd} rows of each part" if by_size else
                        f"{pattern} packed head by head, {g} groups of {'|'.join(str(n // g) for n in first)} rows")
                # judged by the calls of the module around A's projection (the attention)
                holder = _pattern(_parent(_parent(tensors[0][0].a)))
                out.append(Alternative({"version": 1, "weights": entries, "note": f"written by padiff-trace run: {said}"},
                                       said, holder, unnamed=True, rivals=f"{side}:{pattern}:{hd}"))
    return out


def _head_by_head(tensors: list[list[Any]], side: str, keys: tuple[str, str], g: int, hd: int | None) -> list[dict[str, Any]]:
    """The weights entries taking each packed tensor's parts head by head: ``g`` groups in
    each, or (``hd``) as many groups as its first part holds heads of ``hd`` rows."""
    ka, kb = keys
    entries: list[dict[str, Any]] = []
    for ps in tensors:  # the weight and the bias of the module, in every block
        sizes = [hi - lo for lo, hi in ((p.b_part if side == kb else p.a_part) for p in ps)]
        k = g if hd is None else (sizes[0] // hd if sizes[0] % hd == 0 else 0)
        if k < 2 or any(n % k for n in sizes):
            continue
        lo = 0
        for p, n in zip(ps, sizes):
            entries.append({ka: p.a, kb: p.b, f"{side}_part": [lo, lo + n // k], f"{side}_groups": k, "axis": p.axis})
            lo += n // k
    return entries


def _near(module: str, scope: str) -> bool:
    """``module`` is ``scope``, inside it, or its parent's child (a projection beside the call named)."""
    return module == scope or module.startswith(scope + ".") or scope.startswith(module.rpartition(".")[0] + ".")


_NUMBERED = re.compile(r"[A-Za-z_]*\d+")  # a path component counting repeats: ``3``, ``layer2``, ``stage_4``


def chunk_order(a: np.ndarray, b: np.ndarray, most: int = _MAX_CHUNKS) -> list[int] | None:
    """The order of ``a``'s chunks of the last axis that ``b`` holds (``b``'s chunk j is ``a``'s
    chunk ``order[j]``), for the fewest equal chunks (2 .. ``most``) where one exists and is not
    the identity; None where no reordering of chunks makes them the same values."""
    n = a.shape[-1]
    if b.shape[-1] != n or a.size != b.size or not a.size:
        return None
    xa, xb = a.reshape(-1, n).astype(np.float64), b.reshape(-1, n).astype(np.float64)
    tol = _SAME * max(float(np.abs(xa).max()), 1e-30)
    for k in range(2, most + 1):
        if n % k:
            continue
        c = n // k
        order: list[int] = []
        for j in range(k):
            part = xb[:, j * c:(j + 1) * c]
            hit = next((i for i in range(k) if i not in order
                        and float(np.abs(xa[:, i * c:(i + 1) * c] - part).max()) <= tol), None)
            if hit is None:
                break
            order.append(hit)
        else:
            return order if order != list(range(k)) else None
    return None


def concat_alternatives(report: Report) -> list[Alternative]:
    """The mapping document pairing, chunk by chunk, every weight inside the module the first
    divergence names that reads the differing value's last axis (a 1-D tensor of a module whose
    weights are all 1-D: a norm; the input axis of a matrix), when that value is the other
    side's with chunks of its last axis in another order (``chunk_order``); empty otherwise,
    and empty where such a weight has the same full name on both sides (two libraries that
    share a checkpoint read it as it is: MobileBERT's trigram taken in another order is a bug)."""
    d, wm = report.first_divergence, report.weight_map
    if d is None or wm is None or d.pair.role not in ("input", "output"):
        return []
    ra, rb = d.pair.a, d.pair.b
    if not (hasattr(ra, "read") and hasattr(rb, "read")) or not ra.shape or not rb.shape:
        return []
    va, vb = np.asarray(ra.read()), np.asarray(rb.read())
    order = chunk_order(va, vb)
    n, channels = int(ra.shape[-1]), False
    if order is None and va.ndim >= 3 and va.shape == vb.shape:  # a map's channels (axis 1: NCHW, NCL)
        order = chunk_order(np.moveaxis(va, 1, -1), np.moveaxis(vb, 1, -1))
        n, channels = int(ra.shape[1]), True
    # the call that received the value reads it too (a convolution after a one-sided module that
    # concatenated its input: the divergence is named at that module, its reader is beside it)
    reader = ra.module if d.pair.role == "input" else None
    if order is None or (channels and reader is None):
        return []
    k = len(order)
    c = n // k
    scope = d.located.a.call.module if d.located else ra.module
    if _packed_producers(wm, scope, c) or (channels and _chunks_paired(report, va, k)):
        return []
    # the same module in every block (as the other pairings this module offers: a port
    # concatenates one way throughout); the readers' calls then confirm it, block by block
    in_scope, read_by = module_pattern(_repeats(scope)), module_pattern(_repeats(reader or ""))
    ka, kb = wm.side_keys()
    shapes = _shapes(report.a)
    ndim: dict[str, int] = {}
    for name, dims in shapes.items():
        mod = name.rpartition(".")[0]
        ndim[mod] = max(ndim.get(mod, 0), len(dims))
    entries: list[dict[str, Any]] = []
    for p in wm.pairs:
        mod_a = p.a.rpartition(".")[0]
        shape = shapes.get(p.a)
        if (shape is None or p.a_part is not None or p.b_part is not None or not p.transfer or p.how == "reshape"
                or not (not scope or _within_pattern(mod_a, in_scope) or (reader and read_by.match(mod_a)))):
            continue
        canon = tuple(shape[i] for i in p.a_perm) if p.a_perm is not None else tuple(shape)
        axis = 0 if len(canon) == 1 else 1
        # a map's channels are read by the call that received them (a norm after it reads its own output)
        if channels and not (read_by.match(mod_a) or (axis == 1 and _within_pattern(mod_a, read_by))):
            continue
        if len(canon) <= axis or canon[axis] != n or (axis == 0 and ndim.get(mod_a, 1) > 1):
            continue  # not a reader of the value's axis (a bias sits on a matrix's output side)
        if p.how == "name":  # one name on both sides: a checkpoint both read as it is, so another order is a bug
            return []
        for j, i in enumerate(order):
            entries.append({ka: p.a, kb: p.b, f"{ka}_part": [i * c, (i + 1) * c], f"{kb}_part": [j * c, (j + 1) * c],
                            "axis": axis})
    if not entries:
        return []
    said = (f"the {k} chunks of {n} features {ka} concatenates as {list(range(k))} taken in {kb}'s order {order} "
            f"by the weights that read them in {scope or '<root>'}")
    doc = {"version": 1, "weights": entries, "note": f"written by padiff-trace run: {said}"}
    readers = (_repeats(reader),) if reader and any(_within_pattern(e[ka].rpartition(".")[0], read_by)
                                                     for e in entries) else ()
    return [Alternative(doc, said, _pattern(scope), readers=readers, all_readers=True)]


def _packed_producers(wm: Any, scope: str, size: int) -> bool:
    """Whether modules inside ``scope`` (A's) are paired with parts of the other side's rows of
    ``size`` each (two branches against one fused convolution): that pairing says which chunk of
    their concatenation is which, and the values taking them in another order is the block's code,
    not a convention."""
    return any(p.axis == 0 and (p.a_part is not None or p.b_part is not None)
               and (part := p.b_part or p.a_part) is not None and part[1] - part[0] == size
               and (not scope or p.a == scope or p.a.startswith(scope + ".")) for p in wm.pairs)


_MAX_READS = 256  # recorded values read to tell whether a chunk is one of them


def _chunks_paired(report: Report, value: np.ndarray, k: int) -> bool:
    """Whether a chunk of ``value``'s channels (axis 1, ``k`` chunks) is what a call paired with
    the other side's received or returned (a branch's output, a block's input): the pairing of
    that call says which chunk is which, and the value holding them in another order is the code
    that concatenates them, not a convention. Chunks computed inline (pooled statistics) are
    nobody's output, and their order is each port's own."""
    t = report.pairs
    if not len(t) or value.shape[1] % k:
        return False
    c = value.shape[1] // k
    chunks = [value[:, i * c:(i + 1) * c].astype(np.float64) for i in range(k)]
    shape = chunks[0].shape
    tol = 1e-6 * max(float(np.abs(value).max()), 1e-30)
    cp = t.col("cp")
    rows = np.flatnonzero(t.role_mask("input", "output") & (cp >= 0)).tolist()
    reads = 0
    for i in rows:
        rec = t.record(i, 0)
        if tuple(getattr(rec, "shape", ())) != shape or not getattr(rec, "has_data", False):
            continue
        reads += 1
        if reads > _MAX_READS:
            return False
        try:
            got = np.asarray(rec.read(), dtype=np.float64)
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if any(float(np.abs(got - ch).max()) <= tol for ch in chunks):
            return True
    return False


def _repeats(module: str) -> str:
    """``module``'s path with every repeat a wildcard: block indices and numbered stages
    (``layer1.0.cbam`` -> ``*.*.cbam``)."""
    return ".".join("*" if _NUMBERED.fullmatch(c) else c for c in module.split(".")) if module else module


def _within_pattern(module: str, rx: re.Pattern[str]) -> bool:
    """Whether ``module`` or a module around it matches ``rx`` (a path pattern: every block)."""
    parts = module.split(".")
    return any(rx.match(".".join(parts[:i])) for i in range(1, len(parts) + 1))

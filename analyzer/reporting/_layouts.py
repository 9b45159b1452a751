"""Other pairings to try where two ports hold one weight in layouts only the values tell apart.

**Rotary pairs.**
Rotary embeddings rotate pairs of each head's features: one library pairs feature j with
j + head_dim/2 (``rotate_half``), another 2j with 2j + 1 (complex numbers). Both are correct,
and a port that copies q and k projections as they are computes another attention: the rows
of q and k must be permuted in every head (``ROTARY_TABLES``). Names and shapes cannot say so;
the values can: when a run diverges in an attention none of whose calls agrees,
``rotary_alternatives`` gives the mapping documents that permute them (each direction), and
``run`` keeps the one a call of the attention confirms (``_pairings.confirmed``).

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

from typing import TYPE_CHECKING, Any

import numpy as np

from padiff_trace.matching import ROLE_SYNONYMS, ROTARY_ROLES, ROTARY_TABLES, is_known_type

from ._pairings import Alternative, _parent, _pattern, _shapes, packed_in_order

if TYPE_CHECKING:
    from ._report import Report

__all__ = ["chunk_order", "concat_alternatives", "grouped_alternatives", "patch_alternatives", "rotary_alternatives",
           "square_alternatives"]

_MAX_CHUNKS = 8  # concatenations of more parts than this are not looked for
_MAX_TABLE = 1 << 20  # a rotary table handed to an attention is read when it is no larger
_SAME = 1e-4  # chunks this close (relative to the largest magnitude) hold the same values


def _head_dim(view: Any) -> int | None:
    """A head's feature count as a recorded rotary table says it (``ROTARY_TABLES``)."""
    if not view.weights:
        return None
    for r in view.weights[min(view.weights)].values():
        per = ROTARY_TABLES.get(r.position)
        if per is not None and r.shape:
            return int(r.shape[-1]) * per
    return None


def _table_input(r: Any) -> int | None:
    """A head's feature count as a rotary table handed to a call says it, or None: a complex
    table of unit entries (``cis(t * f)``: ``head_dim / 2`` of them), or a cosine table whose
    first position is all ones (``cos(0 * f)``), ``head_dim`` wide when it repeats its halves
    (``cat(freqs, freqs)``), ``head_dim / 2`` wide otherwise."""
    if not r.shape or len(r.shape) < 2 or r.numel > _MAX_TABLE or not r.has_data:
        return None
    if not (r.dtype.startswith("complex") or r.dtype.startswith("float")):
        return None
    x = np.asarray(r.read())
    last = int(x.shape[-1])
    if np.iscomplexobj(x):
        return 2 * last if x.size and np.allclose(np.abs(x), 1.0, atol=1e-5) else None
    rows = x.reshape(-1, x.shape[-2], last)[0]  # positions x features of the first batch entry
    if rows.shape[0] < 2 or not np.allclose(rows[0], 1.0, atol=1e-6) or np.abs(x).max() > 1.0 + 1e-6 or np.allclose(rows, 1.0):
        return None
    repeated = last % 2 == 0 and np.allclose(rows[:, : last // 2], rows[:, last // 2:], atol=1e-6)
    return last if repeated else 2 * last


def _head_dim_handed(view: Any, modules: set[str]) -> int | None:
    """A head's feature count from a rotary table one of ``modules`` (attentions) receives as an
    argument in its first call (``freqs_cis``, HF's ``position_embeddings`` cosines), where no
    module holds it as a buffer."""
    for c in view.calls.get(view.steps[0] if view.steps else 0, ()):
        if c.module not in modules:
            continue
        for r in c.tensor_inputs():
            hd = _table_input(r)
            if hd:
                return hd
        modules = modules - {c.module}
        if not modules:
            break
    return None


def rotary_alternatives(report: Report) -> list[Alternative]:
    """Mapping documents (``{"weights": [...]}``) pairing every q and k projection (``ROTARY_ROLES``)
    the weight map paired whole with its rows permuted in every head: A's half-split layout
    against B's interleaved one, then the other way. Empty without a divergence inside an
    attention holding them, or without a rotary table to give the head size."""
    d, wm = report.first_divergence, report.weight_map
    if d is None or wm is None:
        return []
    roles = {n for g in ROLE_SYNONYMS if g & set(ROTARY_ROLES) for n in g}
    hd = _head_dim(report.a) or _head_dim(report.b)
    if not hd:  # no table held as a buffer: one handed to the attention holding q and k
        owners = [(p.a.rpartition(".")[0], p.b.rpartition(".")[0]) for p in wm.pairs
                  if p.a.rpartition(".")[0].rpartition(".")[2].lower() in roles]
        hd = (_head_dim_handed(report.a, {_parent(a) for a, _ in owners})
              or _head_dim_handed(report.b, {_parent(b) for _, b in owners} | {b for _, b in owners}))
    if not hd or hd % 2:
        return []
    out: list[Alternative] = []
    for head in (hd, 2 * hd, 4 * hd):  # the table's width is a head's, or a part of it (partial rotary)
        out += _rotary_docs(report, wm, roles, head, hd)
    return out


def _rotary_docs(report: Report, wm: Any, roles: set[str], hd: int, rot: int) -> list[Alternative]:
    """``rotary_alternatives`` for heads of ``hd`` features whose first ``rot`` are rotated (the
    rest pass through: partial rotary, GPT-NeoX's ``rotary_pct``); empty where the q and k rows
    are no whole heads of that size."""
    d = report.first_divergence
    assert d is not None
    ka, kb = wm.side_keys()
    ma = d.located.a.call.module if d.located else d.pair.a.module
    shapes = _shapes(report.a)
    docs: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])
    holders: list[str] = []
    for p in wm.pairs:
        mod_a, _, local = p.a.rpartition(".")
        mod_b = p.b.rpartition(".")[0]
        shape = shapes.get(p.a)
        if _head_vector(p, shape, hd, roles):  # a per-head norm of q or k: its features follow the rows
            for entries, a_half in zip(docs, (True, False)):
                e = {ka: p.a, kb: p.b, f"{ka}_blocks": rotary_rows(hd, hd, a_half, rot)}
                if p.b_part is not None:
                    e.update({f"{kb}_part": list(p.b_part), "axis": p.axis or 0})
                entries.append(e)
            continue
        # B's share of a fused q|k|v (its rows cut once, along the output axis) against A's whole q or k
        packed = p.b_part is not None and p.b_groups == 1 and p.axis == 0 and p.a_blocks is None
        if (shape is None or p.a_part is not None or (p.b_part is not None and not packed) or not p.transfer
                or local not in ("weight", "bias") or p.how == "reshape" or len(shape) != {"weight": 2, "bias": 1}.get(local)
                or mod_a.rpartition(".")[2].lower() not in roles
                or (not packed and mod_b.rpartition(".")[2].lower() not in roles)):
            continue
        rows = shape[p.a_perm[0]] if p.a_perm is not None else shape[0]
        if rows % hd:
            return []  # not whole heads of this size: another model than the table says
        holder = _pattern(_parent(mod_a))
        if holder not in holders:
            holders.append(holder)
        if packed or rot < hd:  # A's rows reordered head by head into B's rotary layout (then into B's share)
            for entries, a_half in zip(docs, (True, False)):
                e = {ka: p.a, kb: p.b, f"{ka}_blocks": rotary_rows(rows, hd, a_half, rot)}
                if packed:
                    assert p.b_part is not None
                    e.update({f"{kb}_part": list(p.b_part), "axis": 0})
                entries.append(e)
            continue
        for entries, (half, inter) in zip(docs, ((ka, kb), (kb, ka))):
            for k, (lo, hi) in enumerate(((0, hd // 2), (hd // 2, hd))):
                entries.append({ka: p.a, kb: p.b, f"{half}_part": [lo, hi], f"{half}_groups": rows // hd,
                                f"{inter}_part": [k, k + 1], f"{inter}_groups": rows // 2})
    if not holders or not docs[0] or not any(_pattern(ma).startswith(h) or h.startswith(_pattern(ma)) for h in holders):
        return []
    # the other parts of a fused tensor whose q and k rows are reordered (its v) keep their pairing
    fused = {e[kb] for e in docs[0] if f"{ka}_blocks" in e}
    taken = {(e[ka], e[kb]) for e in docs[0]}
    rest = [e for e in wm.to_json()["weights"] if e.get(kb) in fused and (e.get(ka), e.get(kb)) not in taken]
    for entries in docs:
        entries.extend({k: v for k, v in e.items() if k not in ("how", "confidence", "convert")} for e in rest)
    out = []
    part = f" (the first {rot} of {hd} features)" if rot < hd else ""
    for entries, (half, inter) in zip(docs, ((ka, kb), (kb, ka))):
        said = f"q and k rows paired in every head as {half}'s rotary pairs (j, j + {rot // 2}) against {inter}'s (2j, 2j + 1){part}"
        out.append(Alternative({"version": 1, "weights": entries, "note": f"written by padiff-trace run: {said}"},
                               said, holders[0]))
    return out


def _head_vector(p: Any, shape: tuple[int, ...] | None, hd: int, roles: set[str]) -> bool:
    """Whether pair ``p`` is a vector of one head's features (``[hd]``: a per-head LayerNorm of q
    or k, OLMo-2's and Qwen-3's ``q_norm``) in a module whose path says q or k on either side,
    not a projection of its own (those are permuted as rows)."""
    if (shape != (hd,) or not p.transfer or p.a_part is not None or p.b_groups != 1 or p.a_blocks is not None
            or p.a.rpartition(".")[2] not in ("weight", "bias")):
        return False
    mods = (p.a.rpartition(".")[0], p.b.rpartition(".")[0])
    if any(m.rpartition(".")[2].lower() in roles for m in mods):
        return False
    return any(_says(m, roles) for m in mods)


def _says(module: str, roles: set[str]) -> bool:
    """Whether a module of ``module``'s path inside its block is named for one of ``roles``, as a
    whole or by a word (``q_layernorm``, ``k_norm``)."""
    words = module.split(".")
    while words and words[-1].isdigit():  # the norm's index in a list of them (one per head)
        words.pop()
    for word in reversed(words):
        if word.isdigit():
            return False
        if word.lower() in roles or any(w in roles for w in word.lower().split("_")):
            return True
    return False


def rotary_rows(rows: int, hd: int, from_half: bool, rot: int | None = None) -> list[int]:
    """The order of ``rows`` rows (heads of ``hd`` features) that takes the half-split rotary layout
    (feature j paired with j + rot/2) to the interleaved one (2j with 2j + 1), or, ``from_half``
    False, the interleaved one to the half-split one: row ``i`` of the result is row ``order[i]``.
    ``rot``: the features of a head that are rotated, its first (default: all); the rest keep
    their place."""
    rot = hd if rot is None else rot
    half = rot // 2
    order = list(range(rows))
    for h in range(rows // hd):
        for j in range(half):
            for k in range(2):
                inter, split = h * hd + 2 * j + k, h * hd + k * half + j
                if from_half:
                    order[inter] = split
                else:
                    order[split] = inter
    return order


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
        tried = 0
        for hd in _HEAD_SIZES:
            g = first[0] // hd if first[0] % hd == 0 else 0
            if g < 2 or tried == _GROUP_TRIES:
                continue
            entries = []
            for ps in tensors:  # the weight and the bias of the module, in every block
                sizes = [hi - lo for lo, hi in ((p.b_part if side == kb else p.a_part) for p in ps)]
                if any(n % g for n in sizes):
                    continue
                lo = 0
                for p, n in zip(ps, sizes):
                    entries.append({ka: p.a, kb: p.b, f"{side}_part": [lo, lo + n // g], f"{side}_groups": g,
                                    "axis": p.axis})
                    lo += n // g
            if not entries:
                continue
            tried += 1
            said = f"{pattern} packed head by head, {g} groups of {'|'.join(str(n // g) for n in first)} rows"
            # judged by the calls of the module around A's projection (the attention)
            holder = _pattern(_parent(_parent(tensors[0][0].a)))
            out.append(Alternative({"version": 1, "weights": entries, "note": f"written by padiff-trace run: {said}"},
                                   said, holder, unnamed=True))
    return out


def _near(module: str, scope: str) -> bool:
    """``module`` is ``scope``, inside it, or its parent's child (a projection beside the call named)."""
    return module == scope or module.startswith(scope + ".") or scope.startswith(module.rpartition(".")[0] + ".")


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
    order = chunk_order(np.asarray(ra.read()), np.asarray(rb.read()))
    if order is None:
        return []
    n, k = int(ra.shape[-1]), len(order)
    c = n // k
    scope = d.located.a.call.module if d.located else ra.module
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
                or not (not scope or mod_a == scope or mod_a.startswith(scope + "."))):
            continue
        canon = tuple(shape[i] for i in p.a_perm) if p.a_perm is not None else tuple(shape)
        axis = 0 if len(canon) == 1 else 1
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
    return [Alternative(doc, said, _pattern(scope))]

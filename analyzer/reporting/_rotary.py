"""Rotary pairs: q and k rows in the other port's rotary layout.

Rotary embeddings rotate pairs of each head's features: one library pairs feature j with
j + head_dim/2 (``rotate_half``), another 2j with 2j + 1 (complex numbers). Both are correct,
and a port that copies q and k projections as they are computes another attention: the rows
of q and k must be permuted in every head (``ROTARY_TABLES``). Names and shapes cannot say so;
the values can: when a run diverges in an attention none of whose calls agrees,
``rotary_alternatives`` gives the mapping documents that permute them (each direction), and
``run`` keeps the one a call of the attention confirms (``_pairings.confirmed``).
Where the table is narrower than a head (partial rotary: GPT-NeoX's ``rotary_pct``), only a
head's first features are permuted, and the per-head norms of q and k with them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from padiff_trace import Kind
from padiff_trace.matching import ROLE_SYNONYMS, ROTARY_ROLES, ROTARY_TABLES

from ._pairings import Alternative, _parent, _pattern, _shapes

if TYPE_CHECKING:
    from ._report import Report

__all__ = ["rotary_alternatives", "rotary_rows"]

_MAX_TABLE = 1 << 20  # a rotary table handed to an attention is read when it is no larger


def _head_dim(view: Any, by_values: bool = False) -> int | None:
    """A head's feature count as a recorded rotary table says it: by its name (``ROTARY_TABLES``),
    or (``by_values``) a buffer whatever its name that holds a cosine table (``_table_input``:
    ``rope_cos``), not a mask of zeros and ones."""
    if not view.weights:
        return None
    for r in view.weights[min(view.weights)].values():
        if not by_values:
            per = ROTARY_TABLES.get(r.position)
            if per is not None and r.shape:
                return int(r.shape[-1]) * per
        elif r.kind == Kind.BUFFER and (hd := _table_input(r)) and not np.isin(np.asarray(r.read()), (0.0, 1.0)).all():
            return hd
    return None


def _table_input(r: Any) -> int | None:
    """A head's feature count as a rotary table handed to a call says it, or None: a complex
    table of unit entries (``cis(t * f)``: ``head_dim / 2`` of them), or a cosine table whose
    first position is all ones (``cos(0 * f)``), ``head_dim`` wide when it repeats its halves
    (``cat(freqs, freqs)``) or each entry (``repeat(freqs, 2)``: interleaved pairs), ``head_dim / 2``
    wide otherwise."""
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
    repeated = last % 2 == 0 and (np.allclose(rows[:, : last // 2], rows[:, last // 2:], atol=1e-6)
                                  or np.allclose(rows[:, 0::2], rows[:, 1::2], atol=1e-6))  # each entry twice in a row
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
              or _head_dim_handed(report.b, {_parent(b) for _, b in owners} | {b for _, b in owners})
              or _head_dim(report.a, by_values=True) or _head_dim(report.b, by_values=True))
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
    a_orders: dict[str, list[list[int]]] = {}  # A's fused q|k|v -> its rows' order in each direction
    for p in wm.pairs:
        mod_a, _, local = p.a.rpartition(".")
        mod_b, _, local_b = p.b.rpartition(".")
        shape = shapes.get(p.a)
        if _head_vector(p, shape, hd, roles):  # a per-head norm of q or k: its features follow the rows
            for entries, a_half in zip(docs, (True, False)):
                e = {ka: p.a, kb: p.b, f"{ka}_blocks": rotary_rows(hd, hd, a_half, rot)}
                if p.b_part is not None:
                    e.update({f"{kb}_part": list(p.b_part), "axis": p.axis or 0})
                entries.append(e)
            continue
        # a side's share of a fused q|k|v (its rows cut once, along the output axis) against the
        # other side's whole q or k; a projection is a module named for its role (``q_proj.weight``)
        # or a tensor of the attention named so (EVA's ``q_bias``)
        packed_b = p.b_part is not None and p.b_groups == 1 and p.axis == 0 and p.a_blocks is None and not p.indexed
        packed_a = p.a_part is not None and p.a_groups == 1 and p.axis == 0 and p.a_blocks is None and not p.indexed
        kind_a, kind_b = _projection(mod_a, local, roles), _projection(mod_b, local_b, roles)
        kind = kind_b if packed_a else kind_a  # the whole q or k says what the tensor is
        if (shape is None or (p.a_part is not None and not packed_a) or (p.b_part is not None and not packed_b)
                or (packed_a and packed_b) or not p.transfer or p.how == "reshape" or kind is None
                or len(shape) != {"weight": 2, "bias": 1}[kind] or (not packed_a and not packed_b and kind_b is None)):
            continue
        if packed_a:
            assert p.a_part is not None
            lo, hi = p.a_part
            rows = hi - lo
        else:
            rows = shape[p.a_perm[0]] if p.a_perm is not None else shape[0]
        if rows % hd:
            return []  # not whole heads of this size: another model than the table says
        holder = _pattern(mod_a if kind_a is not None and local != kind_a else _parent(mod_a))
        if holder not in holders:
            holders.append(holder)
        if packed_a:  # A's fused tensor's rows reordered in this part (one order per tensor, every part)
            full = shape[p.a_perm[0]] if p.a_perm is not None else shape[0]
            orders = a_orders.setdefault(p.a, [list(range(full)), list(range(full))])
            for order, a_half in zip(orders, (True, False)):
                order[lo:hi] = [lo + i for i in rotary_rows(rows, hd, a_half, rot)]
            for entries, order in zip(docs, orders):
                entries.append({ka: p.a, kb: p.b, f"{ka}_blocks": order, f"{ka}_part": [lo, hi], "axis": 0})
            continue
        if packed_b or rot < hd:  # A's rows reordered head by head into B's rotary layout (then into B's share)
            for entries, a_half in zip(docs, (True, False)):
                e = {ka: p.a, kb: p.b, f"{ka}_blocks": rotary_rows(rows, hd, a_half, rot)}
                if packed_b:
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
    fused = {e[kb] for e in docs[0] if f"{ka}_blocks" in e and f"{ka}_part" not in e}
    taken = {(e[ka], e[kb]) for e in docs[0]}
    rest = [e for e in wm.to_json()["weights"] if (e.get(kb) in fused or e.get(ka) in a_orders)
            and (e.get(ka), e.get(kb)) not in taken]
    for n, entries in enumerate(docs):
        for e in rest:
            kept = {k: v for k, v in e.items() if k not in ("how", "confidence", "convert")}
            if e.get(ka) in a_orders:  # the same order of A's rows for every part of it
                kept[f"{ka}_blocks"] = a_orders[e[ka]][n]
            entries.append(kept)
    out = []
    part = f" (the first {rot} of {hd} features)" if rot < hd else ""
    for entries, (half, inter) in zip(docs, ((ka, kb), (kb, ka))):
        said = f"q and k rows paired in every head as {half}'s rotary pairs (j, j + {rot // 2}) against {inter}'s (2j, 2j + 1){part}"
        out.append(Alternative({"version": 1, "weights": entries, "note": f"written by padiff-trace run: {said}"},
                               said, holders[0]))
    return out


def _projection(module: str, local: str, roles: set[str]) -> str | None:
    """"weight" or "bias" where tensor ``local`` of ``module`` is a q or k projection's: the
    module is named for the role (``q_proj.weight``), or the tensor itself is, beside its
    attention's other tensors (``q_bias``, ``k_proj_weight``); None otherwise."""
    if local in ("weight", "bias"):
        return local if module.rpartition(".")[2].lower() in roles else None
    words = local.lower().split("_")
    if len(words) >= 2 and words[-1] in ("weight", "bias") and words[0] in roles:
        return words[-1]
    return None


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

"""Feature columns in another order: a mapping to try where the values tell.

One port orders a positional encoding per frequency
(``[x, sin 2^0 x, cos 2^0 x, ...]``), the other per function (``[x, sin of every band, cos of
every band]``), or concatenates parts of unequal widths the other way round: no equal chunks,
but every column of one side's value is one column of the other's. Where a matrix reads such a
value (its input differs, and ``column_order`` finds each of the other side's columns once
among its own), ``column_alternatives`` gives the mapping document that pairs the input columns
of every such matrix run by run; ``run`` keeps it when a call of one of those matrices agrees
with its input read in that order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ._pairings import Alternative, _pattern, _shapes, confirmed

if TYPE_CHECKING:
    from ._report import Report

__all__ = ["column_alternatives", "column_order"]

_SAME = 1e-4  # columns this close (relative to the largest magnitude) hold the same values
_COLUMN_LIMIT = 1 << 22  # elements: larger values are not searched column by column
_MIN_ROWS = 4  # fewer rows than this: columns are too short to be told apart by their values (a batch of
# two series of three channels holds six; each column must also be found exactly once)


def column_order(a: np.ndarray, b: np.ndarray) -> list[int] | None:
    """``order`` with ``b``'s column j (last axis) ``a``'s column ``order[j]``: each column of
    ``b`` found once among ``a``'s takes that column; the others (found nowhere, more than once,
    or constant: a part a difference upstream changed) take ``a``'s columns left over, keeping
    their order (a block of columns moved whole). None unless some column was found elsewhere
    than in its place (too few rows, other shapes, two columns found at one place)."""
    n = a.shape[-1] if a.ndim else 0
    if a.shape != b.shape or n < 2 or a.size > _COLUMN_LIMIT or a.size // n < _MIN_ROWS:
        return None
    xa, xb = a.reshape(-1, n).astype(np.float64), b.reshape(-1, n).astype(np.float64)
    tol = _SAME * max(float(np.abs(xa).max()), 1e-30)
    probe = np.random.default_rng(0).standard_normal(xa.shape[0])  # one number per column selects candidates
    pa, pb = probe @ xa, probe @ xb
    wide = tol * float(np.abs(probe).sum())
    idx = np.argsort(pa, kind="stable")
    sa = pa[idx]
    found: dict[int, int] = {}
    for j in range(n):
        col = xb[:, j]
        if float(col.max() - col.min()) <= tol:
            continue  # a constant column is found anywhere: it says nothing
        lo, hi = np.searchsorted(sa, pb[j] - wide), np.searchsorted(sa, pb[j] + wide, side="right")
        hits = [int(i) for i in idx[lo:hi] if float(np.abs(xa[:, i] - col).max()) <= tol]
        if len(hits) == 1:
            found[j] = hits[0]
    if all(i == j for j, i in found.items()) or len(set(found.values())) != len(found):
        return None
    order = np.empty(n, dtype=np.int64)
    for j, i in found.items():
        order[j] = i
    rest_b = [j for j in range(n) if j not in found]
    rest_a = sorted(set(range(n)) - set(found.values()))
    order[rest_b] = rest_a
    return order.tolist()


def _runs(order: list[int]) -> list[tuple[int, int, int]]:
    """(b start, a start, length) of the maximal runs in which ``order`` counts up by one."""
    runs: list[tuple[int, int, int]] = []
    for j, i in enumerate(order):
        if runs and runs[-1][1] + runs[-1][2] == i and runs[-1][0] + runs[-1][2] == j:
            b0, a0, k = runs[-1]
            runs[-1] = (b0, a0, k + 1)
        else:
            runs.append((j, i, 1))
    return runs


def column_alternatives(report: Report) -> list[Alternative]:
    """The mapping document pairing the input columns of every matrix whose call received a
    value that differs from the other side's only by the order of its columns (``column_order``),
    run by run; empty where there is none, where such a matrix has one full name on both sides (a
    checkpoint both read as it is: another order is a bug), or where a call of a matrix numbered
    alike in another block agrees as the names paired it (a concatenation in another order in one
    block only is a bug there). Its readers are those
    matrices' modules: a call of one that agrees once its input is read in that order confirms it."""
    d, wm = report.first_divergence, report.weight_map
    if d is None or wm is None:
        return []
    t = report.pairs
    cp = t.col("cp")
    rows = np.flatnonzero(t.role_mask("input") & ~t.passed & (cp >= 0) & (t.col("step") == d.pair.step))
    orders: dict[str, list[int]] = {}
    partner: dict[str, str] = {}  # A module -> the B module its call pairs with
    for i in rows.tolist():
        module = t.call_pairs[int(cp[i])].a.module
        if module in orders:
            continue
        partner[module] = t.call_pairs[int(cp[i])].b.module
        r = t[i]
        ra, rb = r.a, r.b
        if not (hasattr(ra, "read") and hasattr(rb, "read")) or len(ra.shape) < 2 or tuple(ra.shape) != tuple(rb.shape):
            continue
        if ra.numel > _COLUMN_LIMIT:
            continue
        order = column_order(np.asarray(ra.read()), np.asarray(rb.read()))
        if order is not None:
            orders[module] = order
    if not orders:
        return []
    ka, kb = wm.side_keys()
    shapes = _shapes(report.a)
    entries: list[dict[str, Any]] = []
    readers: list[str] = []
    for p in wm.pairs:
        mod_a = p.a.rpartition(".")[0]
        order = orders.get(mod_a)
        shape = shapes.get(p.a)
        if order is None or shape is None or p.a_part is not None or p.b_part is not None or not p.transfer or p.how == "reshape":
            continue
        canon = tuple(shape[i] for i in p.a_perm) if p.a_perm is not None else tuple(shape)
        if len(canon) != 2 or canon[1] != len(order):
            continue  # not a matrix reading the value's columns
        if p.how == "name":
            return []
        readers.append(mod_a)
        for b0, a0, k in _runs(order):
            entries.append({ka: p.a, kb: p.b, f"{ka}_part": [a0, a0 + k], f"{kb}_part": [b0, b0 + k], "axis": 1})
    for mod_a, order in orders.items():  # one layer over a concatenation against one layer per part
        found = _split_entries(wm.pairs, mod_a, partner[mod_a], order, (ka, kb))
        if found:
            entries.extend(found)
            readers.append(mod_a)
    if not entries:
        return []
    for m in readers:  # a call of a matrix numbered alike (another block) agreeing as named: a bug in this block
        if _pattern(m) != m and confirmed(report, _pattern(m))[0]:
            return []
    said = (f"the input columns of {', '.join(readers)} taken in {kb}'s order (each column of {kb}'s input is one "
            f"column of {ka}'s)")
    doc = {"version": 1, "weights": entries, "note": f"written by padiff-trace run: {said}"}
    scope = d.located.a.call.module if d.located else d.pair.a.module
    return [Alternative(doc, said, _pattern(scope), readers=tuple(readers))]


def _split_entries(pairs: list[Any], mod_a: str, mod_b: str, order: list[int], keys: tuple[str, str]) -> list[dict[str, Any]]:
    """The mapping entries pairing a layer's input columns with the parts of the other side's
    layers, one per input (``alignment._joined``: their inputs joined in the order of their shares
    of the whole), where the joined input read in ``order`` is the whole's (the whole's column j
    the joined column ``order[j]``): the shares run by run. The whole is B's where the call pair's
    B module holds a weight cut along its input axis, else A's; empty unless the shares tile the
    whole's ``len(order)`` columns."""
    ka, kb = keys
    for whole_side in (1, 0):
        mod = mod_b if whole_side else mod_a
        cut = [p for p in pairs if p.axis == 1 and p.transfer and not p.indexed and (p.b_part if whole_side else p.a_part) is not None
               and (p.a_part if whole_side else p.b_part) is None
               and (p.b if whole_side else p.a).rpartition(".")[0] == mod]
        if len({p.b if whole_side else p.a for p in cut}) != 1:
            continue
        spans = sorted((((p.b_part if whole_side else p.a_part), p) for p in cut), key=lambda x: x[0])
        tiled = spans[0][0][0] == 0 and spans[-1][0][1] == len(order) and all(
            x[0][1] == y[0][0] for x, y in zip(spans, spans[1:]))
        if len(spans) < 2 or not tiled:
            return []
        runs: list[list[Any]] = []  # [pair, A column, B column, length]
        for j, i in enumerate(order):
            # B's whole reads the joined A column i; B's joined column j is a part's, reading A's whole column i
            p, local = _part_of(spans, i if whole_side else j)
            a_col, b_col = (local, j) if whole_side else (i, local)
            last = runs[-1] if runs else None
            if last is not None and last[0] is p and last[1] + last[3] == a_col and last[2] + last[3] == b_col:
                last[3] += 1
            else:
                runs.append([p, a_col, b_col, 1])
        width = {id(p): hi - lo for (lo, hi), p in spans}
        out = []
        for p, a0, b0, k in runs:  # a part's tensor taken whole is named without a part (``alignment._joined``)
            e: dict[str, Any] = {ka: p.a, kb: p.b, "axis": 1}
            if not (whole_side and a0 == 0 and k == width[id(p)]):
                e[f"{ka}_part"] = [a0, a0 + k]
            if whole_side or not (b0 == 0 and k == width[id(p)]):
                e[f"{kb}_part"] = [b0, b0 + k]
            out.append(e)
        return out
    return []


def _part_of(spans: list[tuple[tuple[int, int], Any]], c: int) -> tuple[Any, int]:
    """The pair whose share ``[lo, hi)`` holds column ``c``, and c's place in it (the shares tile the axis)."""
    for (lo, hi), p in spans:
        if lo <= c < hi:
            return p, c - lo
    raise ValueError(f"column {c} lies in no share")

"""Precision policy: the dtype each module and op computed in, A against B.

Under autocast (AMP) a module's output is in the dtype its op computed in (a Linear under
bfloat16 autocast returns bfloat16; a LayerNorm float32), so the recorded output dtype *is*
the precision the call ran at. ``precision_diff`` scans the paired module outputs, op
outputs and losses for float dtypes that differ between A and B (bfloat16 vs float32: one
side ran that op under autocast, the other did not), in execution order. The diagnosis says
so before any numeric divergence (``precision_difference``), and when the first divergence
is at or after the first such pair, that the precision difference explains it
(``precision_explains``): one side rounds to 8 bits of mantissa where the other keeps 24.

Half precision nobody declared is judged at the precision around it. When neither trace was
recorded under autocast, one side holds bfloat16/float16 records and the other none, and that
side computes in float32 (or better) for most of its float records (``half_undeclared``), its
half-precision outputs are a difference of the port (an autocast region, a ``.half()`` the other
side lacks): their pairs are judged as float32 pairs (``judged_dtypes``), so the call that drops
to half precision is the first divergence, named with its dtypes. Two runs that both hold
half-precision records, or one recorded under ``--autocast``, keep being judged at the less
precise side's precision.

Column work only: the dtypes come from the traces' index (string ids), never one record at
a time, so a million pairs cost a few numpy passes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..alignment._calls import TraceView
    from ._pairtable import PairTable

__all__ = ["FLOAT_RANK", "PrecisionDiff", "half_undeclared", "judged_dtypes", "pair_eps", "precision_diff"]

# float dtypes from the least to the most precise (machine epsilon: 7.8e-3, 9.8e-4, 1.2e-7, 2.2e-16)
FLOAT_RANK = {"bfloat16": 0, "float16": 1, "float32": 2, "complex64": 2, "float64": 3, "complex128": 3}
_EPS_BY_RANK = {0: 2.0**-7, 1: 2.0**-10, 2: 2.0**-23, 3: 2.0**-52}
_ROLES = ("output", "op_output", "loss")  # what a call computed (inputs are what an earlier one did)
_LISTED = 5  # dtype-differing pairs listed by name in report.json
_WORKING = 0.5  # "computes in float32 almost everywhere": more than this share of its float records


@dataclass
class PrecisionDiff:
    """The paired outputs whose float dtypes differ (``count``; the first ``_LISTED`` by name,
    in execution order) and each side's float dtypes and autocast setting."""

    count: int = 0
    compared: int = 0  # paired float outputs looked at
    pairs: list[dict[str, Any]] = field(default_factory=list)
    dtypes: dict[str, list[str]] = field(default_factory=dict)  # side -> float dtypes of its outputs, least precise first
    autocast: dict[str, Any] = field(default_factory=dict)  # side -> the trace's meta "autocast" (None: none)
    undeclared: bool = False  # half precision nobody declared: judged at float32 (``half_undeclared``)

    @property
    def first_index(self) -> int | None:
        return int(self.pairs[0]["index"]) if self.pairs else None

    @property
    def lowest(self) -> str | None:
        """The least precise float dtype either side computed an output in."""
        every = [d for ds in self.dtypes.values() for d in ds]
        return min(every, key=FLOAT_RANK.__getitem__) if every else None

    def as_dict(self) -> dict[str, Any]:
        return {"count": self.count, "compared": self.compared, "first": self.pairs[0] if self.pairs else None,
                "pairs": self.pairs, "dtypes": self.dtypes, "autocast": self.autocast,
                "undeclared": self.undeclared}

    def sentences(self, divergence_index: int | None) -> list[tuple[str, str, bool]]:
        """(code, text, hint): the difference, then whether it explains the first divergence."""
        out: list[tuple[str, str, bool]] = []
        for side in "ab":
            ac = self.autocast.get(side)
            want = ac.get("dtype") if isinstance(ac, dict) else None
            if want and self.dtypes.get(side) and want not in self.dtypes[side]:
                why = ("the recorder found the framework's autocast off on that device" if ac and ac.get("effective") is False
                       else "autocast did nothing there, or every module's last op promoted its result back")
                out.append(("autocast_no_effect", f"{side.upper()} was recorded under autocast {want}, but none of its "
                            f"recorded outputs is {want} ({why})", False))
        if not self.count:
            return out
        p = self.pairs[0]
        more = f"; {self.count} of {self.compared} paired outputs differ in dtype" if self.count > 1 else ""
        out.append(("precision_difference",
                    f"precision difference: {p['what']} computed in {p['a_dtype']} in A and {p['b_dtype']} in B "
                    f"(step {p['step']}){more}{_policy(self.autocast)}", False))
        first = self.first_index
        if self.undeclared:
            half = p["a_dtype"] if FLOAT_RANK[p["a_dtype"]] < FLOAT_RANK[p["b_dtype"]] else p["b_dtype"]
            side = "A" if half == p["a_dtype"] else "B"
            out.append(("precision_undeclared",
                        f"neither run was recorded under autocast and both compute in float32 elsewhere: {side} "
                        f"computing {p['what']} in {half} is a difference of the port (an autocast region or a cast "
                        f"the other side lacks), judged at float32; record both sides with the same --autocast if "
                        "it is meant", False))
            return out
        if divergence_index is not None and first is not None and divergence_index >= first:
            low = min(p["a_dtype"], p["b_dtype"], key=FLOAT_RANK.__getitem__)
            out.append(("precision_explains",
                        f"the first divergence comes at or after {p['what']}, where A and B started computing in different "
                        f"dtypes: the {low} rounding explains it; record both sides with the same --autocast (or none) "
                        "to see whether a real difference remains", True))
        return out


def _policy(autocast: dict[str, Any]) -> str:
    def one(v: Any) -> str:
        return f"autocast {v.get('dtype')}" if isinstance(v, dict) and v.get("dtype") else "no autocast"

    a, b = one(autocast.get("a")), one(autocast.get("b"))
    return "" if a == b else f" (recorded with A: {a}, B: {b})"


def _floats(view: TraceView) -> np.ndarray:
    """FLOAT_RANK of every float record of ``view``'s trace."""
    ranks = _ranks(view, np.asarray(view.trace.table["dtype"], dtype=np.int64))
    return ranks[ranks >= 0]


def half_undeclared(a: TraceView, b: TraceView) -> str | None:
    """The side ("a"/"b") whose bfloat16/float16 records are a difference of the port, or None:
    neither trace was recorded under autocast, the other side holds no half-precision record,
    and this side computes in float32 or better almost everywhere (``_WORKING``)."""
    if a.trace.meta.get("autocast") or b.trace.meta.get("autocast"):
        return None
    ra, rb = _floats(a), _floats(b)
    for side, mine, other in (("a", ra, rb), ("b", rb, ra)):
        half = mine < FLOAT_RANK["float32"]
        if half.any() and not (other < FLOAT_RANK["float32"]).any() and float(np.mean(~half)) > _WORKING:
            return side
    return None


def judged_dtypes(dtype_a: str, dtype_b: str, undeclared: bool) -> tuple[str, str]:
    """The dtypes a pair is judged as: a bfloat16/float16 side paired with a float32 (or better)
    one is judged as float32 when nobody declared half precision (``half_undeclared``)."""
    ra, rb = FLOAT_RANK.get(dtype_a, -1), FLOAT_RANK.get(dtype_b, -1)
    if not undeclared or min(ra, rb) < 0 or max(ra, rb) < FLOAT_RANK["float32"]:
        return dtype_a, dtype_b
    return ("float32" if ra < 2 else dtype_a), ("float32" if rb < 2 else dtype_b)


def _dtype_ids(view: TraceView, seqs: np.ndarray) -> np.ndarray:
    """The dtype string id of each record sequence number (of this trace's index), -1 if absent."""
    table = view.trace.table
    all_seq = np.asarray(table["seq"], dtype=np.int64)
    order = np.argsort(all_seq, kind="stable")
    at = np.searchsorted(all_seq[order], seqs)
    at = np.minimum(at, max(len(order) - 1, 0))
    out = np.full(len(seqs), -1, dtype=np.int64)
    if not len(order):
        return out
    rows = order[at]
    hit = all_seq[rows] == seqs
    out[hit] = np.asarray(table["dtype"], dtype=np.int64)[rows[hit]]
    return out


def _ranks(view: TraceView, ids: np.ndarray) -> np.ndarray:
    """FLOAT_RANK of each dtype string id; -1 for what is not float (ints, bools, python values)."""
    strings = view.trace.strings
    lut = np.array([FLOAT_RANK.get(s, -1) for s in strings] or [-1], dtype=np.int64)
    return np.where(ids >= 0, lut[np.clip(ids, 0, len(lut) - 1)], -1)


def pair_eps(t: PairTable) -> np.ndarray:
    """Per row of ``t``: the machine epsilon of the less precise side's float dtype (float32's
    where neither side is float). What rounding-sized means for that pair: a bfloat16 output
    paired with a float32 one rounds at bfloat16."""
    if not len(t):
        return np.zeros(0)
    undeclared = half_undeclared(t.va, t.vb) is not None
    eps = np.array([_EPS_BY_RANK[0], _EPS_BY_RANK[1], _EPS_BY_RANK[2], _EPS_BY_RANK[3], _EPS_BY_RANK[2]])  # [-1]: not float
    ranks = [_ranks(view, _dtype_ids(view, np.asarray(t.col(col), dtype=np.int64)))
             for view, col in ((t.va, "seq_a"), (t.vb, "seq_b"))]
    if undeclared:  # half against float32, nobody declared it: rounding is float32's (``judged_dtypes``)
        lift = (np.minimum(*ranks) >= 0) & (np.maximum(*ranks) >= FLOAT_RANK["float32"])
        ranks = [np.where(lift, np.maximum(r, FLOAT_RANK["float32"]), r) for r in ranks]
    out = np.maximum(eps[ranks[0]], eps[ranks[1]])
    for r, recs in t.records.items():  # slices and views: their own dtypes
        dtypes = judged_dtypes(recs[0].dtype, recs[1].dtype, undeclared)
        out[r] = max(_EPS_BY_RANK[FLOAT_RANK.get(d, 2)] for d in dtypes)
    return out


def precision_diff(t: PairTable, a: TraceView, b: TraceView) -> PrecisionDiff:
    """See the module docstring."""
    out = PrecisionDiff(autocast={k: v.trace.meta.get("autocast") for k, v in (("a", a), ("b", b))},
                        undeclared=half_undeclared(a, b) is not None)
    if not len(t):
        return out
    rows = np.flatnonzero(t.role_mask(*_ROLES))
    ids = [_dtype_ids(v, np.asarray(t.col(c)[rows], dtype=np.int64)) for v, c in ((a, "seq_a"), (b, "seq_b"))]
    for r in t.records:  # a slice or view stands in for its record: its own dtype
        i = int(np.searchsorted(rows, r))
        if i < len(rows) and rows[i] == r:
            for k, view in enumerate((a, b)):
                rec, strings = t.records[r][k], view.trace.strings
                ids[k][i] = strings.index(rec.dtype) if rec.dtype in strings else -1
    ranks = [_ranks(v, x) for v, x in zip((a, b), ids)]
    floats = (ranks[0] >= 0) & (ranks[1] >= 0)
    names = [np.asarray(v.trace.strings + [""], dtype=object) for v in (a, b)]
    da, db = names[0][ids[0]], names[1][ids[1]]  # -1 -> ""
    differ = floats & (ranks[0] != ranks[1])  # complex64 against float32 is one precision (a complex rotary)
    out.compared = int(floats.sum())
    out.count = int(differ.sum())
    for name, rank, d in (("a", ranks[0], da), ("b", ranks[1], db)):
        ds = {str(x) for x in np.unique(d[rank >= 0])}
        out.dtypes[name] = sorted(ds, key=FLOAT_RANK.__getitem__)
    for k in np.flatnonzero(differ)[:_LISTED].tolist():
        p = t[int(rows[k])]
        out.pairs.append({"index": p.index, "role": p.role, "step": p.step, "what": _what(p),
                          "a": p.a.name, "b": p.b.name, "a_dtype": str(da[k]), "b_dtype": str(db[k])})
    return out


def _what(p: Any) -> str:
    """A readable name of the pair: a module call's output, an op inside a module, the loss."""
    if p.role == "loss":
        return "the loss"
    if p.role == "op_output":
        return f"op {p.a.module_type} inside {p.a.module or '<root>'}"
    cp = p.call_pair
    label = cp.a.label if cp is not None else p.a.name
    return f"the output of {label} [{p.a.module_type}]"

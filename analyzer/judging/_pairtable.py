"""Pair results stored as columns, so a report's memory does not grow ~2 KB per pair.

While judging, each pair is a mutable ``PairDraft``; ``PairTable.append`` packs it into
typed columns (role, step, both records' sequence numbers, verdict, every metric of
``METRICS``, the noise estimate, the argmax) plus small side tables for what is rare or
variable (a reason, a referee class, a record that is a slice or view rather than a trace
record, stats-only differences). ``finish`` sorts the table into execution order.
``PairResult`` is a view of one row (two slots: table and row), built on access; its
records are read back from the traces by sequence number. A million pairs take ~150 MB
(sequence numbers and call ids are int32 until one needs more) instead of ~2.5 GB, and
analyses that scan every pair (counts, the first failure, the amplifiers) read the columns
with numpy.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from padiff_trace import Record

from ..alignment._records import RecordLike
from ._metric_table import METRICS, Metrics
from ._noise import noise_ratio
from ._pairview import (
    F_DAMAGED,
    F_METRICS,
    F_NOISE,
    F_PASSED,
    F_STATS_ONLY,
    F_WITHIN,
    PAIR_SECTIONS,
    PairResult,
    PairSubset,
    pair_section,
    record_dict,
)
from ._tolerance import Tolerance

if TYPE_CHECKING:
    from ..alignment._calls import TraceView
    from ..alignment._pairing import CallPair

__all__ = ["PAIR_SECTIONS", "ROLES", "PairDraft", "PairResult", "PairSubset", "PairTable", "pair_section", "record_dict"]

# the roles a pair can have, in the order their codes start (a new role gets the next code)
ROLES = (
    "model_input", "input", "output", "grad_output", "grad_input", "param", "buffer", "param_grad", "probe", "loss",
    "op_input", "op_output", "op_grad_output",
)
_WIDENS = ("seq_a", "seq_b", "call_a", "arg_at")
_INT32_MAX = 2**31 - 1
_NOISE_KEYS = ("expected_rms", "diff_rms")  # stored; "ratio" is their quotient (``noise_ratio``)


@dataclass(eq=False)
class PairDraft:
    """One pair while it is being judged (``_judge.judge`` fills it): the plan item's records,
    the permutation A's axes were compared under, the tolerance, metrics and verdict."""

    role: str
    step: int
    a: RecordLike
    b: RecordLike
    perm: tuple[int, ...] | None
    call_pair: CallPair | None
    tol: Tolerance
    metrics: Metrics | None
    passed: bool
    reason: str
    order: tuple[int, int, int]
    noise: dict[str, float | bool] | None = None
    referee: dict[str, float | str | None] | None = None  # the float64 referee's class and numbers
    damaged: bool = False  # its stored bytes failed their checksum: not compared


class PairTable(Sequence["PairResult"]):
    """Every pair of a comparison, in execution order after ``finish``."""

    def __init__(self, va: TraceView, vb: TraceView) -> None:
        self.va, self.vb = va, vb
        self.metric_names = tuple(METRICS)
        self._ints = frozenset(n for n, d in METRICS.items() if d.fmt == "d")
        # counts other than ``n`` (NaN and Inf counts) are nearly always 0: kept by row only when
        # one is not (``counts``), so the dense matrix holds the other metrics (96 bytes a pair, not 152)
        self._sparse = tuple(n for n in self.metric_names if n in self._ints and n != "n")
        self._dense = tuple(n for n in self.metric_names if n not in self._sparse and n != "n")
        self._dense_at = {n: j for j, n in enumerate(self._dense)}
        self.counts: dict[int, tuple[float, ...]] = {}
        self.roles = list(ROLES)
        self._role_code = {r: i for i, r in enumerate(ROLES)}
        self.call_pairs: list[CallPair] = []
        self.tolerances: list[Tolerance] = []
        self._tol_index: dict[Tolerance, int] = {}
        self._a: dict[str, array[Any]] = {k: array(t) for k, t in (
            ("role", "B"), ("step", "i"), ("prank", "B"), ("seq_a", "i"), ("seq_b", "i"), ("call_a", "i"), ("cp", "i"),
            ("tol", "i"), ("flags", "B"), ("n", "d"), ("values", "d"), ("noise", "d"), ("arg_at", "i"), ("arg_len", "B"), ("args", "q"),
        )}
        # rare or variable-size data, keyed by row
        self.reasons: dict[int, str] = {}
        self.referees: dict[int, dict[str, Any]] = {}
        self.records: dict[int, tuple[RecordLike, RecordLike]] = {}  # a record that is not the trace's own (a slice, a view)
        self.perms: dict[int, tuple[int, ...]] = {}
        self.extras: dict[int, dict[str, float]] = {}
        self.uncomparable: dict[int, str] = {}
        self._narrow = True  # the columns of _WIDENS are int32 until a value needs more
        self._n = 0
        self._cols: dict[str, np.ndarray] | None = None

    # ------------------------------------------------------------ building
    def append(self, d: PairDraft) -> None:
        """Pack one judged pair (before ``finish``)."""
        c, i = self._a, self._n
        code = self._role_code.get(d.role)
        if code is None:
            code = self._role_code[d.role] = len(self.roles)
            self.roles.append(d.role)
        c["role"].append(code)
        c["step"].append(d.step)
        c["prank"].append(d.order[1])
        sa, sb, ca = int(d.a.seq), int(d.b.seq), int(d.a.call)
        if self._narrow and max(abs(sa), abs(sb), abs(ca), len(c["args"]) + 256) >= _INT32_MAX:
            self._widen()
        c["seq_a"].append(sa)
        c["seq_b"].append(sb)
        c["call_a"].append(ca)
        c["cp"].append(self._intern_cp(d.call_pair))
        c["tol"].append(self._intern_tol(d.tol))
        if not (_own(d.a, self.va) and _own(d.b, self.vb)):
            self.records[i] = (d.a, d.b)
        flags = F_PASSED if d.passed else 0
        if d.damaged:
            flags |= F_DAMAGED
        m = d.metrics
        if m is not None:
            flags |= F_METRICS | (F_STATS_ONLY if m.stats_only else 0)
            vals = m.values
            c["values"].extend([float(vals.get(n, math.nan)) for n in self._dense])
            c["n"].append(float(vals.get("n", math.nan)))
            sparse = tuple(float(vals.get(n, 0)) for n in self._sparse)
            if any(sparse):
                self.counts[i] = sparse
            c["arg_at"].append(len(c["args"]))
            c["arg_len"].append(len(m.argmax))
            c["args"].extend(m.argmax)
            if m.extra:
                self.extras[i] = m.extra
            if m.uncomparable:
                self.uncomparable[i] = m.uncomparable
        else:
            c["values"].extend([math.nan] * len(self._dense))
            c["n"].append(math.nan)
            c["arg_at"].append(0)
            c["arg_len"].append(0)
        if d.noise is not None:
            flags |= F_NOISE | (F_WITHIN if d.noise["within"] else 0)
            c["noise"].extend([float(d.noise[k]) for k in _NOISE_KEYS])
        else:
            c["noise"].extend([math.nan] * len(_NOISE_KEYS))
        c["flags"].append(flags)
        if d.reason:
            self.reasons[i] = d.reason
        if d.referee is not None:
            self.referees[i] = d.referee
        if d.perm is not None:
            self.perms[i] = d.perm
        self._n += 1

    def _widen(self) -> None:
        """Sequence numbers, call ids and argmax offsets as int64 from now on (they start as int32)."""
        for k in _WIDENS:
            self._a[k] = array("q", self._a[k])
        self._narrow = False

    def _intern_cp(self, cp: CallPair | None) -> int:
        if cp is None:
            return -1
        k = cp.slot
        if not (0 <= k < len(self.call_pairs) and self.call_pairs[k] is cp):  # new here
            k = cp.slot = len(self.call_pairs)
            self.call_pairs.append(cp)
        return k

    def _intern_tol(self, t: Tolerance) -> int:
        k = self._tol_index.get(t)
        if k is None:
            k = self._tol_index[t] = len(self.tolerances)
            self.tolerances.append(t)
        return k

    def finish(self) -> PairTable:
        """Turn the columns into arrays sorted by (step, phase, A's sequence number)."""
        n, nm = self._n, len(self._dense)
        a = self._a

        def raw(k: str) -> np.ndarray:
            v = a[k]
            return np.frombuffer(v, dtype=v.typecode) if len(v) else np.zeros(0, v.typecode)

        order = np.lexsort((raw("seq_a"), raw("prank"), raw("step"))) if n else np.zeros(0, np.intp)
        cols: dict[str, np.ndarray] = {}
        for k in list(a):  # one column at a time, each buffer freed once sorted: the peak is the table plus a column
            col = raw(k)
            if k in ("values", "noise"):  # matrices: permuted in place, a column at a time (no second matrix)
                col = col.reshape(n, nm if k == "values" else len(_NOISE_KEYS))
                for j in range(col.shape[1]):
                    col[:, j] = col[order, j]
                cols[k] = col  # a view of the array's buffer, which it keeps
            else:
                cols[k] = col.copy() if k == "args" else np.ascontiguousarray(col[order])
            del col
            del a[k]
        self._cols = cols
        self._a = {}
        self._tol_index = {}  # only needed while appending
        if n and not np.array_equal(order, np.arange(n)):
            new = np.empty(n, np.intp)
            new[order] = np.arange(n)
            sides: tuple[dict[int, Any], ...] = (
                self.reasons, self.referees, self.records, self.perms, self.extras, self.uncomparable, self.counts,
            )
            for side in sides:
                moved = {int(new[k]): v for k, v in side.items()}
                side.clear()
                side.update(moved)
        return self

    # ------------------------------------------------------------ columns
    def col(self, name: str) -> np.ndarray:
        """A column (after ``finish``): role, step, prank, seq_a, seq_b, call_a, cp, tol, flags."""
        assert self._cols is not None, "PairTable.finish() first"
        return self._cols[name]

    @property
    def passed(self) -> np.ndarray:
        return (self.col("flags") & F_PASSED) != 0

    @property
    def damaged(self) -> np.ndarray:
        """Rows not compared because their stored bytes failed their checksums: neither
        passing nor a difference (the verdict is INCOMPLETE, never DIVERGED, for them)."""
        return (self.col("flags") & F_DAMAGED) != 0

    @property
    def failing(self) -> np.ndarray:
        """Rows that are real differences: not passed, not damaged."""
        return ~self.passed & ~self.damaged

    @property
    def has_metrics(self) -> np.ndarray:
        """Rows with a ``Metrics`` (possibly of an uncomparable pair: no values)."""
        return (self.col("flags") & F_METRICS) != 0

    @property
    def measured(self) -> np.ndarray:
        """Rows with metrics that hold values (compared, or from statistics)."""
        m = (self.col("flags") & F_METRICS) != 0
        if self.uncomparable:
            m[list(self.uncomparable)] = False
        return m

    @property
    def within_noise(self) -> np.ndarray:
        return (self.col("flags") & F_WITHIN) != 0

    def metric(self, name: str) -> np.ndarray:
        """One metric for every row (NaN where the pair has no metrics)."""
        j = self._dense_at.get(name)
        if j is not None:
            return self.col("values")[:, j]
        if name not in self.metric_names:
            raise KeyError(name)
        if name == "n":
            return self.col("n")
        out = np.where(self.has_metrics, 0.0, math.nan)
        k = self._sparse.index(name)
        for i, vals in self.counts.items():
            out[i] = vals[k]
        return out

    def role_mask(self, *roles: str) -> np.ndarray:
        codes = [self._role_code[r] for r in roles if r in self._role_code]
        return np.isin(self.col("role"), codes)

    def role_counts(self) -> dict[str, tuple[int, int]]:
        """role -> (pairs, failing), in order of first appearance."""
        roles, fails = self.col("role"), self.failing
        codes, first = np.unique(roles, return_index=True)
        out = {}
        for code in codes[np.argsort(first)]:
            sel = roles == code
            out[self.roles[int(code)]] = (int(sel.sum()), int((sel & fails).sum()))
        return out

    def set_verdict(self, i: int, passed: bool, reason: str) -> None:
        flags = self.col("flags")
        flags[i] = (flags[i] | F_PASSED) if passed else (flags[i] & (0xFF ^ F_PASSED))
        if reason:
            self.reasons[i] = reason
        else:
            self.reasons.pop(i, None)

    def subset(self, rows: np.ndarray) -> PairSubset:
        """The rows given by a boolean mask or an index array, as a sequence of pairs."""
        idx = np.flatnonzero(rows) if rows.dtype == bool else np.asarray(rows, dtype=np.intp)
        return PairSubset(self, idx)

    # ------------------------------------------------------------ sequence
    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> PairResult: ...
    @overload
    def __getitem__(self, i: slice) -> list[PairResult]: ...
    def __getitem__(self, i: int | slice) -> PairResult | list[PairResult]:
        if isinstance(i, slice):
            return [PairResult(self, k) for k in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        return PairResult(self, i)

    def __iter__(self) -> Iterator[PairResult]:
        return (PairResult(self, i) for i in range(self._n))

    # ------------------------------------------------------------ one row
    def record(self, i: int, side: int) -> RecordLike:
        own = self.records.get(i)
        if own is not None:
            return own[side]
        view = self.va if side == 0 else self.vb
        return view.trace[int(self.col("seq_b" if side else "seq_a")[i])]

    def metrics_of(self, i: int) -> Metrics | None:
        c = self._cols
        assert c is not None
        flags = int(c["flags"][i])
        if not flags & F_METRICS:
            return None
        ints = self._ints
        dense = dict(zip(self._dense, c["values"][i].tolist()))
        dense["n"] = float(c["n"][i])
        dense.update(zip(self._sparse, self.counts.get(i, (0.0,) * len(self._sparse))))
        values = {n: (int(v) if n in ints and math.isfinite(v) else v) for n, v in ((k, dense[k]) for k in self.metric_names)}
        at, ln = int(c["arg_at"][i]), int(c["arg_len"][i])
        argmax = tuple(c["args"][at : at + ln].tolist())
        return Metrics(values, argmax, bool(flags & F_STATS_ONLY), dict(self.extras.get(i, {})), self.uncomparable.get(i, ""))

    def noise_of(self, i: int) -> dict[str, Any] | None:
        c = self._cols
        assert c is not None
        flags = int(c["flags"][i])
        if not flags & F_NOISE:
            return None
        out: dict[str, Any] = dict(zip(_NOISE_KEYS, c["noise"][i].tolist()))
        out["ratio"] = noise_ratio(out["diff_rms"], out["expected_rms"])
        out["within"] = bool(flags & F_WITHIN)
        return out


def _own(r: RecordLike, view: TraceView) -> bool:
    """A record of the view's trace, read back the same by its sequence number."""
    return type(r) is Record and r.trace is view.trace

"""Views of a ``PairTable``'s rows: ``PairResult`` (one pair, read on access) and
``PairSubset`` (some rows, such as the failing ones), and how a pair is written in report.json.

A view reads its table through ``PairRows``, the few columns and side tables it needs: the
table hands views out, so it imports them, never the other way round."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, overload

import numpy as np

from ..alignment._records import RecordLike
from ._metric_table import Metrics
from ._tolerance import Tolerance

if TYPE_CHECKING:
    from ..alignment._pairing import CallPair

__all__ = ["PAIR_SECTIONS", "PairResult", "PairRows", "PairSubset", "pair_section", "record_dict"]

# flag bits of a row
F_PASSED, F_METRICS, F_STATS_ONLY, F_NOISE, F_WITHIN, F_DAMAGED = 1, 2, 4, 8, 16, 32


class PairRows(Protocol):
    """What a view reads of the table it belongs to (``PairTable`` is one)."""

    roles: list[str]  # role code -> name
    call_pairs: list[CallPair]  # call pair slot -> pair
    tolerances: list[Tolerance]  # tolerance slot -> tolerance
    perms: dict[int, tuple[int, ...]]  # row -> A's axis permutation
    reasons: dict[int, str]
    referees: dict[int, dict[str, Any]]

    @property
    def passed(self) -> np.ndarray: ...

    def col(self, name: str) -> np.ndarray: ...

    def record(self, i: int, side: int) -> RecordLike: ...

    def metrics_of(self, i: int) -> Metrics | None: ...

    def noise_of(self, i: int) -> dict[str, Any] | None: ...


class PairSubset(Sequence["PairResult"]):
    """Some rows of a ``PairTable`` (``Report.failed``), in table order."""

    def __init__(self, table: PairRows, rows: np.ndarray) -> None:
        self.table, self.rows = table, rows

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, i: int) -> PairResult: ...
    @overload
    def __getitem__(self, i: slice) -> list[PairResult]: ...
    def __getitem__(self, i: int | slice) -> PairResult | list[PairResult]:
        if isinstance(i, slice):
            return [PairResult(self.table, int(k)) for k in self.rows[i]]
        return PairResult(self.table, int(self.rows[i]))

    def __iter__(self) -> Iterator[PairResult]:
        return (PairResult(self.table, int(k)) for k in self.rows)


class PairResult:
    """One compared pair: a view of a ``PairTable`` row (records and metrics are built on access)."""

    __slots__ = ("_t", "index")

    def __init__(self, table: PairRows, index: int) -> None:
        self._t, self.index = table, index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PairResult) and other._t is self._t and other.index == self.index

    def __hash__(self) -> int:
        return hash((id(self._t), self.index))

    def __repr__(self) -> str:
        return f"PairResult({self.index}, {self.role}, {self.a.name} / {self.b.name}, passed={self.passed})"

    @property
    def role(self) -> str:
        return self._t.roles[int(self._t.col("role")[self.index])]

    @property
    def step(self) -> int:
        return int(self._t.col("step")[self.index])

    @property
    def a(self) -> RecordLike:
        return self._t.record(self.index, 0)

    @property
    def b(self) -> RecordLike:
        return self._t.record(self.index, 1)

    @property
    def perm(self) -> tuple[int, ...] | None:
        return self._t.perms.get(self.index)

    @property
    def call_pair(self) -> CallPair | None:
        k = int(self._t.col("cp")[self.index])
        return self._t.call_pairs[k] if k >= 0 else None

    @property
    def tol(self) -> Tolerance:
        return self._t.tolerances[int(self._t.col("tol")[self.index])]

    @property
    def metrics(self) -> Metrics | None:
        return self._t.metrics_of(self.index)

    @property
    def passed(self) -> bool:
        return bool(self._t.col("flags")[self.index] & F_PASSED)

    @property
    def reason(self) -> str:
        return self._t.reasons.get(self.index, "")

    @property
    def order(self) -> tuple[int, int, int]:
        t, i = self._t, self.index
        return (int(t.col("step")[i]), int(t.col("prank")[i]), int(t.col("seq_a")[i]))

    @property
    def noise(self) -> dict[str, Any] | None:
        return self._t.noise_of(self.index)

    @property
    def referee(self) -> dict[str, Any] | None:
        return self._t.referees.get(self.index)

    @property
    def cls(self) -> str | None:
        """rounding / A deviates / B deviates / model difference (None without a referee)."""
        ref = self.referee
        return ref["class"] if ref else None

    def as_dict(self) -> dict[str, Any]:
        a, b, m, tol, perm = self.a, self.b, self.metrics, self.tol, self.perm
        return {
            "index": self.index,
            "role": self.role,
            "step": self.step,
            "passed": self.passed,
            "reason": self.reason,
            "a": record_dict(a),
            "b": record_dict(b),
            "layout": list(perm) if perm else None,
            "tolerance": {"mode": tol.mode, "atol": tol.atol, "rtol": tol.rtol, "exact": tol.exact},
            "metrics": m.as_dict() if m else None,
            "class": self.cls,
            "noise": self.noise,
            "referee": self.referee,
        }


PAIR_SECTIONS = ("pairs", "weights", "param_grads")  # report.json's per-pair lists, in this order


def pair_section(role: str) -> str:
    """Which per-pair list of report.json a pair of this role is in."""
    return "weights" if role in ("param", "buffer") else "param_grads" if role == "param_grad" else "pairs"


def record_dict(r: RecordLike) -> dict[str, Any]:
    return {
        "seq": r.seq,
        "module": r.module,
        "module_type": r.module_type,
        "call_index": r.call_index,
        "position": r.position,
        "kind": r.kind.label,
        "dtype": r.dtype,
        "shape": list(r.shape),
        "has_data": r.has_data,
        "stack": [list(f) for f in r.stack],
    }

"""Every metric a report shows, as a table: name, formula over a pair's sums, format, description.

``METRICS`` is the one place a metric is declared. A formula takes the finished sums of a
pair (``_sums.py``: ``SUM_FIELDS`` by name) and returns a number. The renderers
iterate the table: report.json carries every metric; ``show`` says which other renderers
list it (``txt``: a line per pair in report.txt, ``csv``: a column of pairs.csv, ``html``: a
column of the HTML table, ``summary``: the terminal's metrics line, under ``short``).
Adding a metric is one row here, or at run time ``METRICS[name] = MetricDef(...)``.

Side B is the reference: relative quantities divide by |b|.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._sums import empty_sums, sums_dict

__all__ = ["METRICS", "MetricDef", "Metrics", "derive", "empty_values", "shown"]

Sums = Mapping[str, float]
_EVERYWHERE = frozenset(("txt", "csv", "html"))


@dataclass(frozen=True)
class MetricDef:
    name: str
    formula: Callable[[Sums], float]
    fmt: str  # format spec for text ("d" for counts)
    description: str
    label: str = ""  # in report.txt and the HTML table (default: the name)
    short: str = ""  # on the terminal's metrics line
    show: frozenset[str] = _EVERYWHERE  # besides report.json, which has every metric

    @property
    def title(self) -> str:
        return self.label or self.name

    def text(self, value: Any) -> str:
        """The value formatted for text (``fmt``); '-' when missing."""
        if value is None:
            return "-"
        try:
            return format(int(value) if self.fmt == "d" else value, self.fmt)
        except (TypeError, ValueError, OverflowError):
            return str(value)


def _n(s: Sums) -> float:
    return max(s["n"], 1.0)


def _cosine(s: Sums) -> float:
    na, nb = math.sqrt(s["aa"]), math.sqrt(s["bb"])
    if na == 0.0 and nb == 0.0:
        return 1.0
    if na == 0.0 or nb == 0.0:
        return 0.0
    return s["ab"] / (na * nb)


def _rel_l2(s: Sums) -> float:
    nb = math.sqrt(s["bb"])
    return math.sqrt(s["dd"]) / nb if nb > 0 else (0.0 if s["dd"] == 0 else math.inf)


def _per(key: str, of: str) -> Callable[[Sums], float]:
    """``key / of``; NaN where nothing was measured (not a float pair, or no element)."""
    return lambda s: s[key] / s[of] if s[of] > 0 else math.nan


def _ulp_max(s: Sums) -> float:
    return s["ulp_max"] if s["ulp_n"] > 0 else math.nan


def _count(key: str) -> Callable[[Sums], float]:
    return lambda s: int(s[key])


def _rows(*defs: MetricDef) -> dict[str, MetricDef]:
    return {d.name: d for d in defs}


_TEXT = frozenset(("txt", "csv", "html", "summary"))
METRICS: dict[str, MetricDef] = _rows(
    MetricDef("n", _count("n"), "d", "elements compared", show=frozenset()),
    MetricDef("max_abs", lambda s: max(s["max_abs"], 0.0), ".6g", "largest |a-b| (argmax: where)", "max diff",
              "max|a-b|", _TEXT),
    MetricDef("mean_abs", lambda s: s["sum_abs"] / _n(s), ".6g", "mean |a-b|", "mean diff", "mean", _TEXT),
    MetricDef("max_rel", lambda s: max(s["max_rel"], 0.0), ".4g",
              "largest |a-b| / (|b| + tiny): a diagnostic, huge where b is exactly 0", show=frozenset(("csv",))),
    MetricDef("mean_rel", lambda s: s["sum_rel"] / _n(s), ".4g", "mean |a-b| / (|b| + tiny)", show=frozenset(("csv",))),
    MetricDef("cosine", _cosine, ".6f", "cosine similarity of a and b", "cosine", "cos",
              frozenset(("csv", "html", "summary"))),
    MetricDef("rel_l2", _rel_l2, ".4g", "relative L2 error ||a-b|| / ||b||", "rel L2", "rel-L2",
              frozenset(("csv", "html", "summary"))),
    MetricDef("frac_fail", lambda s: (s["fail"] + s["nan_mis"] + s["inf_mis"]) / _n(s), ".4g",
              "fraction of elements outside atol + rtol*|b| or non-finite on one side", show=frozenset(("csv",))),
    MetricDef("nan_mismatch", _count("nan_mis"), "d", "NaN on one side only", show=frozenset()),
    MetricDef("inf_mismatch", _count("inf_mis"), "d", "Inf on one side only (or of opposite sign)", show=frozenset()),
    MetricDef("mean_abs_b", lambda s: s["sum_abs_b"] / _n(s), ".4g", "mean |b|", show=frozenset()),
    MetricDef("norm_b", lambda s: math.sqrt(s["bb"]), ".4g", "||b||", show=frozenset()),
    MetricDef("nan_a", _count("nan_a"), "d", "NaN in A", show=frozenset()),
    MetricDef("nan_b", _count("nan_b"), "d", "NaN in B", show=frozenset()),
    MetricDef("inf_a", _count("inf_a"), "d", "Inf in A", show=frozenset()),
    MetricDef("inf_b", _count("inf_b"), "d", "Inf in B", show=frozenset()),
    MetricDef("ulp_max", _ulp_max, ".6g",
              "largest distance in units in the last place of the pair's format (the lower-precision dtype; "
              "NaN and one-sided Inf left out, +0 vs -0 is 0); NaN when not a float pair", "max ULP",
              show=frozenset(("csv", "html"))),
    MetricDef("ulp_mean", _per("ulp_sum", "ulp_n"), ".4g", "mean ULP distance", show=frozenset(("csv",))),
    MetricDef("identical", _per("same_bits", "bits_n"), ".6g",
              "share of elements bit-identical in the pair's format (same-bit NaNs count, +0 vs -0 does not); "
              "NaN when not a float pair", "identical", show=frozenset(("csv", "html"))),
)


def shown(where: str) -> list[MetricDef]:
    """The metrics a renderer lists (``txt``, ``csv``, ``html``, ``summary``), in table order."""
    return [d for d in METRICS.values() if where in d.show]


def derive(sums: Sums) -> dict[str, float]:
    """Every metric of the table from one pair's sums (NaN where a formula cannot be evaluated)."""
    out: dict[str, float] = {}
    for name, d in METRICS.items():
        try:
            out[name] = d.formula(sums)
        except (ArithmeticError, ValueError, KeyError):
            out[name] = math.nan
    return out


def empty_values() -> dict[str, float]:
    """Every metric of no elements (what a pair of empty tensors measures)."""
    return derive(sums_dict(empty_sums()))


@dataclass
class Metrics:
    """Errors of one pair: ``values`` holds every metric of ``METRICS`` (read them as
    attributes: ``m.rel_l2``). ``stats_only``: no element-wise comparison was made - the
    values come from the stored statistics, or, with ``uncomparable`` set (a dtype whose values
    cannot be decoded), there are none (the defaults of no elements)."""

    values: dict[str, float] = field(default_factory=empty_values)
    argmax: tuple[int, ...] = ()
    stats_only: bool = False
    extra: dict[str, float] = field(default_factory=dict)  # stats-only: |difference| of each statistic
    uncomparable: str = ""  # why the pair could not be compared ("" when it was)

    @classmethod
    def from_sums(cls, rec: np.ndarray, shape: tuple[int, ...]) -> Metrics:
        """The metrics of a finished sums record (``_sums.py``) of a tensor of ``shape``."""
        sums = sums_dict(rec)
        return cls(derive(sums), _unravel(int(sums["arg"]), shape) if sums["n"] and shape else ())

    def __getattr__(self, name: str) -> float:
        values = self.__dict__.get("values")
        if values is not None and name in values:
            return values[name]
        raise AttributeError(f"{type(self).__name__} has no metric {name!r}")

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {k: _jsonable(v) for k, v in self.values.items()}
        d["argmax"] = list(self.argmax)
        d["stats_only"] = self.stats_only
        if self.uncomparable:
            d["uncomparable"] = self.uncomparable
        if self.extra:
            d["stat_diffs"] = {k: _jsonable(v) for k, v in self.extra.items()}
        return d


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """``np.unravel_index`` for one index, in Python (a tenth of its cost per pair)."""
    out = []
    for dim in reversed(shape):
        flat, i = divmod(flat, dim) if dim else (flat, 0)
        out.append(i)
    return tuple(reversed(out))


def _jsonable(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v

"""How one record of a multi-rank trace is joined (``_join``): its identity across ranks and in
the single-process trace, the rule that fits (split information, replicated, sum, differing,
concat, left out; the order and meaning are in ``_join``'s docstring), and the joined values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from padiff_trace import Kind, Record, Summary, Trace
from padiff_trace.arrays import UNCAPTURED, decode, storage_dtype

__all__ = ["Key", "Plan", "decide", "index_records", "joined_values", "record_key"]

Key = tuple[Any, ...]
_SPLIT_KINDS = (Kind.PARAM, Kind.PARAM_GRAD)  # records named by a parameter: split information applies
_EPS = {"float64": 2.2e-16, "float32": 1.2e-7, "float16": 9.8e-4, "bfloat16": 7.8e-3, "complex64": 1.2e-7,
        "complex128": 2.2e-16}
_ROUNDING = 256  # "within rounding": |sum - like| <= _ROUNDING * eps * the largest magnitude of the values


def record_key(r: Record) -> Key:
    return (r.step, int(r.phase), int(r.kind), r.module, r.position, r.call_index)


def index_records(tr: Trace) -> dict[Key, Record]:
    """Every record by its identity; a repeated identity numbered by its order."""
    seen: dict[Key, int] = {}
    out: dict[Key, Record] = {}
    for r in tr.records():
        k = record_key(r)
        n = seen.get(k, 0)
        seen[k] = n + 1
        out[(*k, n)] = r
    return out


@dataclass(frozen=True)
class Plan:
    """One record's decision: the ranks' records (rank 0's gives the header) and how to join them."""

    recs: tuple[Record, ...]
    rule: str
    axis: int | None = None
    source: str = ""
    why: str = ""
    like_shape: tuple[int, ...] | None = None


def _split_of(split: dict[str, Any] | None) -> tuple[str, int | None, str] | None:
    """(rule, axis, source) from a rank's ``distributed.splits`` entry."""
    if not isinstance(split, dict):
        return None
    src = f"split info: {split.get('from', '?')}"
    axis = split.get("axis")
    if isinstance(axis, int) and not isinstance(axis, bool):
        return "concat", axis, src
    if split.get("partial"):
        return "sum", None, src
    if split.get("replicated"):
        return "replicated", None, src
    return None


def _concat_axis(shapes: Sequence[tuple[int, ...]], like: tuple[int, ...]) -> int | None:
    """The one axis on which the ranks' shapes differ from ``like``'s and add up to it; None."""
    if any(len(s) != len(like) for s in shapes):
        return None
    off = [d for d in range(len(like)) if any(s[d] != like[d] for s in shapes)]
    if len(off) != 1 or sum(s[off[0]] for s in shapes) != like[off[0]]:
        return None
    return off[0]


def _fits_axis(shapes: Sequence[tuple[int, ...]], axis: int, like: tuple[int, ...] | None) -> str:
    """Why the ranks' slices cannot be concatenated along ``axis`` (``""``: they can)."""
    nd = {len(s) for s in shapes}
    if len(nd) != 1 or not -len(shapes[0]) <= axis < len(shapes[0]):
        return f"axis {axis} is not an axis of every rank's shape"
    ax = axis % len(shapes[0])
    rest = {tuple(d for i, d in enumerate(s) if i != ax) for s in shapes}
    if len(rest) != 1:
        return f"the ranks' shapes differ off axis {axis}"
    if like is not None:
        whole = list(shapes[0])
        whole[ax] = sum(s[ax] for s in shapes)
        if tuple(whole) != like:
            return f"joined along axis {axis} they make {tuple(whole)}, the single process has {like}"
    return ""


def _shapes(recs: Sequence[Record]) -> str:
    return ", ".join(str(r.shape) for r in recs)


def _stored(r: Record) -> np.ndarray:
    return r.trace.read_stored(r).reshape(r.shape)


def _values(r: Record) -> np.ndarray:
    """Decoded values as float64 (complex128 for complex), shaped."""
    v = decode(_stored(r), r.dtype)
    return v.astype(np.complex128 if np.iscomplexobj(v) else np.float64)


def _numeric(dtype: str) -> bool:
    return dtype in _EPS or dtype.startswith(("int", "uint"))


def _judge_values(recs: Sequence[Record], like: Record | None) -> tuple[str, str, str]:
    """(rule, source, why) for records of equal shapes: replicated, sum or differing."""
    first = _stored(recs[0]).tobytes()
    if all(_stored(r).tobytes() == first for r in recs[1:]):
        return "replicated", "values", ""
    differ = "the ranks' values differ (not replicas)"
    if like is None:
        return "left out", "values", (f"{differ}, and with no single-process record of this identity slices, partial sums "
                                      "and replicas that differ cannot be told apart")
    if not like.has_data or not _numeric(recs[0].dtype):
        return "differing", "values", f"{differ}; the single process's values cannot test their sum: rank 0's kept"
    vals = [_values(r) for r in recs]
    total = np.sum(vals, axis=0)
    ref = _values(like)
    scale = max([float(np.max(np.abs(v), initial=0.0, where=np.isfinite(v))) for v in (*vals, ref)])
    err = _max_err(total, ref)
    tol = _ROUNDING * _EPS.get(recs[0].dtype, 0.0) * scale
    if err <= tol:
        return "sum", "values", f"{differ}: partial sums, the single process equals their sum within rounding (max |sum - it| {err:.3g})"
    nearest = min(_max_err(v, ref) for v in vals)
    if err < nearest:
        return "sum", "values", (f"{differ}: the single process is nearer their sum (max |sum - it| {err:.3g}, beyond "
                                 f"rounding {tol:.3g}) than any rank's ({nearest:.3g})")
    return "differing", "values", f"{differ}, and their sum is not the single process's: rank 0's kept"


def _max_err(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| over the elements finite in both; inf where one is finite and the other not."""
    fa, fb = np.isfinite(a), np.isfinite(b)
    if not np.array_equal(fa, fb):
        return float("inf")
    return float(np.max(np.abs(a - b), initial=0.0, where=fa))


def decide(recs: tuple[Record, ...], like: Record | None, split: dict[str, Any] | None) -> Plan:
    """The rule for one record (every rank has it)."""
    r0 = recs[0]
    like_shape = like.shape if like is not None and like.is_tensor else None
    plan = lambda rule, axis=None, source="", why="": Plan(recs, rule, axis, source, why, like_shape)  # noqa: E731
    if len({r.dtype for r in recs}) != 1:
        return plan("left out", why=f"the ranks recorded different dtypes ({', '.join(r.dtype for r in recs)})")
    shapes = [r.shape for r in recs]
    if not r0.is_tensor or r0.dtype.startswith(UNCAPTURED):  # nothing to join: as rank 0 recorded it
        if len(set(shapes)) == 1:
            return plan("replicated", source="not a tensor" if not r0.is_tensor else "no values recorded")
        return plan("left out", why=f"no values recorded, and the ranks' shapes differ ({_shapes(recs)})")
    data = all(r.has_data for r in recs)
    told = _split_of(split) if r0.kind in _SPLIT_KINDS else None
    if told is not None:
        rule, axis, src = told
        if rule == "concat" and axis is not None:
            bad = _fits_axis(shapes, axis, like_shape)
            if bad:
                return plan("left out", source=src, why=f"{bad} (rank shapes {_shapes(recs)})")
            if not data:
                return plan("left out", source=src, why="statistics only: no values to concatenate")
            return plan("concat", axis % len(shapes[0]), src)
        if len(set(shapes)) == 1 and (like_shape is None or like_shape == shapes[0]) and (data or rule == "replicated"):
            return plan(rule, source=src)
    if len(set(shapes)) == 1 and (like_shape is None or like_shape == shapes[0]):
        if not data:  # statistics only: the statistics must agree
            same = all(r.stats == r0.stats or _nan_equal(r.stats, r0.stats) for r in recs[1:])
            if same:
                return plan("replicated", source="statistics only")
            if like is None:
                return plan("left out", source="statistics only", why="the ranks' statistics differ, and there is no "
                            "single-process record of this identity")
            return plan("differing", source="statistics only", why="the ranks' statistics differ: rank 0's kept")
        rule, src, why = _judge_values(recs, like)
        return plan(rule, source=src, why=why)
    if like_shape is None:
        why = "no single-process record of this identity" if like is None else "the single process recorded no tensor here"
        return plan("left out", why=f"{why}, and the ranks' shapes differ ({_shapes(recs)}) with no split information")
    axis = _concat_axis(shapes, like_shape)
    if axis is None:
        return plan("left out", why=f"rank shapes {_shapes(recs)}, single process {like_shape}: neither equal nor "
                    "split on one axis whose sizes add up")
    if not data:
        return plan("left out", why="statistics only: no values to concatenate")
    return plan("concat", axis, "shapes")


def _nan_equal(a: dict[str, float], b: dict[str, float]) -> bool:
    return all(a[k] == b[k] or (a[k] != a[k] and b[k] != b[k]) for k in a)


def _to_stored(values: np.ndarray, dtype: str) -> np.ndarray:
    """Float64/complex/integer values as the storage of ``dtype`` (bfloat16 rounded to nearest even)."""
    if dtype == "bfloat16":
        bits = values.astype(np.float32).view(np.uint32)
        return ((bits + (((bits >> 16) & 1) + 0x7FFF)) >> 16).astype(np.uint16)
    return np.ascontiguousarray(values.astype(storage_dtype(dtype)))


def joined_values(p: Plan) -> tuple[np.ndarray | Summary | None, tuple[int, ...]]:
    """The joined data (as stored) of a record that is joined, and its shape."""
    r0 = p.recs[0]
    if not r0.is_tensor or r0.dtype.startswith(UNCAPTURED):
        return None, r0.shape
    if not r0.has_data:
        return Summary(r0.numel, tuple(r0.stats.values())), r0.shape
    if p.rule == "concat":
        assert p.axis is not None
        arr = np.ascontiguousarray(np.concatenate([_stored(r) for r in p.recs], axis=p.axis))
        return arr, arr.shape
    if p.rule == "sum":
        total = np.sum([_values(r) for r in p.recs], axis=0)
        return _to_stored(total, r0.dtype), r0.shape
    return np.ascontiguousarray(_stored(r0)), r0.shape  # replicated, differing: rank 0's



"""Judging one pair: a plan item in, a ``PairDraft`` (metrics, verdict, reason) out.

The verdict is one sequence of steps (``STEPS``), each either final (the pair is judged: the
steps after it do not run) or handing the pair on:

1. ``not_tensors``    a side that is not a tensor (a recorded Python value's type): passes
2. ``python_values``  a Python argument (a flag, a number) is never a numeric divergence
3. ``shapes``         the reconcilers (``_reconcile``) make the two shapes one; when none
                      fits, a shape mismatch fails (op records: not compared)
4. ``undecodable``    a dtype whose values cannot be decoded: not compared
5. ``empty``          no elements: passes
6. ``measured``       the pair's metrics (``measure``; pairs of the same stored bytes are
                      measured once); damaged bytes: listed as damaged, never a difference
7. ``tolerance``      the verdict of the tolerance's mode (``_tolerance.verdict``)
8. ``noise``          the noise floor and a float64 referee's class, which decide the
                      verdict unless tolerances were given
9. ``noted``          what the reconciler did is added to the reason
"""

from __future__ import annotations

import dataclasses
import math
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

from padiff_trace import DamagedRecordError, Record

from ..alignment._calls import phase_rank
from ..alignment._item import PlanItem
from ..alignment._records import RecordLike
from ..alignment._slices import RowSlice
from ._metric_table import Metrics
from ._metrics import measure, uncomparable
from ._noise import NoiseFloor, pair_noise
from ._pairtable import PairDraft
from ._precision import judged_dtypes
from ._reconcile import Reconciled, reconcile
from ._referee import Referee, classify
from ._tolerance import Tolerance, tolerance_for, verdict

__all__ = ["MEASURED_KEPT", "STEPS", "JudgeContext", "JudgeOptions", "Judging", "data_key", "judge"]

MEASURED_KEPT = 4096  # measured pairs kept for pairs of the same stored bytes
_PYTHON = "python"  # the device of a record that holds a Python value (a flag, a number), not a tensor
DataKey = tuple[object, ...]


class JudgeOptions(Protocol):
    """What judging reads of the comparison's options (``CompareOptions`` is one)."""

    @property
    def mode(self) -> str: ...
    @property
    def atol(self) -> float | None: ...
    @property
    def rtol(self) -> float | None: ...


@dataclass
class JudgeContext:
    """What judging shares across the pairs of one comparison: both traces' noise floors, the
    float64 referees (when given), the pairs measured lately and the measuring threads."""

    floor_a: NoiseFloor
    floor_b: NoiseFloor
    ref_a: Referee | None = None
    ref_b: Referee | None = None
    floor_64: tuple[NoiseFloor, NoiseFloor] | None = None
    two: bool = False
    info: dict[str, object] | None = None
    half_undeclared: bool = False  # half precision on one side only is judged as float32 (``_precision``)
    # shared bytes, measured once: the latest ``MEASURED_KEPT`` measured pairs (a tensor is
    # recorded again close by - one call's output is the next call's input), so it stays small
    measured: OrderedDict[DataKey, Metrics] = field(default_factory=OrderedDict)
    pool: ThreadPoolExecutor | None = None  # measuring threads, while comparing


@dataclass(eq=False)
class Judging:
    """One pair on its way through ``STEPS``: the plan item, the draft being filled, and what
    the steps found (the reconciled pair, its metrics)."""

    item: PlanItem
    draft: PairDraft
    options: JudgeOptions
    ctx: JudgeContext | None
    pair: Reconciled | None = None
    metrics: Metrics | None = None

    def reconciled(self) -> Reconciled:
        assert self.pair is not None, "the shapes step runs first"
        return self.pair

    def measured(self) -> Metrics:
        assert self.metrics is not None, "the measured step runs first"
        return self.metrics


Step = Callable[[Judging], bool]  # True: the verdict is final


def not_tensors(j: Judging) -> bool:
    if j.item.a.is_tensor and j.item.b.is_tensor:
        return False
    j.draft.passed, j.draft.reason = True, "not tensors"
    return True


def python_values(j: Judging) -> bool:
    """Python values passed as arguments (flags, numbers) are never numeric divergences: when
    they differ, the pair passes with both values named (a call whose output then differs is
    named with them); a float against a one-element tensor of the other side is compared."""
    a, b = j.item.a, j.item.b
    if _PYTHON not in (a.device, b.device) or _number_against_data(a, b):
        return False
    j.draft.passed, j.draft.reason = True, _python_value(a, b)
    return True


def _number_against_data(a: RecordLike, b: RecordLike) -> bool:
    """A Python float on one side against a one-element floating-point tensor on the other (a
    solver's time ``t`` passed as a number to one model's function, as a 0-d tensor to the
    other's): the other side computes with it as data, so it is compared as a number."""
    py, data = (a, b) if a.device == _PYTHON else (b, a)
    return (data.device != _PYTHON and py.dtype == "float64" and data.numel == 1 and py.numel == 1
            and data.dtype.startswith(("float", "bfloat")))


def _python_value(a: RecordLike, b: RecordLike) -> str:
    try:
        va, vb = a.read().tolist() if a.has_data else a.dtype, b.read().tolist() if b.has_data else b.dtype
    except (DamagedRecordError, ValueError, TypeError, OSError):
        return "a Python argument, not a tensor: not compared as a number"
    if va == vb:
        return "a Python argument, not a tensor"
    return f"a Python argument, not a tensor: A {va!r}, B {vb!r} (not compared as a number)"


def shapes(j: Judging) -> bool:
    """The first reconciler that fits (``_reconcile.RECONCILERS``); none: a shape mismatch."""
    item, d = j.item, j.draft
    j.pair = reconcile(item)
    if j.pair is not None:
        d.perm = j.pair.perm
        return False
    a, b = list(item.a.shape), list(item.b.shape)
    if item.role.startswith("op_"):
        # op records pair by position and producer: two libraries that decompose one
        # computation differently (a transpose inside the head split on one side, before
        # the matmul on the other) give pairs of different things; the modules around
        # them are compared, these are not
        d.passed = True
        d.reason = (f"not compared: shapes A {a} and B {b} cannot be the same "
                    "operand (the libraries decompose this computation differently)")
    else:
        d.reason = f"shape mismatch: A {a} vs B {b}"
    return True


def undecodable(j: Judging) -> bool:
    """Before the empty check: an uncaptured tensor holds no elements."""
    p = j.reconciled()
    why = uncomparable(p.a, p.b)
    if not why:
        return False
    d = j.draft
    d.metrics, d.passed, d.reason = Metrics(stats_only=True, uncomparable=why), True, f"not compared: {why}"
    return True


def empty(j: Judging) -> bool:
    if j.reconciled().a.numel != 0:
        return False
    j.draft.metrics, j.draft.passed = Metrics(), True
    return True


def measured(j: Judging) -> bool:
    """The pair's metrics; the latest pairs of stored bytes are kept (``data_key``), so a tensor
    recorded twice (an output, the next call's input) is measured once."""
    p, ctx, d = j.reconciled(), j.ctx, j.draft
    key = data_key(p.a, p.b, p.perm, d.tol) if p.stored else None
    cache = ctx.measured if ctx is not None else None
    m = cache.get(key) if cache is not None and key is not None else None
    if m is None:
        try:
            m = measure(p.a, p.b, d.tol, p.perm, ctx.pool if ctx is not None else None)
        except DamagedRecordError as exc:  # listed as damaged, never as a difference; the rest is compared
            d.reason, d.damaged = f"damaged: {exc}", True
            return True
        if cache is not None and key is not None:
            cache[key] = m
            if len(cache) > MEASURED_KEPT:
                cache.popitem(last=False)
    else:
        assert cache is not None and key is not None
        cache.move_to_end(key)
        m = dataclasses.replace(m, extra=dict(m.extra))
    d.metrics = j.metrics = m
    return False


def tolerance(j: Judging) -> bool:
    j.draft.passed, j.draft.reason = verdict(j.measured(), j.draft.tol)
    return False


_CLASS_REASON = {
    "A deviates": "A is {rel_err_a:.2e} from float64, B {rel_err_b:.2e}: A's fp32 result is off",
    "B deviates": "B is {rel_err_b:.2e} from float64, A {rel_err_a:.2e}: B is off",
    "model difference": "the float64 runs differ too (rms {err_64:.2e}): a model difference, not rounding",
}


def noise(j: Judging) -> bool:
    """Noise floor and referee class of a pair; without --atol/--rtol they decide the verdict."""
    m, ctx, res, o = j.measured(), j.ctx, j.draft, j.options
    if ctx is None or m.stats_only:
        return False
    diff = m.rel_l2 * m.norm_b / math.sqrt(m.n) if m.norm_b > 0 and m.n else m.max_abs  # rms(a - b)
    res.noise = pair_noise(res.a, res.b, ctx.floor_a, ctx.floor_b, diff)
    if ctx.ref_a is not None and ctx.ref_b is not None:
        res.referee = classify(
            res.a, res.b, res.perm, diff, ctx.ref_a, ctx.ref_b, ctx.floor_a, ctx.floor_b, ctx.floor_64, ctx.two
        )
    if o.atol is not None or o.rtol is not None or m.nan_mismatch or m.inf_mismatch or res.tol.exact:
        return False  # explicit tolerances (and NaN/Inf on one side, and integers: exact) keep the classic verdict
    if res.referee is not None:
        cls = str(res.referee["class"])
        res.passed = cls == "rounding"
        res.reason = "" if res.passed else _CLASS_REASON[cls].format(**res.referee)
    elif not res.passed and res.noise["within"]:
        res.passed, res.reason = True, f"within the noise floor (x{res.noise['ratio']:.2g}; {res.reason})"
    return False


def noted(j: Judging) -> bool:
    note, d = j.reconciled().note, j.draft
    if note:
        d.reason = f"{d.reason}; {note}" if d.reason else note
    return True


STEPS: tuple[Step, ...] = (not_tensors, python_values, shapes, undecodable, empty, measured, tolerance, noise, noted)


def judge(item: PlanItem, options: JudgeOptions, ctx: JudgeContext | None = None) -> PairDraft:
    """The metrics and verdict of one plan item (``STEPS``, in order, until one is final)."""
    a, b = item.a, item.b
    da, db = judged_dtypes(a.dtype, b.dtype, ctx is not None and ctx.half_undeclared)
    tol = tolerance_for(da, db, options.mode, options.atol, options.rtol)
    draft = PairDraft(item.role, a.step, a, b, item.perm, item.call_pair, tol, None, False, "",
                      (a.step, phase_rank(a), a.seq))
    j = Judging(item, draft, options, ctx)
    for step in STEPS:
        if step(j):
            break
    return draft


def data_key(a: RecordLike, b: RecordLike, perm: tuple[int, ...] | None, tol: Tolerance) -> DataKey | None:
    """Where both tensors' bytes live: records of one unchanged tensor (a module's output and
    the next module's input) share them, and their pair is measured once."""
    if not (a.has_data and b.has_data):
        return None
    wa, wb = _where_stored(a), _where_stored(b)
    if wa is None or wb is None:
        return None
    return (wa, wb, perm, a.dtype, b.dtype, tol)


def _where_stored(r: RecordLike) -> DataKey | None:
    """A record's stored bytes (a packed tensor's share: with its rows); None for another view."""
    if isinstance(r, Record):
        return (id(r.trace), *r.trace.storage_key(r))
    if isinstance(r, RowSlice):
        return (id(r.base.trace), *r.base.trace.storage_key(r.base), (r.lo, r.hi, r.perm, r.groups, r.axis))
    return None

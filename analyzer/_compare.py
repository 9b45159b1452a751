"""``compare()``: open two traces, pair their records (``align`` pairs alike: ``_traces``), measure
each pair, judge the table, and hand it all to ``Report``."""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import sys
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tqdm import tqdm

from padiff_trace import DamagedRecordError, Record, Trace, UserError, open_trace, visible
from padiff_trace.arrays import same_order_reshape
from padiff_trace.matching import Mapping, WeightMap, module_anchors

from .alignment._calls import TraceView, build_view, phase_rank
from .alignment._pairing import Alignment, CallPair, align_views
from .alignment._plan import plan
from .alignment._traces import as_mapping
from .alignment._weights import pair_by_map, trace_weight_map
from .judging._boundary import absorb_boundaries, absorb_inner_ops, absorb_unused_inputs
from .judging._carried import absorb_carried_rounding, absorb_training_drift
from .judging._conventions import apply_conventions
from .judging._masks import absorb_saturated
from .judging._metrics import (
    MODES,
    BroadcastView,
    Metrics,
    Tolerance,
    broadcast_shape,
    measure,
    tolerance_for,
    uncomparable,
    verdict,
    worker_pool,
)
from .judging._noise import NoiseFloor, noise_floor, pair_noise
from .judging._optimizer import optimizer_diff
from .judging._optreplay import verify_update_convention
from .judging._pairtable import PairDraft, PairTable
from .judging._randomness import random_draws
from .judging._reduce import GRAD_ROLES, summed_pair
from .judging._referee import Referee, classify, side_errors
from .judging._updates import absorb_update_rounding
from .reporting._report import Report

__all__ = ["compare", "CompareOptions"]

logger = logging.getLogger(__name__)

_OPTION_NAMES = {"mapping", "atol", "rtol", "mode", "quiet", "progress", "reference", "reference_b", "allow_partial"}


@dataclass(frozen=True)
class CompareOptions:
    mapping: str | os.PathLike[str] | Mapping | None = None
    atol: float | None = None  # None: per-dtype default
    rtol: float | None = None
    mode: str = "mean"
    progress: bool | None = None  # None: a bar on a terminal, for long comparisons
    reference: str | os.PathLike[str] | None = None  # float64 referee run (of A's or B's model)
    reference_b: str | os.PathLike[str] | None = None  # float64 referee of the other model
    allow_partial: bool = False  # an incomplete or damaged trace may still pass (exit 0)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise UserError(f"unknown compare mode {self.mode!r}; one of {', '.join(MODES)}")
        for name in ("atol", "rtol"):
            v = getattr(self, name)
            if v is not None and not (isinstance(v, (int, float)) and v >= 0 and np.isfinite(v)):
                raise UserError(f"--{name} must be a finite number >= 0, got {v!r}")


def _options(kw: dict[str, Any]) -> CompareOptions:
    unknown = set(kw) - _OPTION_NAMES
    if unknown:
        raise TypeError(f"unknown compare option(s) {sorted(unknown)}; known: {sorted(_OPTION_NAMES)}")
    kw = dict(kw)
    quiet = kw.pop("quiet", False)
    if quiet and kw.get("progress") is None:
        kw["progress"] = False
    return CompareOptions(**kw)


def compare(a_path: str | os.PathLike[str], b_path: str | os.PathLike[str], **options: Any) -> Report:
    """Compare trace A with trace B (the reference). Options: see ``CompareOptions``."""
    opts = _options(options)
    ta, tb = open_trace(a_path), open_trace(b_path)
    for t in (ta, tb):
        if not t.complete:
            logger.warning("%s: trace is incomplete; comparing what it holds", visible(str(t.path)))
    va, vb = build_view(ta), build_view(tb)
    mapping = as_mapping(opts.mapping)
    wm = trace_weight_map(va, vb, mapping)
    al = align_views(va, vb, mapping, anchors=module_anchors(wm) if wm is not None else None)
    ops = mapping.ops if mapping is not None else None
    ctx = _context(opts, va, vb, mapping)
    table = PairTable(va, vb)
    show = opts.progress if opts.progress is not None else sys.stderr.isatty()
    # the plan is made as it is consumed; a bar's total costs one more pass over it
    total = sum(min(x[1].numel, x[2].numel) for x in plan(al, va, vb, wm, ops)) if show else 0
    show = show and (opts.progress is not None or total > 50_000_000)
    bar = tqdm(total=total, unit="el", unit_scale=True, desc="compare", disable=not show, file=sys.stderr)
    try:
        with worker_pool() as ctx.pool:
            for role, ra, rb, perm, cp in plan(al, va, vb, wm, ops):
                table.append(_judge(role, ra, rb, perm, cp, opts, ctx))
                bar.update(min(ra.numel, rb.numel))
    finally:
        ctx.pool = None
        bar.close()
    ctx.measured.clear()
    table.finish()
    if not (ta.meta.get("single_step") or tb.meta.get("single_step")):
        # a single-step recording runs each module on the other model's inputs: its outputs
        # agreeing says nothing about the inputs it computed itself (recorded, not used)
        absorb_unused_inputs(table)
    conventions = apply_conventions(table, va, vb)
    optimizer = optimizer_diff(va, vb, wm)
    if not _explicit(opts):
        absorb_update_rounding(table, va, vb)
        conventions += [c for c in [verify_update_convention(table, va, vb, optimizer)] if c is not None]
        absorb_carried_rounding(table)
        absorb_training_drift(table)
        absorb_saturated(table)
        conventions += absorb_boundaries(table, va)
        absorb_inner_ops(table)
    return Report(
        va, vb, al, table, opts.mode, opts.atol, opts.rtol, _unpaired(al, va, vb, wm), referees=ctx.info,
        weight_map=wm, missing=_missing(ta, tb), allow_partial=opts.allow_partial, same_trace=_same(ta, tb),
        conventions=conventions, randomness=(random_draws(va), random_draws(vb)), optimizer=optimizer,
    )


def _explicit(o: CompareOptions) -> bool:
    """Explicit tolerances ask for every pair to be judged as it is (no boundary reasoning)."""
    return o.atol is not None or o.rtol is not None


def _missing(ta: Trace, tb: Trace) -> list[str]:
    """What keeps the comparison from covering both runs whole (checked after every read:
    reads add damage found on the way)."""
    out = []
    for side, t in (("A", ta), ("B", tb)):
        aborted = t.summary.get("aborted") if isinstance(t.summary, dict) else None
        if not t.complete and aborted:
            out.append(f"{side} ({visible(str(t.path))}): the recording stopped early: {visible(str(aborted))}")
        elif not t.complete:
            out.append(f"{side} ({visible(str(t.path))}): the recording did not finish (killed, failed or still running)")
        if not t.health.ok:
            out.append(f"{side} ({visible(str(t.path))}): {t.health.brief()}")
    return out


def _same(ta: Trace, tb: Trace) -> bool:
    try:
        return os.path.samefile(ta.path, tb.path)
    except OSError:
        return False


_WEIGHT_ROLES = ("param", "buffer", "param_grad")
_MEASURED_KEPT = 4096


def _judge(
    role: str,
    ra: Record,
    rb: Record,
    perm: tuple[int, ...] | None,
    cp: CallPair | None,
    o: CompareOptions,
    ctx: _Context | None = None,
) -> PairDraft:
    tol = tolerance_for(ra.dtype, rb.dtype, o.mode, o.atol, o.rtol)
    order = (ra.step, phase_rank(ra), ra.seq)
    res = PairDraft(role, ra.step, ra, rb, perm, cp, tol, None, False, "", order)
    if not (ra.is_tensor and rb.is_tensor):
        res.passed, res.reason = True, "not tensors"
        return res
    if _PYTHON in (getattr(ra, "device", ""), getattr(rb, "device", "")):
        res.passed, res.reason = True, _python_value(ra, rb)
        return res
    shape_a = tuple(ra.shape[k] for k in perm) if perm is not None else ra.shape
    key: tuple[Any, ...] | None = None
    note = ""
    if shape_a != rb.shape and perm is None and role not in _WEIGHT_ROLES and (p := _axis_permutation(ra.shape, rb.shape)):
        # one library's [b, s, h, d] is the other's [b, h, s, d]: compared under the one
        # permutation the shapes allow, never flattened across layouts
        perm, shape_a = p, rb.shape
        res.perm = perm
        note = f"compared with A's axes permuted {list(p)} (A {list(ra.shape)}, B {list(rb.shape)})"
    if shape_a != rb.shape:
        activation = perm is None and role not in _WEIGHT_ROLES and ra.has_data and rb.has_data
        common = broadcast_shape(shape_a, rb.shape) if activation else None
        if activation and ra.numel == rb.numel and shape_a[-1:] == rb.shape[-1:]:
            # one side merged leading axes ([2, 12, 64] vs [24, 64]): the same values in the same order
            note = f"compared flattened (A {list(ra.shape)}, B {list(rb.shape)})"
        elif ra.numel == rb.numel and same_order_reshape(tuple(shape_a), tuple(rb.shape)):
            # a head split or merge ([d, d] vs [d, heads, head_dim]): the same values in the same order
            note = f"compared reshaped, a head split or merge (A {list(ra.shape)}, B {list(rb.shape)})"
        elif common is not None and role in GRAD_ROLES and (summed := summed_pair(ra, rb, common)) is not None:
            # the gradient of a broadcast tensor is the gradient summed over the broadcast axes
            note = f"larger side summed over the broadcast axes (A {list(ra.shape)}, B {list(rb.shape)})"
            ra, rb = summed
        elif common is not None:
            # one side keeps a broadcastable shape (a mask [2,1,1,S] vs [2,1,S,S]): compare the values
            note = f"compared broadcast to {list(common)} (A {list(ra.shape)}, B {list(rb.shape)})"
            ra = BroadcastView(ra, common) if ra.shape != common else ra  # type: ignore[assignment]
            rb = BroadcastView(rb, common) if rb.shape != common else rb  # type: ignore[assignment]
        elif role.startswith("op_"):
            # op records pair by position and producer: two libraries that decompose one
            # computation differently (a transpose inside the head split on one side, before
            # the matmul on the other) give pairs of different things; the modules around
            # them are compared, these are not
            res.passed = True
            res.reason = (f"not compared: shapes A {list(ra.shape)} and B {list(rb.shape)} cannot be the same "
                          "operand (the libraries decompose this computation differently)")
            return res
        else:
            res.reason = f"shape mismatch: A {list(ra.shape)} vs B {list(rb.shape)}"
            return res
    else:
        key = _data_key(ra, rb, perm, tol)
    why = uncomparable(ra, rb)  # before the empty check: an uncaptured tensor holds no elements
    if why:
        res.metrics, res.passed, res.reason = Metrics(stats_only=True, uncomparable=why), True, f"not compared: {why}"
        return res
    if ra.numel == 0:
        res.metrics, res.passed = Metrics(), True
        return res
    cache = ctx.measured if ctx is not None else None
    m = cache.get(key) if cache is not None and key is not None else None
    if m is None:
        try:
            m = measure(ra, rb, tol, perm, ctx.pool if ctx is not None else None)
        except DamagedRecordError as exc:  # listed as damaged, never as a difference; the rest is compared
            res.reason, res.damaged = f"damaged: {exc}", True
            return res
        if cache is not None and key is not None:
            cache[key] = m
            if len(cache) > _MEASURED_KEPT:
                cache.popitem(last=False)
    else:
        assert cache is not None and key is not None
        cache.move_to_end(key)
        m = dataclasses.replace(m, extra=dict(m.extra))
    res.metrics = m
    res.passed, res.reason = verdict(m, tol)
    if ctx is not None and not m.stats_only:
        _noise_verdict(res, m, o, ctx)
    if note:
        res.reason = f"{res.reason}; {note}" if res.reason else note
    return res


_PYTHON = "python"  # the device of a record that holds a Python value (a flag, a number), not a tensor


def _axis_permutation(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """The permutation taking shape ``a`` to shape ``b`` when the shapes are the same sizes in
    another order and exactly one permutation fits (axes of equal size make it ambiguous: None)."""
    if len(a) != len(b) or a == b or sorted(a) != sorted(b) or len(set(a)) != len(a):
        return None
    return tuple(a.index(n) for n in b)


def _python_value(ra: Record, rb: Record) -> str:
    """Python values passed as arguments (flags, numbers) are never numeric divergences: when
    they differ, the pair passes with both values named (a call whose output then differs is
    named with them)."""
    try:
        va, vb = ra.read().tolist() if ra.has_data else ra.dtype, rb.read().tolist() if rb.has_data else rb.dtype
    except (DamagedRecordError, ValueError, TypeError, OSError):
        return "a Python argument, not a tensor: not compared as a number"
    if va == vb:
        return "a Python argument, not a tensor"
    return f"a Python argument, not a tensor: A {va!r}, B {vb!r} (not compared as a number)"


def _data_key(ra: Record, rb: Record, perm: tuple[int, ...] | None, tol: Tolerance) -> tuple[Any, ...] | None:
    """Where both tensors' bytes live: records of one unchanged tensor (a module's output and
    the next module's input) share them, and their pair is measured once."""
    if not (ra.has_data and rb.has_data):
        return None
    return (_where_stored(ra), _where_stored(rb), perm, ra.dtype, rb.dtype, tol)


def _where_stored(r: Record) -> tuple[int, ...]:
    return (id(r.trace), *r.trace.storage_key(r))


def _unpaired(al: Alignment, va: TraceView, vb: TraceView, wm: WeightMap | None) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {
        "calls_a": [f"{c.label} ({c.module_type})" for c in al.unpaired_a],
        "calls_b": [f"{c.label} ({c.module_type})" for c in al.unpaired_b],
        "blackbox_a": [c.label for c in al.hidden_a],
        "blackbox_b": [c.label for c in al.hidden_b],
    }
    s0 = min(set(va.weights) & set(vb.weights), default=None)
    if s0 is not None:
        _, ua, ub = pair_by_map(wm, va.weights[s0], vb.weights[s0])
        out["weights_a"] = [f"{r.module}.{r.position}".lstrip(".") for r in ua]
        out["weights_b"] = [f"{r.module}.{r.position}".lstrip(".") for r in ub]
    return out


# ---------------------------------------------------------------- rounding or bug
@dataclass
class _Context:
    floor_a: NoiseFloor
    floor_b: NoiseFloor
    ref_a: Referee | None = None
    ref_b: Referee | None = None
    floor_64: tuple[NoiseFloor, NoiseFloor] | None = None
    two: bool = False
    info: dict[str, Any] | None = None
    # shared bytes, measured once: the latest ``_MEASURED_KEPT`` measured pairs (a tensor is
    # recorded again close by - one call's output is the next call's input), so it stays small
    measured: OrderedDict[tuple[Any, ...], Metrics] = field(default_factory=OrderedDict)
    pool: ThreadPoolExecutor | None = None  # measuring threads, while comparing


def _referee_view(path: str | os.PathLike[str], role: str) -> TraceView:
    t = open_trace(path)
    floats = {r.dtype for r in t.records() if r.is_tensor and r.dtype.startswith(("float", "bfloat", "complex"))}
    if t.meta.get("cast_dtype") != "float64" and floats - {"float64", "complex128"}:
        raise UserError(
            f"{path}: {role} must be a float64 recording (record SPEC --dtype float64 --inputs-from A "
            f"--weights-from A); it holds {', '.join(sorted(floats))} tensors"
        )
    return build_view(t)


def _context(o: CompareOptions, va: TraceView, vb: TraceView, mapping: Mapping | None) -> _Context:
    """Noise floors of both traces; with a referee, every side's errors against float64."""
    ctx = _Context(noise_floor(va), noise_floor(vb))
    if o.reference is None:
        if o.reference_b is not None:
            raise UserError(f"{o.reference_b}: --reference-b needs --reference (the float64 run of the other model)")
        return ctx
    vr = _referee_view(o.reference, "the --reference trace")
    vrb = _referee_view(o.reference_b, "the --reference-b trace") if o.reference_b is not None else None
    if vr.framework == va.framework:
        side = "A"
    elif vr.framework == vb.framework:
        side = "B"
    else:
        raise UserError(
            f"{vr.path}: the referee is a {vr.framework} trace; A is {va.framework}, B is {vb.framework}"
        )
    r_a, r_b = (vr, vrb or vr) if side == "A" else (vrb or vr, vr)
    ctx.ref_a, ctx.ref_b = side_errors(va, r_a, mapping), side_errors(vb, r_b, mapping)
    ctx.two = vrb is not None
    if ctx.two:
        ctx.floor_64 = (noise_floor(r_a), noise_floor(r_b))
    ctx.info = {"reference": vr.path, "reference_model": side, "reference_b": vrb.path if vrb else None}
    return ctx


_CLASS_REASON = {
    "A deviates": "A is {rel_err_a:.2e} from float64, B {rel_err_b:.2e}: A's fp32 result is off",
    "B deviates": "B is {rel_err_b:.2e} from float64, A {rel_err_a:.2e}: B is off",
    "model difference": "the float64 runs differ too (rms {err_64:.2e}): a model difference, not rounding",
}


def _noise_verdict(res: PairDraft, m: Metrics, o: CompareOptions, ctx: _Context) -> None:
    """Noise floor and referee class of a pair; without --atol/--rtol they decide the verdict."""
    diff = m.rel_l2 * m.norm_b / math.sqrt(m.n) if m.norm_b > 0 and m.n else m.max_abs  # rms(a - b)
    res.noise = pair_noise(res.a, res.b, ctx.floor_a, ctx.floor_b, diff)
    if ctx.ref_a is not None and ctx.ref_b is not None:
        res.referee = classify(
            res.a, res.b, res.perm, diff, ctx.ref_a, ctx.ref_b, ctx.floor_a, ctx.floor_b, ctx.floor_64, ctx.two
        )
    if o.atol is not None or o.rtol is not None or m.nan_mismatch or m.inf_mismatch or res.tol.exact:
        return  # explicit tolerances (and NaN/Inf on one side, and integers: exact) keep the classic verdict
    if res.referee is not None:
        cls = res.referee["class"]
        res.passed = cls == "rounding"
        res.reason = "" if res.passed else _CLASS_REASON[cls].format(**res.referee)
    elif not res.passed and res.noise["within"]:
        res.passed, res.reason = True, f"within the noise floor (x{res.noise['ratio']:.2g}; {res.reason})"

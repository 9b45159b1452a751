"""``compare()``: open two traces, pair their records (``align`` pairs alike: ``_traces``), measure
each pair, judge the table, and hand it all to ``Report``."""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from tqdm import tqdm

from padiff_trace import Trace, UserError, open_trace, visible
from padiff_trace.arrays import is_number
from padiff_trace.matching import Mapping, WeightMap, depth_note, offset_note, orient
from padiff_trace.options import build_options

from ._options import CompareOptions
from .alignment._calls import TraceView, build_view
from .alignment._item import PlanItem
from .alignment._pairing import Alignment, CallPair
from .alignment._plan import plan
from .alignment._records import RecordLike
from .alignment._traces import align_by_weights, as_mapping
from .alignment._weights import pair_by_map, trace_weight_map
from .judging._absorbed import absorb_inner_ops, absorb_moved, absorb_unused_inputs
from .judging._boundary import absorb_boundaries, absorb_checked_inside
from .judging._carried import absorb_carried_rounding, absorb_training_drift
from .judging._conventions import apply_conventions
from .judging._derived import absorb_reparametrized
from .judging._gradflow import absorb_unpropagated_gradients, absorb_unreached_gradients
from .judging._judge import JudgeContext, judge
from .judging._masks import absorb_saturated
from .judging._metrics import worker_pool
from .judging._noise import noise_floor
from .judging._optimizer import OptimizerDiff, optimizer_diff
from .judging._optreplay import verify_update_convention
from .judging._pairtable import PairDraft, PairTable
from .judging._penalties import absorb_loss_penalties
from .judging._precision import half_undeclared
from .judging._quantities import absorb_other_quantities
from .judging._randomness import random_draws
from .judging._referee import side_errors
from .judging._reordered import absorb_reordered
from .judging._representation import absorb_representations
from .judging._unshared import absorb_uncompared_calls
from .judging._updates import absorb_buffer_rounding, absorb_update_rounding, flag_hidden_updates
from .reporting._report import Report

__all__ = ["compare", "CompareOptions"]

logger = logging.getLogger(__name__)


def _options(given: CompareOptions | None, kw: dict[str, Any]) -> CompareOptions:
    """``given`` (default: every option's default) with the keywords ``kw`` on top; a keyword
    that names no field of ``CompareOptions`` is a ``TypeError``, as for any function."""
    if given is not None and not isinstance(given, CompareOptions):
        raise TypeError(f"compare(a, b, options): options must be a CompareOptions, got {type(given).__name__}")
    if given is not None and not kw:
        return given
    return build_options(CompareOptions, {**(given.to_dict() if given else {}), **kw}, error=TypeError, what="compare")


def compare(
    a_path: str | os.PathLike[str], b_path: str | os.PathLike[str], options: CompareOptions | None = None, **kw: Any
) -> Report:
    """Compare trace A with trace B (the reference). Options: a ``CompareOptions``, or its fields
    as keywords (``mode="strict"``, ``atol=1e-4``; keywords override ``options``' fields)."""
    opts = _options(options, kw)
    opened: list[Trace] = []  # the report closes them (``Report.close``); a failure here does
    try:
        return _compare(a_path, b_path, opts, opened)
    except BaseException:
        for t in opened:
            t.close()
        raise


def _open(path: str | os.PathLike[str], opened: list[Trace]) -> Trace:
    t = open_trace(path)
    opened.append(t)
    return t


def _compare(a_path: str | os.PathLike[str], b_path: str | os.PathLike[str], opts: CompareOptions, opened: list[Trace]) -> Report:
    ta, tb = _open(a_path, opened), _open(b_path, opened)
    for t in (ta, tb):
        if not t.complete:
            logger.warning("%s: trace is incomplete; comparing what it holds", visible(str(t.path)))
    va, vb = build_view(ta), build_view(tb)
    mapping = as_mapping(opts.mapping)
    sided = orient(mapping, va.framework, vb.framework) if mapping is not None else None  # A and B: sides, once
    wm = trace_weight_map(va, vb, sided)
    al = align_by_weights(va, vb, sided, wm)
    ops = sided.ops if sided is not None else None
    ctx = _context(opts, va, vb, mapping, opened)
    table = PairTable(va, vb)
    show = opts.show_progress if opts.show_progress is not None else sys.stderr.isatty()
    # the plan is made as it is consumed; a bar's total costs one more pass over it
    total = sum(min(x[1].numel, x[2].numel) for x in plan(al, va, vb, wm, ops)) if show else 0
    show = show and (opts.show_progress is not None or total > 50_000_000)
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
        absorb_representations(table)
    conventions = apply_conventions(table, va, vb)
    offsets = offset_note(wm)  # norm scales one side keeps as the other's plus one (``matching._offsets``)
    if offsets:
        conventions.append({"kind": "convention", "check": "norm_offset", "pairs": sum(bool(p.offset) for p in wm.pairs) if wm else 0,
                            "text": offsets})
    depths = depth_note(wm)  # a kernel over pixel phases against a strided one (``matching._depth``)
    if depths:
        conventions.append({"kind": "convention", "check": "space_to_depth",
                            "pairs": sum(p.depth is not None for p in wm.pairs) if wm else 0, "text": depths})
    optimizer = optimizer_diff(va, vb, wm)
    if not _explicit(opts):
        conventions += absorb_loss_penalties(table, va, vb, optimizer)  # a decay in one optimizer, in the other's loss
        absorb_carried_rounding(table)  # before the updates: a parameter gradient carried is rounding
        absorb_update_rounding(table, va, vb)
        absorb_buffer_rounding(table, va, vb)
        conventions += [c for c in [verify_update_convention(table, va, vb, optimizer)] if c is not None]
        # each step's weights pass on the gradients of the step before, and the values of a step on
        # its weights: while the drift passes values, the next step's weights may pass too
        settled = absorb_training_drift(table)
        for _ in range(int(table.col("step").max(initial=0))):
            if not settled:
                break
            settled = absorb_update_rounding(table, va, vb) + absorb_buffer_rounding(table, va, vb) + absorb_training_drift(table)
        absorb_saturated(table)
        absorb_reparametrized(table, {(p.a, p.b) for p in wm.pairs if not p.transfer} if wm is not None else set())
        absorb_moved(table)
        absorb_checked_inside(table, (va, vb))
        absorb_other_quantities(table, (va, vb))
        conventions += absorb_boundaries(table, va, vb)
        absorb_uncompared_calls(table)
        conventions += absorb_reordered(table, va)
        absorb_inner_ops(table)  # before the gradient rules: the op records of a step count among its values
        absorb_unpropagated_gradients(table)
        absorb_unreached_gradients(table)
        since = _optimizer_differs_from(optimizer)
        if since is not None:
            flag_hidden_updates(table, va, vb, since)
    return Report(
        va, vb, al, table, opts.mode, opts.atol, opts.rtol, _unpaired(al, va, vb, wm), referees=ctx.info,
        weight_map=wm, missing=_missing(ta, tb), allow_partial=opts.allow_partial, same_trace=_same(ta, tb),
        conventions=conventions, randomness=(random_draws(va), random_draws(vb)), optimizer=optimizer, opened=opened,
    )


def _optimizer_differs_from(d: OptimizerDiff | None) -> int | None:
    """The first step whose update a recorded optimizer difference changes (0: a setting that
    holds from the start), or None when none is recorded or the algorithms differ by convention."""
    if d is None or d.convention or not d.any:
        return None
    return 0 if d.settings else d.first_step()


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


def _judge(
    role: str,
    ra: RecordLike,
    rb: RecordLike,
    perm: tuple[int, ...] | None,
    cp: CallPair | None,
    o: CompareOptions,
    ctx: JudgeContext | None = None,
) -> PairDraft:
    """One plan item judged: its shapes reconciled, measured, its verdict (``judging._judge``)."""
    return judge(PlanItem(role, ra, rb, perm, cp), o, ctx)


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
        out["weights_a"] = [r.tensor_name for r in ua]
        out["weights_b"] = [r.tensor_name for r in ub]
    return out


# ---------------------------------------------------------------- rounding or bug
def _referee_view(path: str | os.PathLike[str], role: str, opened: list[Trace]) -> TraceView:
    t = _open(path, opened)
    floats = {r.dtype for r in t.records() if r.is_tensor and is_number(r.dtype)}
    if t.meta.get("cast_dtype") != "float64" and floats - {"float64", "complex128"}:
        raise UserError(
            f"{path}: {role} must be a float64 recording (record SPEC --dtype float64 --inputs-from A "
            f"--weights-from A); it holds {', '.join(sorted(floats))} tensors"
        )
    return build_view(t)


def _context(o: CompareOptions, va: TraceView, vb: TraceView, mapping: Mapping | None, opened: list[Trace]) -> JudgeContext:
    """Noise floors of both traces; with a referee, every side's errors against float64."""
    half = half_undeclared(va, vb)  # the side computing in half precision nobody declared: judged at float32
    ctx = JudgeContext(noise_floor(va, "float32" if half == "a" else None),
                       noise_floor(vb, "float32" if half == "b" else None), half_undeclared=half is not None)
    if o.reference is None:
        if o.reference_b is not None:
            raise UserError(f"{o.reference_b}: --reference-b needs --reference (the float64 run of the other model)")
        return ctx
    vr = _referee_view(o.reference, "the --reference trace", opened)
    vrb = _referee_view(o.reference_b, "the --reference-b trace", opened) if o.reference_b is not None else None
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

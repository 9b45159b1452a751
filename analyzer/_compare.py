"""``compare()`` and ``align()``: open two traces, pair their records, measure, judge."""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
from tqdm import tqdm

from padiff_trace import Kind, Record, UserError, open_trace

from ._calls import TraceView, build_view, phase_rank
from ._mapping import Mapping, load_mapping
from ._metrics import MODES, Metrics, Tolerance, measure, tolerance_for, verdict
from ._pairing import Alignment, CallPair, align_views, pair_leaves, pair_weights
from ._report import PairResult, Report

__all__ = ["compare", "align", "CompareOptions"]

logger = logging.getLogger(__name__)

_OPTION_NAMES = {"mapping", "atol", "rtol", "mode", "quiet", "progress"}


@dataclass(frozen=True)
class CompareOptions:
    mapping: str | os.PathLike[str] | Mapping | None = None
    atol: float | None = None  # None: per-dtype default
    rtol: float | None = None
    mode: str = "mean"
    progress: bool | None = None  # None: a bar on a terminal, for long comparisons

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


def _mapping(m: str | os.PathLike[str] | Mapping | None) -> Mapping | None:
    if m is None or isinstance(m, Mapping):
        return m
    return load_mapping(m)


def align(a_path: str | os.PathLike[str], b_path: str | os.PathLike[str], mapping: Any = None) -> Alignment:
    """Pair the module calls of two traces (first step) without measuring anything."""
    ta, tb = open_trace(a_path), open_trace(b_path)
    return align_views(build_view(ta), build_view(tb), _mapping(mapping))


def compare(a_path: str | os.PathLike[str], b_path: str | os.PathLike[str], **options: Any) -> Report:
    """Compare trace A with trace B (the reference). Options: see ``CompareOptions``."""
    opts = _options(options)
    ta, tb = open_trace(a_path), open_trace(b_path)
    for t in (ta, tb):
        if not t.complete:
            logger.warning("%s: trace is incomplete; comparing what it holds", t.path)
    va, vb = build_view(ta), build_view(tb)
    al = align_views(va, vb, _mapping(opts.mapping))
    todo = _plan(al, va, vb)
    results: list[PairResult] = []
    total = sum(min(x[1].numel, x[2].numel) for x in todo)
    show = opts.progress if opts.progress is not None else (sys.stderr.isatty() and total > 50_000_000)
    bar = tqdm(total=total, unit="el", unit_scale=True, desc="compare", disable=not show, file=sys.stderr)
    try:
        for role, ra, rb, perm, cp in todo:
            results.append(_judge(len(results), role, ra, rb, perm, cp, opts))
            bar.update(min(ra.numel, rb.numel))
    finally:
        bar.close()
    results.sort(key=lambda r: r.order)
    for i, r in enumerate(results):
        r.index = i
    return Report(va, vb, al, results, opts.mode, opts.atol, opts.rtol, _unpaired(al, va, vb))


_Todo = tuple[str, Record, Record, "tuple[int, ...] | None", "CallPair | None"]


def _plan(al: Alignment, va: TraceView, vb: TraceView) -> list[_Todo]:
    """Every (role, A record, B record, permutation, call pair) to compare, all steps."""
    todo: list[_Todo] = []
    keyed = al.by_key()
    steps_b = {s: {c.key: c for c in cs} for s, cs in vb.calls.items()}
    hidden_a = {c.key for c in al.hidden_a}
    for step, calls in va.calls.items():
        b_by_key = steps_b.get(step, {})
        for ca in calls:
            if ca.key in hidden_a:
                continue
            cp = keyed.get(ca.key)
            if cp is None:
                continue
            cb = b_by_key.get(cp.b.key)
            if cb is None:
                continue
            pair = cp if ca is cp.a else CallPair(ca, cb, cp.how, cp.entry)
            role_in = "model_input" if ca.parent == -1 and any(r.kind == Kind.MODEL_INPUT for r in ca.inputs) else "input"
            ins, _, _ = pair_leaves(ca.inputs, cb.inputs, cp.perm)
            outs, _, _ = pair_leaves(ca.outputs, cb.outputs, cp.perm)
            for x, y, p in ins:
                todo.append((role_in, x, y, p, pair))
                gx, gy = va.grads_in.get((ca.id, x.position)), vb.grads_in.get((cb.id, y.position))
                if gx is not None and gy is not None:
                    todo.append(("grad_input", gx, gy, p, pair))
            for x, y, p in outs:
                todo.append(("output", x, y, p, pair))
                gx, gy = va.grads_out.get((ca.id, x.position)), vb.grads_out.get((cb.id, y.position))
                if gx is not None and gy is not None:
                    todo.append(("grad_output", gx, gy, p, pair))
    for step in sorted(set(va.weights) & set(vb.weights)):
        for x, y, p in pair_weights(al, va.weights[step], vb.weights[step])[0]:
            todo.append(("param" if x.kind == Kind.PARAM else "buffer", x, y, p, None))
    for step in sorted(set(va.param_grads) & set(vb.param_grads)):
        for x, y, p in pair_weights(al, va.param_grads[step], vb.param_grads[step])[0]:
            todo.append(("param_grad", x, y, p, None))
    for step in sorted(set(va.probes) & set(vb.probes)):
        pb = vb.probes[step]
        for key, x in va.probes[step].items():
            if key in pb:
                todo.append(("probe", x, pb[key], None, None))
    for step in sorted(set(va.losses) & set(vb.losses)):
        for x, y in zip(va.losses[step], vb.losses[step]):
            todo.append(("loss", x, y, None, None))
    return todo


def _judge(
    i: int, role: str, ra: Record, rb: Record, perm: tuple[int, ...] | None, cp: CallPair | None, o: CompareOptions
) -> PairResult:
    tol = tolerance_for(ra.dtype, rb.dtype, o.mode, o.atol, o.rtol)
    order = (ra.step, phase_rank(ra), ra.seq)
    res = PairResult(i, role, ra.step, ra, rb, perm, cp, tol, None, False, "", order)
    if not (ra.is_tensor and rb.is_tensor):
        res.passed, res.reason = True, "not tensors"
        return res
    shape_a = tuple(ra.shape[k] for k in perm) if perm is not None else ra.shape
    if shape_a != rb.shape:
        res.reason = f"shape mismatch: A {list(ra.shape)} vs B {list(rb.shape)}"
        return res
    if ra.numel == 0:
        res.metrics, res.passed = Metrics(), True
        return res
    m = measure(ra, rb, tol, perm)
    res.metrics = m
    res.passed, res.reason = verdict(m, tol)
    return res


def _unpaired(al: Alignment, va: TraceView, vb: TraceView) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {
        "calls_a": [f"{c.label} ({c.module_type})" for c in al.unpaired_a],
        "calls_b": [f"{c.label} ({c.module_type})" for c in al.unpaired_b],
        "blackbox_a": [c.label for c in al.hidden_a],
        "blackbox_b": [c.label for c in al.hidden_b],
    }
    s0 = min(set(va.weights) & set(vb.weights), default=None)
    if s0 is not None:
        _, ua, ub = pair_weights(al, va.weights[s0], vb.weights[s0])
        out["weights_a"] = [f"{r.module}.{r.position}".lstrip(".") for r in ua]
        out["weights_b"] = [f"{r.module}.{r.position}".lstrip(".") for r in ub]
    return out


def _tol_text(t: Tolerance) -> str:
    return f"{t.mode} atol={t.atol:g} rtol={t.rtol:g}"

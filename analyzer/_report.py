"""The comparison result: verdict, first divergence, amplifiers, and its files.

``Report.write(dir)`` produces ``report.txt`` (one block per pair), ``report.json``
(schema_version 1, documented in docs/analyzer.md) and ``pairs.csv``.
"""

from __future__ import annotations

import csv
import json
import math
import os
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from padiff_trace import Frame, Record, TraceWriteError

from ._metrics import DEFAULT_TOLERANCES, Metrics, Tolerance

if TYPE_CHECKING:
    from ._calls import TraceView
    from ._pairing import Alignment, CallPair

__all__ = ["PairResult", "Report", "Divergence", "Amplifier", "SCHEMA_VERSION", "alignment_text"]

SCHEMA_VERSION = 1
_FWD_ROLES = ("model_input", "input", "output", "probe", "loss")
_EPS = {"float64": 2.2e-16, "float32": 1.2e-7, "float16": 9.8e-4, "bfloat16": 7.8e-3}


@dataclass(eq=False)
class PairResult:
    index: int
    role: str  # model_input input output grad_output grad_input param buffer param_grad probe loss
    step: int
    a: Record
    b: Record
    perm: tuple[int, ...] | None
    call_pair: CallPair | None
    tol: Tolerance
    metrics: Metrics | None
    passed: bool
    reason: str
    order: tuple[int, int, int]
    noise: dict[str, Any] | None = None  # _noise.pair_noise: expected_rms, diff_rms, ratio, within
    referee: dict[str, Any] | None = None  # _referee.classify: class, err_a, err_b, err_64, ...

    @property
    def cls(self) -> str | None:
        """rounding / A deviates / B deviates / model difference (None without a referee)."""
        return self.referee["class"] if self.referee else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "role": self.role,
            "step": self.step,
            "passed": self.passed,
            "reason": self.reason,
            "a": _rec_dict(self.a),
            "b": _rec_dict(self.b),
            "layout": list(self.perm) if self.perm else None,
            "tolerance": {"mode": self.tol.mode, "atol": self.tol.atol, "rtol": self.tol.rtol},
            "metrics": self.metrics.as_dict() if self.metrics else None,
            "class": self.cls,
            "noise": self.noise,
            "referee": self.referee,
        }


@dataclass(eq=False)
class Divergence:
    pair: PairResult
    input_rel_l2: float | None  # worst relative L2 error of the call's inputs (None: unknown)
    inputs_failed: bool


@dataclass(eq=False)
class Amplifier:
    call_pair: CallPair
    in_rel_l2: float
    out_rel_l2: float
    ratio: float


def _rec_dict(r: Record) -> dict[str, Any]:
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


class Report:
    """Outcome of ``analyzer.compare``: pairs in execution order, verdict, diagnosis."""

    def __init__(
        self,
        a: TraceView,
        b: TraceView,
        alignment: Alignment,
        pairs: list[PairResult],
        mode: str,
        atol: float | None,
        rtol: float | None,
        unpaired: dict[str, list[str]],
        referees: dict[str, Any] | None = None,
    ) -> None:
        self.a, self.b, self.alignment, self.pairs = a, b, alignment, pairs
        self.mode, self.atol, self.rtol = mode, atol, rtol
        self.unpaired = unpaired
        self.referees = referees  # {reference, reference_model: "A"|"B", reference_b} or None
        self.failed = [p for p in pairs if not p.passed]
        self.first_divergence = self._first_divergence()
        self.amplifiers = self._amplifiers()
        self.first_nonfinite = {"a": _first_nonfinite(a), "b": _first_nonfinite(b)}

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    @property
    def passed(self) -> bool:
        return not self.failed

    # ------------------------------------------------------------ diagnosis
    def _first_divergence(self) -> Divergence | None:
        input_roles = ("input", "op_input")
        fails = [p for p in self.failed if p.role not in input_roles] or self.failed
        if not fails:
            return None
        first = min(fails, key=lambda p: p.order)
        # an input that already failed before the first failing output is the earlier event
        early_inputs = [p for p in self.failed if p.role in input_roles and p.order < first.order]
        if early_inputs:
            first = min(early_inputs, key=lambda p: p.order)
        cp = first.call_pair
        in_err, in_fail = None, False
        if first.role.startswith("op_") and first.role != "op_input":  # the op's own inputs
            ins = [p for p in self.pairs if p.role == "op_input" and p.a.call == first.a.call]
            errs = [p.metrics.rel_l2 for p in ins if p.metrics is not None]
            in_err = max(errs) if errs else None
            in_fail = any(not p.passed for p in ins)
        elif cp is not None and first.role not in ("model_input", "input"):
            ins = [p for p in self.pairs if p.call_pair is not None and p.call_pair.a is cp.a and p.role in ("input", "model_input")]
            errs = [p.metrics.rel_l2 for p in ins if p.metrics is not None]
            in_err = max(errs) if errs else None
            in_fail = any(not p.passed for p in ins)
        return Divergence(first, in_err, in_fail)

    def _amplifiers(self, top: int = 10) -> list[Amplifier]:
        """Per paired call of the first step: output error / max(input error, dtype eps)."""
        groups: dict[int, tuple[CallPair, list[PairResult], list[PairResult]]] = {}
        for p in self.pairs:
            cp = p.call_pair
            if cp is None or p.metrics is None or p.step != cp.a.step:
                continue
            g = groups.setdefault(id(cp.a), (cp, [], []))
            if p.role in ("input", "model_input"):
                g[1].append(p)
            elif p.role == "output":
                g[2].append(p)
        amps = []
        for cp, ins, outs in groups.values():
            if not ins or not outs:
                continue
            out_e = max(_finite(p.metrics.rel_l2) for p in outs if p.metrics)
            in_e = max(_finite(p.metrics.rel_l2) for p in ins if p.metrics)
            eps = _EPS[_cls(outs[0].a.dtype)]
            amps.append(Amplifier(cp, in_e, out_e, out_e / max(in_e, eps)))
        # a container whose jump is explained by a call inside it is not the culprit
        view = self.a
        best_inside: dict[int, float] = {}
        for x in amps:
            p = x.call_pair.a.parent
            while p != -1 and p in view.by_id:
                best_inside[p] = max(best_inside.get(p, 0.0), x.ratio)
                p = view.by_id[p].parent
        amps = [x for x in amps if x.ratio > 10 * best_inside.get(x.call_pair.a.id, 0.0)]
        amps.sort(key=lambda x: (-x.ratio, -x.call_pair.a.depth))
        return [x for x in amps if x.ratio > 1.0][:top]

    # ------------------------------------------------------------ text
    def summary_text(self, width: int = 80) -> str:
        a, b = self.a, self.b
        L: list[str] = []
        verdict = "DIVERGED" if self.failed else "ALIGNED"
        L.append(f"padiff-trace compare: {verdict}  (mode {self.mode}, {self._tol_text()})")
        for side, v, tail in (("A", a, ""), ("B", b, "  (reference)")):
            head = f"  {side} {v.framework} {v.trace.meta.get('framework_version', '')}  "
            L.append(head + _left_clip(v.path, width - len(head) - len(tail)) + tail)
        counts: dict[str, list[int]] = {}
        for p in self.pairs:
            c = counts.setdefault(p.role, [0, 0])
            c[0] += 1
            c[1] += 0 if p.passed else 1
        L.extend(_wrap("  pairs: ", [f"{k} {v[0]} ({v[1]} fail)" for k, v in counts.items()], width))
        al = self.alignment
        L.append(
            f"  calls: {len(al.pairs)} paired, {len(al.unpaired_a)} only in A, {len(al.unpaired_b)} only in B"
            + (f", {len(al.hidden_a)}/{len(al.hidden_b)} inside black boxes" if al.hidden_a or al.hidden_b else "")
        )
        L.extend(self._referee_lines(width))
        wa, wb = self.unpaired.get("weights_a", []), self.unpaired.get("weights_b", [])
        if wa or wb:
            L.append(f"  weights unpaired: A {_clip(wa)}; B {_clip(wb)}")
        d = self.first_divergence
        if d is not None:
            p = d.pair
            L.append("")
            L.append(f"First divergence: step {p.step}, {p.role} ({p.reason})")
            if p.referee is not None:
                L.append(f"  class: {p.cls}" + _class_hint(p, self.referees))
            for side, r in (("A", p.a), ("B", p.b)):
                head, tail = f"  {side} {r.name}", f"  [{r.module_type or '-'}] {r.dtype}{list(r.shape)}"
                if len(head) + len(tail) <= width:
                    L.append(head + tail)
                else:  # long module paths: name on its own line (tail kept), details below
                    L.append(head if len(head) <= width else f"  {side} ..." + head[-(width - 8):])
                    L.append("    " + tail.strip())
                for f in _where(r.stack):
                    L.append("      " + _frame(f, width - 6))
            if p.metrics is not None:
                L.append("  " + _metrics_line(p.metrics))
            site = p.a.stack[-1] if p.a.stack else None
            where = f" ({site.file}:{site.line})" if site else ""
            if p.role == "op_input" and p.metrics is not None:
                L += textwrap.wrap(
                    f"inside {p.a.module or '<root>'}, op {p.a.module_type}{where} already receives different "
                    f"inputs (rel-L2 {p.metrics.rel_l2:.2e}) while the ops before it match: the error comes from "
                    "code between them (an op on one side only, or a Python-level computation)",
                    width, initial_indent="  -> ", subsequent_indent="     ",
                )
            elif p.role.startswith("op_"):
                before = "?" if d.input_rel_l2 is None else f"{d.input_rel_l2:.2e}"
                after = f"output by {p.metrics.rel_l2:.2e}" if p.metrics is not None else p.reason
                L += textwrap.wrap(
                    f"inside {p.a.module or '<root>'}, the first divergent op is {p.a.module_type}{where}: "
                    f"inputs differed by rel-L2 {before}, {after}",
                    width, initial_indent="  -> ", subsequent_indent="     ",
                )
            if d.input_rel_l2 is not None and p.role != "op_input":
                state = "already wrong" if d.inputs_failed else "still matching"
                L.append(f"  inputs of this call: rel-L2 {d.input_rel_l2:.3g} ({state})")
                if not d.inputs_failed:
                    L.append("  -> the error starts inside this module call")
                else:
                    L.append("  -> it received wrong inputs: look at the code that produced them")
            elif p.role == "input":
                L.append("  -> earlier recorded outputs match: look at the code between them and this call")
        if self.amplifiers:
            L.append("")
            L.append("Top error amplifiers (output rel-L2 / max(input rel-L2, eps)):")
            for k, x in enumerate(self.amplifiers[:5], 1):
                L.append(
                    f" {k}. x{x.ratio:<9.3g} {x.call_pair.a.label} [{x.call_pair.a.module_type}]"
                    f" <-> {x.call_pair.b.label}"
                )
                L[-1] = L[-1][:width]
                L.append(f"      in {x.in_rel_l2:.2e} -> out {x.out_rel_l2:.2e}")
        nf = self.first_nonfinite
        if nf["a"] or nf["b"]:
            L.append("")
            for side in ("a", "b"):
                r = nf[side]
                L.append(f"First NaN/Inf in {side.upper()}: " + (f"{r.name} ({r.kind.label}, step {r.step})" if r else "none"))
        return "\n".join(L)

    def _referee_lines(self, width: int) -> list[str]:
        ref = self.referees
        L: list[str] = []
        if ref is not None:
            head = f"  float64 referee of {ref['reference_model']}'s model: "
            L.append(head + _left_clip(ref["reference"], width - len(head)))
            if ref.get("reference_b"):
                head = "  float64 referee of the other model: "
                L.append(head + _left_clip(ref["reference_b"], width - len(head)))
            classes: dict[str, int] = {}
            for p in self.pairs:
                if p.cls is not None:
                    classes[p.cls] = classes.get(p.cls, 0) + 1
            L.extend(_wrap("  classes: ", [f"{k} {v}" for k, v in classes.items()], width))
        noisy = sum(1 for p in self.pairs if p.noise is not None and p.noise["within"] and p.metrics and p.metrics.max_abs > 0)
        if noisy:
            L.append(f"  within the estimated fp32 noise floor: {noisy} of {len(self.pairs)} pairs")
        return L

    def _tol_text(self) -> str:
        if self.atol is None and self.rtol is None:
            how = "float64 referee" if self.referees else "noise floor estimate"
            return f"noise-aware: {how}"
        if self.atol is not None and self.rtol is not None:
            return f"atol {self.atol:g} rtol {self.rtol:g}"
        f32 = DEFAULT_TOLERANCES[self.mode]["float32"]
        atol = self.atol if self.atol is not None else f32[0]
        rtol = self.rtol if self.rtol is not None else f32[1]
        return f"float32 atol {atol:g} rtol {rtol:g}"

    # ------------------------------------------------------------ files
    def to_dict(self) -> dict[str, Any]:
        d = self.first_divergence
        sections: dict[str, list[dict[str, Any]]] = {"pairs": [], "weights": [], "param_grads": []}
        for p in self.pairs:
            key = "weights" if p.role in ("param", "buffer") else "param_grads" if p.role == "param_grad" else "pairs"
            sections[key].append(p.as_dict())
        return {
            "schema_version": SCHEMA_VERSION,
            "verdict": "diverged" if self.failed else "aligned",
            "exit_code": self.exit_code,
            "options": {"mode": self.mode, "atol": self.atol, "rtol": self.rtol},
            "referees": self.referees,
            "a": _trace_dict(self.a),
            "b": _trace_dict(self.b),
            "counts": {"pairs": len(self.pairs), "failed": len(self.failed)},
            "alignment": [
                {"a": cp.a.label, "b": cp.b.label, "a_type": cp.a.module_type, "b_type": cp.b.module_type, "how": cp.how}
                for cp in self.alignment.pairs
            ],
            "unpaired": self.unpaired,
            "first_divergence": None
            if d is None
            else {"index": d.pair.index, "input_rel_l2": d.input_rel_l2, "inputs_failed": d.inputs_failed},
            "amplifiers": [
                {"a": x.call_pair.a.label, "b": x.call_pair.b.label, "in_rel_l2": x.in_rel_l2, "out_rel_l2": x.out_rel_l2, "ratio": x.ratio}
                for x in self.amplifiers
            ],
            "first_nonfinite": {k: (_rec_dict(r) if r else None) for k, r in self.first_nonfinite.items()},
            **sections,
        }

    def write(self, directory: str | os.PathLike[str]) -> Path:
        out = Path(directory)
        try:
            out.mkdir(parents=True, exist_ok=True)
            (out / "report.json").write_text(json.dumps(_clean(self.to_dict()), indent=1), encoding="utf-8")
            (out / "report.txt").write_text(self._blocks(), encoding="utf-8")
            with open(out / "pairs.csv", "w", newline="", encoding="utf-8") as f:
                w = csv.writer(f)
                cols = ["max_abs", "mean_abs", "max_rel", "mean_rel", "cosine", "rel_l2", "frac_fail"]
                w.writerow(["index", "step", "role", "passed", "class", "a", "a_type", "b", "b_type", "shape", *cols, "reason"])
                for p in self.pairs:
                    m = p.metrics
                    vals = [getattr(m, c) for c in cols] if m else [""] * len(cols)
                    w.writerow([p.index, p.step, p.role, int(p.passed), p.cls or "", p.a.name, p.a.module_type, p.b.name,
                                p.b.module_type, "x".join(map(str, p.b.shape)), *vals, p.reason])
        except OSError as exc:
            raise TraceWriteError(f"{out}: cannot write the report: {exc.strerror or exc}") from exc
        return out

    def _blocks(self) -> str:
        L = [self.summary_text(), "", "=" * 60]
        for p in self.pairs:
            L.append(f"{p.index}  step {p.step} {p.role}  {'ok' if p.passed else 'FAIL'}" + (f"  [{p.cls}]" if p.cls else ""))
            if p.referee is not None:
                r = p.referee
                L.append(f"  vs float64: A {r['rel_err_a']:.3g}, B {r['rel_err_b']:.3g} (relative RMS)")
            if p.noise is not None and p.metrics is not None and p.metrics.max_abs > 0:
                L.append(f"  rms diff {p.noise['diff_rms']:.3g} = x{p.noise['ratio']:.3g} the estimated fp32 noise")
            L.append(f"  A {p.a.name} [{p.a.module_type}] {p.a.dtype}{list(p.a.shape)}")
            L.append(f"  B {p.b.name} [{p.b.module_type}] {p.b.dtype}{list(p.b.shape)}")
            if p.metrics is not None:
                L.append(f"  mean diff: {p.metrics.mean_abs:.6g}")
                L.append(f"  max diff:  {p.metrics.max_abs:.6g}")
            if p.reason:
                L.append(f"  {p.reason}")
            L.append("=" * 60)
        return "\n".join(L) + "\n"


def _class_hint(p: PairResult, ref: dict[str, Any] | None) -> str:
    r = p.referee or {}
    nums = f" (vs float64: A {r.get('rel_err_a', 0):.2e}, B {r.get('rel_err_b', 0):.2e})"
    if ref is not None and not ref.get("reference_b") and p.cls in ("A deviates", "B deviates"):
        other = "B" if ref["reference_model"] == "A" else "A"
        if p.cls == f"{other} deviates":
            return nums + (f"\n  -> {other} is far from the float64 run of {ref['reference_model']}'s model: a model"
                           f" difference or {other}'s fp32 numerics; --reference-b tells them apart")
    if p.cls == "model difference":
        return nums + "\n  -> the float64 runs of the two models disagree here: a real difference, not rounding"
    return nums


def alignment_text(al: Alignment) -> str:
    """The call pairing, one line per pair, then what stayed unpaired."""
    L = [f"{len(al.pairs)} paired calls (A {al.a.path} | B {al.b.path})"]
    for cp in al.pairs:
        how = {"order": "", "root": " (root)", "mapping": " (mapping" + (", black box)" if cp.blackbox else ")")}[cp.how]
        L.append(f"  {cp.a.label} [{cp.a.module_type}]  <->  {cp.b.label} [{cp.b.module_type}]{how}")
    for side, calls in (("A", al.unpaired_a), ("B", al.unpaired_b)):
        L.append(f"only in {side}: {len(calls)}")
        L.extend(f"  {c.label} [{c.module_type}]" for c in calls)
    return "\n".join(L)


def _trace_dict(v: TraceView) -> dict[str, Any]:
    m = v.trace.meta
    return {"path": v.path, "framework": v.framework, "framework_version": m.get("framework_version"),
            "device": m.get("device"), "complete": v.trace.complete}


def _first_nonfinite(v: TraceView) -> Record | None:
    t = v.trace.table
    if not len(t):
        return None
    bad = np.flatnonzero((t["stats"][:, 6] > 0) | (t["stats"][:, 7] > 0))
    return v.trace[int(t["seq"][bad[0]])] if len(bad) else None


def _where(stack: tuple[Frame, ...]) -> list[Frame]:
    return list(stack[-2:])


def _frame(f: Frame, width: int) -> str:
    s = f"{f.file}:{f.line}  {f.source.strip()}"
    return s if len(s) <= width else s[: width - 3] + "..."


def _metrics_line(m: Metrics) -> str:
    if m.stats_only:
        return f"statistics only: |d mean| {m.extra.get('mean', 0):.3g}, |d l2| {m.extra.get('l2', 0):.3g}"
    return (f"max|a-b| {m.max_abs:.3g} at {list(m.argmax)}  mean {m.mean_abs:.3g}  rel-L2 {m.rel_l2:.3g}"
            f"  cos {m.cosine:.6f}")


def _left_clip(text: str, n: int) -> str:
    return text if len(text) <= n else "..." + text[-max(n - 3, 1):]


def _wrap(head: str, items: list[str], width: int) -> list[str]:
    lines, cur = [], head
    for it in items:
        add = it if cur == head else ", " + it
        if len(cur) + len(add) > width and cur != head:
            lines.append(cur + ",")
            cur = " " * len(head) + it
        else:
            cur += add
    lines.append(cur)
    return lines


def _clip(names: list[str], n: int = 3) -> str:
    if not names:
        return "-"
    return ", ".join(names[:n]) + (f" (+{len(names) - n})" if len(names) > n else "")


def _finite(x: float) -> float:
    return x if math.isfinite(x) else 1e300


def _cls(dtype: str) -> str:
    return dtype if dtype in _EPS else "float32"


def _clean(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


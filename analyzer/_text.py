"""Text renderings of a comparison: the terminal summary (80 columns), report.txt blocks,
and the pairing printed by ``padiff-trace align``."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

from padiff_trace import Frame

if TYPE_CHECKING:
    from ._metrics import Metrics
    from ._pairing import Alignment
    from ._report import PairResult, Report

__all__ = ["alignment_text", "blocks_text", "summary_text"]

# how a call pair was made (``CallPair.how``) -> its note in ``padiff-trace align``
_HOW_TEXT = {"order": "", "root": " (root)", "mapping": " (mapping)", "anchor": " (anchor: weights matched)",
             "type": " (TYPE DIFFERENCE)"}


def summary_text(report: Report, width: int = 80) -> str:
    a, b = report.a, report.b
    L: list[str] = []
    verdict = "DIVERGED" if report.failed else "ALIGNED"
    L.append(f"padiff-trace compare: {verdict}  (mode {report.mode}, {report._tol_text()})")
    for side, v, tail in (("A", a, ""), ("B", b, "  (reference)")):
        head = f"  {side} {v.framework} {v.trace.meta.get('framework_version', '')}  "
        L.append(head + _left_clip(v.path, width - len(head) - len(tail)) + tail)
    counts: dict[str, list[int]] = {}
    for p in report.pairs:
        c = counts.setdefault(p.role, [0, 0])
        c[0] += 1
        c[1] += 0 if p.passed else 1
    L.extend(_wrap("  pairs: ", [f"{k} {v[0]} ({v[1]} fail)" for k, v in counts.items()], width))
    al = report.alignment
    n_type = len(al.type_differences)
    L.append(
        f"  calls: {len(al.pairs)} paired"
        + (f" ({n_type} of different type)" if n_type else "")
        + f", {len(al.unpaired_a)} only in A, {len(al.unpaired_b)} only in B"
        + (f", {len(al.hidden_a)}/{len(al.hidden_b)} inside black boxes" if al.hidden_a or al.hidden_b else "")
    )
    L.extend(_referee_lines(report, width))
    wa, wb = report.unpaired.get("weights_a", []), report.unpaired.get("weights_b", [])
    if wa or wb:
        L.append(f"  weights unpaired: A {_clip(wa)}; B {_clip(wb)}")
    d = report.first_divergence
    if d is not None:
        p = d.pair
        L.append("")
        L.append(f"First divergence: step {p.step}, {p.role} ({p.reason})")
        if d.type_difference is not None:
            L.append(f"  type difference: A {d.type_difference[0]} vs B {d.type_difference[1]}"[:width])
        if p.referee is not None:
            L.append(f"  class: {p.cls}" + _class_hint(p, report.referees))
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
            if not d.inputs_failed and d.type_difference is not None:
                L.append("  -> same inputs, different module types: the type difference is the cause")
            elif not d.inputs_failed:
                L.append("  -> the error starts inside this module call")
            else:
                L.append("  -> it received wrong inputs: look at the code that produced them")
        elif p.role == "input":
            L.append("  -> earlier recorded outputs match: look at the code between them and this call")
    if report.amplifiers:
        L.append("")
        L.append("Top error amplifiers (output rel-L2 / max(input rel-L2, eps)):")
        for k, x in enumerate(report.amplifiers[:5], 1):
            L.append(
                f" {k}. x{x.ratio:<9.3g} {x.call_pair.a.label} [{x.call_pair.a.module_type}]"
                f" <-> {x.call_pair.b.label}"
            )
            L[-1] = L[-1][:width]
            L.append(f"      in {x.in_rel_l2:.2e} -> out {x.out_rel_l2:.2e}")
    nf = report.first_nonfinite
    if nf["a"] or nf["b"]:
        L.append("")
        for side in ("a", "b"):
            r = nf[side]
            L.append(f"First NaN/Inf in {side.upper()}: " + (f"{r.name} ({r.kind.label}, step {r.step})" if r else "none"))
    return "\n".join(L)


def _referee_lines(report: Report, width: int) -> list[str]:
    ref = report.referees
    L: list[str] = []
    if ref is not None:
        head = f"  float64 referee of {ref['reference_model']}'s model: "
        L.append(head + _left_clip(ref["reference"], width - len(head)))
        if ref.get("reference_b"):
            head = "  float64 referee of the other model: "
            L.append(head + _left_clip(ref["reference_b"], width - len(head)))
        classes: dict[str, int] = {}
        for p in report.pairs:
            if p.cls is not None:
                classes[p.cls] = classes.get(p.cls, 0) + 1
        L.extend(_wrap("  classes: ", [f"{k} {v}" for k, v in classes.items()], width))
    noisy = sum(1 for p in report.pairs if p.noise is not None and p.noise["within"] and p.metrics and p.metrics.max_abs > 0)
    if noisy:
        L.append(f"  within the estimated fp32 noise floor: {noisy} of {len(report.pairs)} pairs")
    return L


def blocks_text(report: Report) -> str:
    L = [summary_text(report), "", "=" * 60]
    for p in report.pairs:
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
        how = _HOW_TEXT.get(cp.how, f" ({cp.how})")
        if cp.how == "mapping" and cp.blackbox:
            how = " (mapping, black box)"
        L.append(f"  {cp.a.label} [{cp.a.module_type}]  <->  {cp.b.label} [{cp.b.module_type}]{how}")
    for side, calls in (("A", al.unpaired_a), ("B", al.unpaired_b)):
        L.append(f"only in {side}: {len(calls)}")
        L.extend(f"  {c.label} [{c.module_type}]" for c in calls)
    return "\n".join(L)


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

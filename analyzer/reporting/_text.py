"""Text renderings of a comparison: the terminal summary (80 columns), report.txt blocks,
and the pairing printed by ``padiff-trace align``."""

from __future__ import annotations

import io
import textwrap
from typing import TYPE_CHECKING, TextIO

from padiff_trace import Frame, visible

from ..judging._metric_table import shown
from ._steps import steps_text

if TYPE_CHECKING:
    from ..alignment._pairing import Alignment
    from ..judging._metric_table import Metrics
    from ._contents import Finding, ReportData

__all__ = ["alignment_text", "blocks_text", "finding_lines", "summary_text", "write_blocks"]

# how a call pair was made (``CallPair.how``) -> its note in ``padiff-trace align``
_HOW_TEXT = {"order": "", "root": " (root)", "mapping": " (mapping)", "anchor": " (anchor: weights matched)",
             "type": " (TYPE DIFFERENCE)", "shape": " (SHAPE DIFFERENCE: same type and inputs)"}


def summary_text(report: ReportData, width: int = 80) -> str:
    """The terminal summary: verdict, counts, the first divergence with both stacks and the
    report's diagnosis (``Report.diagnosis``), amplifiers. Lines fit ``width`` columns; trace
    strings have their control characters made visible."""
    a, b = report.a, report.b
    L: list[str] = []
    verdict = report.verdict
    L.append(f"padiff-trace compare: {verdict}  (mode {report.mode}, {report.tolerance_text()})")
    for side, v, tail in (("A", a, ""), ("B", b, "  (reference)")):
        head = f"  {side} {v.framework} {v.trace.meta.get('framework_version', '')}  "
        L.append(head + _left_clip(visible(v.path), width - len(head) - len(tail)) + tail)
    counts = report.pairs.role_counts() if len(report.pairs) else {}
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
    for f in report.diagnosis:
        if f.topic != "first_divergence":
            L += finding_lines(f, width)
    d = report.first_divergence
    if d is not None:
        p = d.pair
        L.append("")
        L += textwrap.wrap(visible(f"First divergence: step {p.step}, {p.role} ({p.reason})"), width, subsequent_indent="  ")
        for side, r in (("A", p.a), ("B", p.b)):
            head, tail = f"  {side} {visible(r.name)}", f"  [{visible(r.module_type or '-')}] {r.dtype}{list(r.shape)}"
            if len(head) + len(tail) <= width:
                L.append(head + tail)
            else:  # long module paths: name on its own line (tail kept), details below
                L.append(head if len(head) <= width else f"  {side} ..." + head[-(width - 8):])
                L.append("    " + tail.strip())
            for fr in _where(r.stack):
                L.append("      " + _frame(fr, width - 6))
        if p.metrics is not None:
            L += _wrap("  ", _metric_items(p.metrics), width, sep="  ")
        for f in report.diagnosis:
            if f.topic == "first_divergence":
                L += finding_lines(f, width)
    if report.amplifiers:
        L.append("")
        L.append("Top error amplifiers (output rel-L2 / max(input rel-L2, eps)):")
        for k, x in enumerate(report.amplifiers[:5], 1):
            at = f"step {x.call_pair.a.step}: " if len(report.steps) > 1 else ""
            L.append(
                f" {k}. x{x.ratio:<9.3g} {at}{x.call_pair.a.label} [{x.call_pair.a.module_type}]"
                f" <-> {x.call_pair.b.label}"
            )
            L[-1] = _fit(L[-1], width, force=True)
            L.append(f"      in {x.in_rel_l2:.2e} -> out {x.out_rel_l2:.2e}")
    if len(report.steps) > 1:
        L.append("")
        L.extend(steps_text(report.steps).splitlines())
    nf = report.first_nonfinite
    if nf["a"] or nf["b"]:
        L.append("")
        for side in ("a", "b"):
            rec = nf[side]
            L.append(f"First NaN/Inf in {side.upper()}: " + (f"{rec.name} ({rec.kind.label}, step {rec.step})" if rec else "none"))
    return "\n".join(_fit(line, width) for line in L)


def finding_lines(f: Finding, width: int = 80) -> list[str]:
    """One finding of the diagnosis as terminal lines: facts indented, conclusions after '->'."""
    text = visible(f.text)
    if f.hint:
        return textwrap.wrap(text, width, initial_indent="  -> ", subsequent_indent="     ")
    return textwrap.wrap(text, width, initial_indent="  ", subsequent_indent="    ")


def _referee_lines(report: ReportData, width: int) -> list[str]:
    ref = report.referees
    L: list[str] = []
    if ref is not None:
        head = f"  float64 referee of {ref['reference_model']}'s model: "
        L.append(head + _left_clip(visible(ref["reference"]), width - len(head)))
        if ref.get("reference_b"):
            head = "  float64 referee of the other model: "
            L.append(head + _left_clip(visible(ref["reference_b"]), width - len(head)))
        classes: dict[str, int] = {}
        for i in sorted(report.pairs.referees):
            cls = report.pairs.referees[i]["class"]
            classes[cls] = classes.get(cls, 0) + 1
        L.extend(_wrap("  classes: ", [f"{k} {v}" for k, v in classes.items()], width))
    return L


def blocks_text(report: ReportData) -> str:
    """report.txt as one string (``write_blocks``)."""
    buf = io.StringIO()
    write_blocks(report, buf)
    return buf.getvalue()


def write_blocks(report: ReportData, out: TextIO) -> None:
    """report.txt, written pair by pair: the summary, then one block per pair with the metrics
    the table marks ``txt``."""
    out.write("\n".join(visible(line) for line in [*summary_text(report).split("\n"), "", "=" * 60]) + "\n")
    defs = shown("txt")
    for p in report.pairs:
        L = [f"{p.index}  step {p.step} {p.role}  {'ok' if p.passed else 'FAIL'}" + (f"  [{p.cls}]" if p.cls else "")]
        if p.referee is not None:
            r = p.referee
            L.append(f"  vs float64: A {r['rel_err_a']:.3g}, B {r['rel_err_b']:.3g} (relative RMS)")
        m, noise, a, b, reason = p.metrics, p.noise, p.a, p.b, p.reason
        if noise is not None and m is not None and m.max_abs > 0:
            L.append(f"  rms diff {noise['diff_rms']:.3g} = x{noise['ratio']:.3g} the estimated fp32 noise")
        L.append(f"  A {a.name} [{a.module_type}] {a.dtype}{list(a.shape)}")
        L.append(f"  B {b.name} [{b.module_type}] {b.dtype}{list(b.shape)}")
        if m is not None and not m.uncomparable:
            L += [f"  {d.title}: {d.text(m.values.get(d.name))}" for d in defs]
        if reason:
            L.append(f"  {reason}")
        L.append("=" * 60)
        out.write("\n".join(visible(line) for line in L) + "\n")


def alignment_text(al: Alignment) -> str:
    """The call pairing, one line per pair, then what stayed unpaired (control characters of
    trace strings made visible)."""
    L = [f"{len(al.pairs)} paired calls (A {al.a.path} | B {al.b.path})"]
    for cp in al.pairs:
        how = _HOW_TEXT.get(cp.how, f" ({cp.how})")
        if cp.how == "mapping" and cp.blackbox:
            how = " (mapping, black box)"
        L.append(f"  {cp.a.label} [{cp.a.module_type}]  <->  {cp.b.label} [{cp.b.module_type}]{how}")
    for side, calls in (("A", al.unpaired_a), ("B", al.unpaired_b)):
        L.append(f"only in {side}: {len(calls)}")
        L.extend(f"  {c.label} [{c.module_type}]" for c in calls)
    return "\n".join(visible(line) for line in L)


def _where(stack: tuple[Frame, ...]) -> list[Frame]:
    return list(stack[-2:])


def _frame(f: Frame, width: int) -> str:
    s = f"{f.file}:{f.line}  {f.source.strip()}"
    return s if len(s) <= width else s[: width - 3] + "..."


def _metric_items(m: Metrics) -> list[str]:
    """The metrics the table marks ``summary``, as 'label value' items (max|a-b| with its index)."""
    if m.uncomparable:
        return [f"not compared: {m.uncomparable}"]
    if m.stats_only:
        return [f"statistics only: |d mean| {m.extra.get('mean', 0):.3g}, |d l2| {m.extra.get('l2', 0):.3g}"]
    items = []
    for d in shown("summary"):
        item = f"{d.short or d.title} {d.text(m.values.get(d.name))}"
        if d.name == "max_abs" and m.argmax:
            item += f" at {list(m.argmax)}"
        items.append(item)
    return items


def _fit(line: str, width: int, force: bool = False) -> str:
    """``line`` with its control characters made visible; clipped to ``width`` when that made it
    longer (or with ``force``), so escapes never push a line past the terminal."""
    v = visible(line)
    if len(v) <= width or (v == line and not force):
        return v
    return v[: width - 3] + "..."


def _left_clip(text: str, n: int) -> str:
    return text if len(text) <= n else "..." + text[-max(n - 3, 1):]


def _wrap(head: str, items: list[str], width: int, sep: str = ", ") -> list[str]:
    lines, cur = [], head
    for it in items:
        add = it if cur == head else sep + it
        if len(cur) + len(add) > width and cur != head:
            lines.append(cur + sep.rstrip())
            cur = " " * len(head) + it
        else:
            cur += add
    lines.append(cur)
    return lines


def _clip(names: list[str], n: int = 3) -> str:
    if not names:
        return "-"
    return ", ".join(names[:n]) + (f" (+{len(names) - n})" if len(names) > n else "")

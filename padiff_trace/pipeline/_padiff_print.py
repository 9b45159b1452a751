"""The printout of ``auto_diff`` in PaDiff's familiar shape: max output diff, what was
compared, SUCCESS/FAILED, the first divergence with both stacks.

This text is the product's output, not a log: ``emit`` writes it to ``sys.stdout``
explicitly (looked up at call time, so ``contextlib.redirect_stdout`` and pytest's capture
see it). Diagnostics of the machinery go to ``logging`` as everywhere else.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Protocol

__all__ = ["PREFIX", "Printable", "emit", "result_text", "start_text"]

PREFIX = "[AutoDiff]"

# record role -> the stage PaDiff's message names
STAGES = {
    "model_input": "Forward Stage", "input": "Forward Stage", "output": "Forward Stage", "probe": "Forward Stage",
    "loss": "Forward Stage (loss)", "op_input": "Forward Stage (op)", "op_output": "Forward Stage (op)",
    "grad_output": "Backward Stage", "grad_input": "Backward Stage", "op_grad_output": "Backward Stage (op)",
    "param": "Weights", "buffer": "Weights (buffers)", "param_grad": "Weight grads",
}

class Printable(Protocol):
    """What the printout reads from a result (``AutoDiffResult``)."""

    @property
    def report(self) -> Any: ...

    @property
    def report_dir(self) -> Path: ...

    @property
    def max_output_diff(self) -> float | None: ...

    @property
    def verdict(self) -> str: ...

    @property
    def first_divergence(self) -> Any: ...

    @property
    def titles(self) -> tuple[str, str]: ...

    def compare_command(self) -> list[str]: ...


def emit(text: str) -> None:
    """Write ``text`` (a line or several) to the current ``sys.stdout``."""
    out = sys.stdout
    out.write(text + "\n")
    out.flush()


def start_text(a: Any, b: Any, directory: Any) -> str:
    """First lines, printed before the models run."""
    return (
        f"{PREFIX} Start auto_diff: {a.framework} {type(a.model).__name__} (A) then {b.framework} "
        f"{type(b.model).__name__} (B), recorded one after the other in this process\n"
        f"{PREFIX} Traces and report go to {directory}"
    )


def _count(report: Any, stages: tuple[str, ...]) -> tuple[int, int, int]:
    ps = [p for p in report.pairs if STAGES.get(p.role, "Forward Stage").split(" (")[0] in stages]
    return len(ps), sum(not p.passed for p in ps), len({p.step for p in ps})


def _stack(title: str, rec: Any) -> list[str]:
    lines = [f"{title} Stacks ({rec.name}):", "========================="]
    for f in rec.stack:
        lines.append(f"    File {f.file}: {f.line}    {f.function}")
        lines.append(f"        {f.source}")
    if not rec.stack:
        lines.append("    (no user frames recorded)")
    return lines


def _divergence_lines(result: Printable) -> list[str]:
    """PaDiff's failure block: where, which layer types, how much, then the analyzer's
    diagnosis (never one of our own) and both stacks. The stacks are those of the first
    differing value the analyzer located on each side (the call whose inline code made the
    error shows its child's input there), else of the first failing pair."""
    d = result.first_divergence
    if d is None:
        return []
    p = d.pair
    lines = [
        f"{PREFIX}     Diff found in {STAGES.get(p.role, p.role)} in step: {p.step}, {p.role} {p.a.position} of "
        f"`{p.a.module or '<root>'}` vs `{p.b.module or '<root>'}` (call {p.a.call_index} vs {p.b.call_index})",
        f"{PREFIX}     Type of layer is: {p.a.module_type or '-'} vs {p.b.module_type or '-'}",
    ]
    m = p.metrics
    how = f"max |a-b| {m.max_abs:.3e}, mean |a-b| {m.mean_abs:.3e}, relative L2 {m.rel_l2:.3e} ({p.reason})" if m else p.reason
    lines.append(f"{PREFIX}     {how}")
    for f in result.report.diagnosis:
        if f.topic == "first_divergence":
            lines.append(f"{PREFIX}     {'-> ' if f.hint else ''}{f.text}")
    loc = d.located
    recs = (loc.a.first, loc.b.first) if loc is not None and loc.a.first is not None and loc.b.first is not None else (p.a, p.b)
    a_title, b_title = result.titles
    return [*lines, "", "", *_stack(a_title, recs[0]), *_stack(b_title, recs[1])]


def result_text(result: Printable) -> str:
    """The closing printout of one ``auto_diff`` call."""
    report = result.report
    lines = [f"{PREFIX} Max output diff is {result.max_output_diff}" if result.max_output_diff is not None
             else f"{PREFIX} Max output diff: the model outputs were not paired (see the report)", ""]
    n_w, bad_w, _ = _count(report, ("Weights", "Weight grads"))
    if bad_w:
        lines.append(f"{PREFIX} Differences in weight or grad !!! ({bad_w} of {n_w} pairs)")
    elif n_w:
        lines.append(f"{PREFIX} weight and weight.grad is compared ({n_w} pairs).")
    for stage, word in (("Forward Stage", "forward"), ("Backward Stage", "backward")):
        n, bad, steps = _count(report, (stage,))
        if n:
            lines.append(f"{PREFIX} {word} {steps} step(s) compared: {n} pairs, {bad} failed.")
    lines.append(f"{PREFIX} {result.verdict} !!!")
    lines += _divergence_lines(result)
    if result.first_divergence is not None:
        lines.append("")
    lines.append(f"{PREFIX} Check reports at `{result.report_dir}`")
    lines.append(f"{PREFIX} Compare again: {' '.join(result.compare_command())}")
    return "\n".join(lines)

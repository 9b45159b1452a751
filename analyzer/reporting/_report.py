"""The comparison result: verdict, first divergence, amplifiers, diagnosis, and its files.

``Report`` gathers what judging found (the first divergence: ``_divergence``; amplifiers:
``_amplifiers``; the environment, precision and per-step views) and is the one type the
caller holds. ``Report.diagnosis`` (``_diagnosis``) says what the comparison means, once, for
every renderer; the diagnosis and the renderers read a report as ``_contents.ReportData``.
``Report.write(dir)`` writes the registered formats (``_formats.FORMATS``):
``report.txt`` (one block per pair), ``report.json`` (schema_version 1, documented in
docs/analyzer.md), ``pairs.csv`` and ``report.html``, all replaced together (``_atomic``).
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from padiff_trace import Record, Trace
from padiff_trace.matching import WeightMap

from ..judging._amplifiers import amplifiers
from ..judging._divergence import Divergence, first_divergence
from ..judging._environment import EnvDifference, environment_differences
from ..judging._metric_table import METRICS
from ..judging._metrics import DEFAULT_TOLERANCES
from ..judging._optimizer import OptimizerDiff
from ..judging._pairtable import PAIR_SECTIONS, PairSubset, PairTable, pair_section, record_dict
from ..judging._precision import precision_diff
from ..judging._randomness import RandomDraws
from ._contents import Finding
from ._diagnosis import diagnose
from ._formats import write_report
from ._html import divergence_html
from ._steps import first_off, step_rows
from ._text import summary_text

if TYPE_CHECKING:
    from ..alignment._calls import TraceView
    from ..alignment._pairing import Alignment

__all__ = ["Report", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1


class Report:
    """Outcome of ``analyzer.compare``: pairs in execution order, verdict, diagnosis."""

    def __init__(
        self,
        a: TraceView,
        b: TraceView,
        alignment: Alignment,
        pairs: PairTable,
        mode: str,
        atol: float | None,
        rtol: float | None,
        unpaired: dict[str, list[str]],
        referees: dict[str, Any] | None = None,
        weight_map: WeightMap | None = None,
        missing: list[str] | None = None,
        allow_partial: bool = False,
        same_trace: bool = False,
        conventions: list[dict[str, Any]] | None = None,
        randomness: tuple[RandomDraws, RandomDraws] | None = None,
        optimizer: OptimizerDiff | None = None,
        opened: Sequence[Trace] = (),
    ) -> None:
        self.a, self.b, self.alignment, self.pairs = a, b, alignment, pairs
        self._opened = tuple(opened)  # the traces compare() opened for this report: ``close`` closes them
        self.weight_map = weight_map  # how weights and parameter gradients were paired
        self.mode, self.atol, self.rtol = mode, atol, rtol
        self.unpaired = unpaired
        self.referees = referees  # {reference, reference_model: "A"|"B", reference_b} or None
        self.failed: PairSubset = pairs.subset(pairs.failing)
        self.damaged: PairSubset = pairs.subset(pairs.damaged)
        self.missing = list(missing or ())  # why the comparison does not cover both runs whole
        self.allow_partial = allow_partial
        self.same_trace = same_trace
        # differences between two correct libraries, explained (boundary differences, conventions)
        self.conventions: list[dict[str, Any]] = list(conventions or ())
        self.randomness = randomness  # each trace's random draws inside forward (replayed or not)
        self.optimizer = optimizer  # the two optimizers compared (None: neither trace has one)
        # numerics settings that differ between the two recordings (TF32, threads, oneDNN, ...: ``_environment``)
        self.environment: list[EnvDifference] = environment_differences(a.trace.meta, b.trace.meta)
        self.first_divergence: Divergence | None = first_divergence(pairs, a, b)
        self.amplifiers, by_step = amplifiers(pairs, a)
        self.first_nonfinite = {"a": _first_nonfinite(a), "b": _first_nonfinite(b)}
        self.steps = step_rows(pairs, a, b) if len(pairs) else []  # the per-step view (``_steps``)
        for row in self.steps:  # amplifiers ranked within a step: each step's strongest
            x = by_step.get(row["step"])
            row["amplifier"] = None if x is None else {"a": x.call_pair.a.label, "b": x.call_pair.b.label, "ratio": x.ratio}
        self.precision = precision_diff(pairs, a, b)  # outputs computed in different dtypes (autocast, ``_precision``)
        self.diagnosis: list[Finding] = diagnose(self)  # what it means, for every renderer (``_diagnosis``)

    def module_divergence(self) -> Divergence | None:
        """The first divergence among module-level records: where it is an op record (``--ops``),
        the first module call pair that differs, located as a run without op records locates it."""
        d = self.first_divergence
        if d is None or not d.pair.role.startswith("op_"):
            return d
        return first_divergence(self.pairs, self.a, self.b, modules_only=True)

    @property
    def verdict(self) -> str:
        """DIVERGED (a pair failed on its numbers), INCOMPLETE (nothing failed, but a trace is
        unfinished or damaged — damaged pairs are never differences — and no partial comparison
        was asked for) or ALIGNED."""
        if self.failed:
            return "DIVERGED"
        return "INCOMPLETE" if (self.missing or self.damaged) and not self.allow_partial else "ALIGNED"

    @property
    def exit_code(self) -> int:
        """0 aligned, 1 diverged, 3 incomplete (2 is the CLI's: bad input, nothing usable)."""
        return {"DIVERGED": 1, "INCOMPLETE": 3, "ALIGNED": 0}[self.verdict]

    @property
    def passed(self) -> bool:
        return self.verdict == "ALIGNED"

    def add_convention(self, text: str) -> None:
        """Say one more difference between two correct implementations that the comparison
        accounts for (``run`` confirming a pairing by the values), in every rendering."""
        self.conventions.append({"kind": "convention", "text": text})
        self.diagnosis = diagnose(self)

    # ------------------------------------------------------------ the traces it reads
    def close(self) -> None:
        """Close the traces ``compare`` opened for this report (their files; a later read of a
        pair's values opens them again). ``with analyzer.compare(a, b) as report:`` does it."""
        for t in self._opened:
            t.close()

    def __enter__(self) -> Report:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ text
    def summary_text(self, width: int = 80) -> str:
        return summary_text(self, width)

    def __repr__(self) -> str:
        """The terminal summary: what a notebook or the REPL shows for a report."""
        return self.summary_text()

    def _repr_html_(self) -> str:
        """Notebooks: the verdict, the first divergence with both stacks, then the terminal summary."""
        verdict = self.verdict
        return (
            '<div class="padiff-trace-report"><style>.padiff-trace-report .stack{white-space:pre;font-family:monospace}'
            f"</style><h3>padiff-trace compare: {verdict}</h3><h4>First divergence</h4>{divergence_html(self)}"
            f"<details><summary>summary</summary><pre>{html.escape(self.summary_text())}</pre></details></div>"
        )

    def tolerance_text(self) -> str:
        """How pairs were judged, in words (the terminal summary, report.txt, report.html)."""
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
    def to_dict(self, pairs: bool = True) -> dict[str, Any]:
        """Everything report.json holds; ``pairs=False`` leaves out the lists that grow with the
        traces - the call alignment and the three per-pair lists (report.json streams them)."""
        d = self.first_divergence
        sections: dict[str, list[dict[str, Any]]] = {k: [] for k in PAIR_SECTIONS}
        for p in self.pairs if pairs else ():
            sections[pair_section(p.role)].append(p.as_dict())
        head = {
            "schema_version": SCHEMA_VERSION,
            "verdict": self.verdict.lower(),
            "missing": self.missing,
            "exit_code": self.exit_code,
            "options": {"mode": self.mode, "atol": self.atol, "rtol": self.rtol},
            "referees": self.referees,
            "a": _trace_dict(self.a),
            "b": _trace_dict(self.b),
            "counts": {"pairs": len(self.pairs), "failed": len(self.failed), "damaged": len(self.damaged)},
            **({"alignment": list(self.alignment_rows())} if pairs else {}),
            "unpaired": self.unpaired,
            "type_differences": [
                {"a": cp.a.label, "b": cp.b.label, "a_type": cp.a.module_type, "b_type": cp.b.module_type}
                for cp in self.alignment.type_differences
            ],
            "first_divergence": None
            if d is None
            else {
                "index": d.pair.index,
                "input_rel_l2": d.input_rel_l2,
                "inputs_failed": d.inputs_failed,
                "located": d.located.as_dict() if d.located is not None else None,
                "type_difference": None
                if d.type_difference is None
                else {"a": d.type_difference[0], "b": d.type_difference[1]},
            },
            "amplifiers": [
                {"a": x.call_pair.a.label, "b": x.call_pair.b.label, "step": x.call_pair.a.step, "in_rel_l2": x.in_rel_l2,
                 "out_rel_l2": x.out_rel_l2, "ratio": x.ratio}
                for x in self.amplifiers
            ],
            "first_nonfinite": {k: (record_dict(r) if r else None) for k, r in self.first_nonfinite.items()},
            "diagnosis": [f.as_dict() for f in self.diagnosis],
            "environment": [x.as_dict() for x in self.environment],
            "steps": self.steps,
            "first_step_off": first_off(self.steps),
            "optimizer": self.optimizer.as_dict() if self.optimizer is not None else None,
            "randomness": {k: r.as_dict() for k, r in zip("ab", self.randomness)} if self.randomness else None,
            "precision": self.precision.as_dict(),
            "metric_descriptions": {name: d.description for name, d in METRICS.items()},
        }
        return {**head, **sections} if pairs else head

    def alignment_rows(self) -> Iterator[dict[str, Any]]:
        """report.json's ``alignment``: one entry per paired call."""
        for cp in self.alignment.pairs:
            yield {"a": cp.a.label, "b": cp.b.label, "a_type": cp.a.module_type, "b_type": cp.b.module_type, "how": cp.how}

    def write(self, directory: str | os.PathLike[str], formats: Iterable[str] | None = None) -> Path:
        """Write the report files into ``directory`` (default: report.txt, report.json, pairs.csv,
        report.html; ``formats`` names some of ``_formats.FORMATS``). All files are replaced
        together (a directory swap, ``_atomic.write_report_dir``); on an error the previous report
        stays exactly as it was, every file (``TraceWriteError``)."""
        return write_report(self, directory, formats)


def _trace_dict(v: TraceView) -> dict[str, Any]:
    m = v.trace.meta
    return {"path": v.path, "framework": v.framework, "framework_version": m.get("framework_version"),
            "device": m.get("device"), "complete": v.trace.complete}


def _first_nonfinite(v: TraceView) -> Record | None:
    t = v.trace.table
    if not len(t):
        return None
    bad = np.flatnonzero((v.trace.stat_columns("nan", "inf") > 0).any(axis=1))
    return v.trace[int(t["seq"][bad[0]])] if len(bad) else None

"""The comparison result: verdict, first divergence, amplifiers, diagnosis, and its files.

``Report.diagnosis`` (``_diagnosis``) says what the comparison means, once, for every
renderer. ``Report.write(dir)`` writes the registered formats (``_formats.FORMATS``):
``report.txt`` (one block per pair), ``report.json`` (schema_version 1, documented in
docs/analyzer.md), ``pairs.csv`` and ``report.html``, all replaced together (``_atomic``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from padiff_trace import Record
from padiff_trace.matching import WeightMap

from ._culprit import Located, locate
from ._diagnosis import Finding, diagnose
from ._environment import EnvDifference, environment_differences
from ._formats import write_report
from ._metric_table import METRICS
from ._metrics import DEFAULT_TOLERANCES
from ._optimizer import OptimizerDiff
from ._pairtable import PAIR_SECTIONS, PairResult, PairSubset, PairTable, pair_section, record_dict
from ._precision import precision_diff
from ._randomness import RandomDraws
from ._steps import first_off, step_rows
from ._text import alignment_text, summary_text

if TYPE_CHECKING:
    from ._calls import TraceView
    from ._pairing import Alignment, CallPair

__all__ = ["PairResult", "Report", "Divergence", "Amplifier", "SCHEMA_VERSION", "alignment_text"]

SCHEMA_VERSION = 1
_BLOCK = 1 << 16  # pairs turned into Python numbers at a time
_EPS = {"float64": 2.2e-16, "float32": 1.2e-7, "float16": 9.8e-4, "bfloat16": 7.8e-3}


@dataclass(eq=False)
class Divergence:
    pair: PairResult
    input_rel_l2: float | None  # worst relative L2 error of the call's inputs (None: unknown)
    inputs_failed: bool
    located: Located | None = None  # the module call that made the error, on each side (_culprit)

    @property
    def type_difference(self) -> tuple[str, str] | None:
        """(A's type, B's type) when the divergent call pair has different module types."""
        cp = self.pair.call_pair
        return (cp.a.module_type, cp.b.module_type) if cp is not None and cp.type_differs else None


@dataclass(eq=False)
class Amplifier:
    call_pair: CallPair
    in_rel_l2: float
    out_rel_l2: float
    ratio: float


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
    ) -> None:
        self.a, self.b, self.alignment, self.pairs = a, b, alignment, pairs
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
        self.first_divergence = self._first_divergence()
        self.amplifiers, by_step = self._amplifiers()
        self.first_nonfinite = {"a": _first_nonfinite(a), "b": _first_nonfinite(b)}
        self.steps = step_rows(pairs, a, b) if len(pairs) else []  # the per-step view (``_steps``)
        for row in self.steps:  # amplifiers ranked within a step: each step's strongest
            x = by_step.get(row["step"])
            row["amplifier"] = None if x is None else {"a": x.call_pair.a.label, "b": x.call_pair.b.label, "ratio": x.ratio}
        self.precision = precision_diff(pairs, a, b)  # outputs computed in different dtypes (autocast, ``_precision``)
        self.diagnosis: list[Finding] = diagnose(self)  # what it means, for every renderer

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

    # ------------------------------------------------------------ diagnosis
    def _first_divergence(self) -> Divergence | None:
        t = self.pairs
        if not len(self.failed):
            return None
        failed = t.failing
        is_input = t.role_mask("input", "op_input")
        outs = np.flatnonzero(failed & ~is_input)
        i = int(outs[0]) if len(outs) else int(self.failed.rows[0])  # rows are in execution order
        # an input that already failed before the first failing output is the earlier event
        early = np.flatnonzero(failed[:i] & is_input[:i])
        first = t[int(early[0]) if len(early) else i]
        located = locate(t, first, self.a, self.b)
        first = located.pair if located is not None else first
        cp = first.call_pair
        in_err, in_fail = None, False
        rows: np.ndarray | None = None
        if first.role.startswith("op_") and first.role != "op_input":  # the op's own inputs
            rows = t.role_mask("op_input") & (t.col("call_a") == first.a.call)
        elif cp is not None and first.role not in ("model_input", "input"):
            n = len(t.call_pairs)
            same = np.zeros(n + 1, dtype=bool)  # [-1]: no call pair
            same[:n] = np.fromiter((c.a is cp.a for c in t.call_pairs), bool, n)
            rows = same[t.col("cp")] & t.role_mask("input", "model_input")
        if rows is not None:
            errs = t.metric("rel_l2")[rows & t.has_metrics]
            in_err = float(errs.max()) if len(errs) else None
            in_fail = bool((rows & failed).any())
        return Divergence(first, in_err, in_fail, located)

    def _amplifiers(self, top: int = 10) -> tuple[list[Amplifier], dict[int, Amplifier]]:
        """Per paired call: output error / max(input error and its own weights' error, dtype
        eps), inputs and outputs of the call's own step. The ``top`` strongest, and the
        strongest of each step."""
        t = self.pairs
        if not len(t) or not t.call_pairs:
            return [], {}
        cps = t.call_pairs
        # a group per A call (a call pair of a later step re-pairs the same A call): numpy over
        # the columns, and an Amplifier only for the few that are listed
        ids, first_cp, group = np.unique(
            np.fromiter((c.a.id for c in cps), np.int64, len(cps)), return_index=True, return_inverse=True
        )
        group = np.append(group, -1)
        cp_step = np.append(np.fromiter((c.a.step for c in cps), np.int64, len(cps)), -1)
        cp = t.col("cp")
        sel = (cp >= 0) & t.has_metrics & (t.col("step") == cp_step[cp])
        bounds = [i for i, why in t.reasons.items() if why.startswith("boundary difference")]
        if bounds:  # a boundary difference is where two libraries draw a line, not an amplifier
            sel &= ~np.isin(cp, np.unique(cp[bounds]))
        rel = t.metric("rel_l2")
        rel = np.where(np.isfinite(rel), rel, 1e300)
        worst = {}
        for name, mask in (("in", t.role_mask("input", "model_input")), ("out", t.role_mask("output"))):
            rows = np.flatnonzero(sel & mask)
            w = np.full(len(ids), -np.inf)
            np.maximum.at(w, group[cp[rows]], rel[rows])
            worst[name] = w
            if name == "out":
                out_groups, at = np.unique(group[cp[rows]], return_index=True)
                first_out = np.full(len(ids), -1)
                first_out[out_groups] = rows[at]
        groups = np.flatnonzero(np.isfinite(worst["in"]) & np.isfinite(worst["out"]))
        # a call's own weights are inputs too: after an optimizer step they may differ, and a
        # layer fed equal activations but drifted weights is not amplifying anything
        own = self._weight_errors()
        if own:
            for g in groups.tolist():
                call = cps[first_cp[g]].a
                drift = own.get((call.step, call.module))
                if drift is not None and drift > worst["in"][g]:
                    worst["in"][g] = drift
        # the less precise side's eps: an fp32 call paired with its bf16 autocast twin rounds at bf16
        eps = np.fromiter((max(_EPS[_cls(t.record(int(r), s).dtype)] for s in (0, 1)) for r in first_out[groups]),
                          np.float64, len(groups))
        ratio = worst["out"][groups] / np.maximum(worst["in"][groups], eps) if len(groups) else np.zeros(0)
        del eps
        # a container whose jump is explained by a call inside it is not the culprit
        view = self.a
        best_inside: dict[int, float] = {}
        for lo in range(0, len(groups), _BLOCK):  # a block at a time: no list of a million numbers
            for g, r in zip(groups[lo : lo + _BLOCK].tolist(), ratio[lo : lo + _BLOCK].tolist()):
                for anc in view.ancestors(cps[first_cp[g]].a):
                    best_inside[anc.id] = max(best_inside.get(anc.id, 0.0), r)
        inside = np.zeros(len(ids))  # per group: the largest ratio of a call inside it
        if best_inside:
            keys = np.fromiter(best_inside, np.int64, len(best_inside))
            at = np.minimum(np.searchsorted(ids, keys), len(ids) - 1)
            hit = ids[at] == keys
            inside[at[hit]] = np.fromiter(best_inside.values(), np.float64, len(best_inside))[hit]
        bound = 10 * inside[groups]
        keep = np.flatnonzero((ratio > bound) & (ratio > 1.0)) if len(groups) else groups
        keep = keep[np.argsort(first_cp[groups[keep]], kind="stable")]  # ties: in call pair order
        def amp(k: int) -> Amplifier:
            g = groups[k]
            return Amplifier(cps[first_cp[g]], float(worst["in"][g]), float(worst["out"][g]), float(ratio[k]))

        amps = [amp(k) for k in keep.tolist()]
        amps.sort(key=lambda x: (-x.ratio, -x.call_pair.a.depth))
        best: dict[int, int] = {}  # step -> the index into ratio of its strongest
        for k in keep.tolist():
            st = cps[first_cp[groups[k]]].a.step
            if st not in best or ratio[k] > ratio[best[st]]:
                best[st] = k
        return amps[:top], {st: amp(k) for st, k in best.items()}

    def _weight_errors(self) -> dict[tuple[int, str], float]:
        """(step, A's module) -> the worst relative L2 error of the parameters in that step of the
        module and every module inside it (the root: all)."""
        t = self.pairs
        rows = np.flatnonzero(t.role_mask("param") & t.has_metrics) if len(t) else np.zeros(0, np.int64)
        if not len(rows):
            return {}
        rel = t.metric("rel_l2")
        steps = t.col("step")
        out: dict[tuple[int, str], float] = {}
        for r in rows.tolist():
            v = float(rel[r])
            if not np.isfinite(v):
                continue
            step, parts = int(steps[r]), t.record(r, 0).module.split(".")
            for k in range(len(parts) + 1):  # the module and each module holding it
                key = (step, ".".join(parts[:k]) if k < len(parts) else ".".join(parts))
                out[key] = max(out.get(key, 0.0), v)
        return out

    # ------------------------------------------------------------ text
    def summary_text(self, width: int = 80) -> str:
        return summary_text(self, width)

    def __repr__(self) -> str:
        """The terminal summary: what a notebook or the REPL shows for a report."""
        return self.summary_text()

    def _repr_html_(self) -> str:
        """Notebooks: the verdict, the first divergence with both stacks, then the terminal summary."""
        import html

        from ._html import _divergence_html

        verdict = self.verdict
        return (
            '<div class="padiff-trace-report"><style>.padiff-trace-report .stack{white-space:pre;font-family:monospace}'
            f"</style><h3>padiff-trace compare: {verdict}</h3><h4>First divergence</h4>{_divergence_html(self)}"
            f"<details><summary>summary</summary><pre>{html.escape(self.summary_text())}</pre></details></div>"
        )


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


def _cls(dtype: str) -> str:
    return dtype if dtype in _EPS else "float32"



"""``auto_diff``: PaDiff's call, on padiff-trace's machinery.

    from padiff_trace import auto_diff
    result = auto_diff(layer, module, (paddle_inputs, torch_inputs), options={"atol": 1e-4})

records the two models into two traces in this process, one after the other (A, then B
with A's weights and inputs), compares them with ``analyzer.compare`` and prints the
result in PaDiff's shape. Traces, mapping and report land in a fresh directory the result
points to; ``padiff-trace compare`` repeats the comparison from there.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import logging
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from padiff_trace import TraceExistsError, UserError
from padiff_trace.analyzer import Divergence, Report, compare
from padiff_trace.matching import WEIGHT_MAP_FILE, load_mapping
from padiff_trace.recorder import RecordOptions

from ._layermap import LayerMap, translate
from ._live import Side, make_sides, record_side, replay_into, single_step_replay
from ._padiff_options import AutoDiffSettings, parse_options
from ._padiff_print import emit, result_text, start_text

__all__ = ["AutoDiffResult", "LayerMap", "auto_diff", "divergence_arrays"]

logger = logging.getLogger(__name__)

RUNS_DIR = "padiff_trace_runs"  # default parent of the result directories, under the current directory


@dataclass(frozen=True, eq=False)
class AutoDiffResult:
    """What one ``auto_diff`` call found. True when the models agree (PaDiff returned a bool)."""

    passed: bool
    directory: Path  # the fresh directory holding everything below
    trace_a: Path  # model A (the first argument): weights and inputs come from it
    trace_b: Path  # model B as compared (its single-step trace with single_step=True)
    frameworks: tuple[str, str]
    report: Report
    report_dir: Path
    mapping: Path | None  # the layer_map as a mapping file (None without layer_map)
    weight_map: Path | None  # how A's weights were copied into B (auto_weights)
    max_output_diff: float | None
    settings: AutoDiffSettings

    @property
    def verdict(self) -> str:
        """``SUCCESS`` or ``FAILED``, as PaDiff printed it."""
        return "SUCCESS" if self.passed else "FAILED"

    @property
    def first_divergence(self) -> Divergence | None:
        """The earliest failing pair with both records (stacks included), or None."""
        return self.report.first_divergence

    @property
    def titles(self) -> tuple[str, str]:
        """How the printout names the two sides: ``Paddle``/``Torch`` (``A paddle``/``B paddle``
        when both models are of one framework)."""
        a, b = self.frameworks
        return (a.capitalize(), b.capitalize()) if a != b else (f"A {a}", f"B {b}")

    def divergence_arrays(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The first divergence's two tensors as numpy arrays (A's in B's layout), or None."""
        return divergence_arrays(self.report)

    def compare_command(self) -> list[str]:
        """The ``padiff-trace compare`` command line that repeats this comparison."""
        s = self.settings
        cmd = ["padiff-trace", "compare", str(self.trace_a), str(self.trace_b)]
        if self.mapping is not None:
            cmd += ["--mapping", str(self.mapping)]
        for flag, value in (("--atol", s.atol), ("--rtol", s.rtol)):
            if value is not None:
                cmd += [flag, repr(value)]
        if s.mode != "mean":
            cmd += ["--mode", s.mode]
        return cmd

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return f"<AutoDiffResult {self.verdict}: {self.frameworks[0]} vs {self.frameworks[1]}, {self.directory}>"

    def _repr_html_(self) -> str:
        html: str = self.report._repr_html_()
        return html


def divergence_arrays(report: Report) -> tuple[np.ndarray, np.ndarray] | None:
    """The tensors of ``report``'s first divergence as numpy arrays ``(a, b)``, A's brought
    into B's layout (a paddle Linear weight transposed); None when nothing diverged.

    Works on any ``analyzer.compare`` report while its traces exist."""
    d = report.first_divergence
    if d is None:
        return None
    p = d.pair
    a, b = _data(p.a), _data(p.b)
    if p.perm is not None and a.ndim == len(p.perm):
        a = np.transpose(a, p.perm)
    return a, b


def _data(rec: Any) -> np.ndarray:
    if not rec.has_data:
        raise UserError(f"{rec.name}: recorded as statistics only (stats-only or size cap); record again to read the tensor")
    rows = getattr(rec, "canonical_rows", None)  # a packed tensor's share (torch MHA in_proj rows)
    return np.asarray(rows().reshape(rec.shape)) if rows is not None else rec.read()


def _fresh_directory(out: str | os.PathLike[str] | None) -> Path:
    """``out`` (new or empty), or ``./padiff_trace_runs/<date-time>-<n>``, created here."""
    if out is not None:
        p = Path(out)
        if p.exists() and (not p.is_dir() or any(p.iterdir())):
            raise TraceExistsError(f"{p}: exists and is not empty; auto_diff writes into a fresh directory (pass another out=)")
        p.mkdir(parents=True, exist_ok=True)
        return p.resolve()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for n in itertools.count(1):
        p = Path(RUNS_DIR) / f"{stamp}-{n}"
        try:
            p.mkdir(parents=True)
        except FileExistsError:
            continue
        return p.resolve()
    raise AssertionError("unreachable")


def _pairs(old: Any, new: Any, old_name: str, new_name: str) -> tuple[Any, bool]:
    """(pair, by_framework): PaDiff 0.1/0.2's ``old_name`` is (paddle, torch); 0.3's ``new_name``
    follows the models' order."""
    if old is not None and new is not None:
        raise UserError(f"give {old_name}= (PaDiff 0.2, paddle first) or {new_name}= (PaDiff 0.3, models' order), not both")
    return (old, True) if old is not None else (new, False)


def auto_diff(
    layer: Any,
    module: Any,
    example_inp: Any,
    auto_weights: bool = True,
    layer_map: Any = None,
    options: dict[str, Any] | None = None,
    loss_fn: Any = None,
    steps: int = 1,
    *,
    optimizer: Any = None,
    out: str | os.PathLike[str] | None = None,
    layer_mapping: Any = None,
    loss_fns: Any = None,
    optimizers: Any = None,
    **kwargs: Any,
) -> AutoDiffResult:
    """Compare a Paddle model with its PyTorch port the way PaDiff's ``auto_diff`` does.

    Both models are recorded **in this process, one after the other** — the caller holds
    both objects, so both stay in memory; ``padiff-trace run`` records them in two
    processes (or on two machines) instead. Model A is ``layer`` (the first argument) and
    is recorded first; B (``module``) then gets A's weights (``auto_weights``, copied into
    it in place, as PaDiff did) and A's recorded inputs, and is recorded; the two traces
    are compared with ``analyzer.compare`` (B is the reference). Which model is paddle and
    which torch is read from their types, so either order works (two models of one
    framework too).

    Args (PaDiff's names and meanings):
        layer, module: the two models (PaDiff: the paddle Layer, then the torch Module).
        example_inp: PaDiff's pair of inputs, ``(paddle_inputs, torch_inputs)``, each a dict
            of keyword inputs (``layer(**paddle_inputs)``), or a tuple of positional ones;
            the pair is matched to the models by the framework of its tensors.
        auto_weights: copy A's weights into B first (PaDiff 0.3: ``auto_init``).
        layer_map: a ``LayerMap`` or ``{sublayer: submodule}`` dict (PaDiff 0.1:
            ``layer_mapping``); written as a mapping file next to the traces.
        options: PaDiff's options dict: atol, rtol, compare_mode, diff_phase, single_step,
            steps, auto_init (0.3 passes them as keywords: also accepted). Unknown names
            are an error listing the accepted ones.
        loss_fn: ``[paddle_loss, torch_loss]``, each taking the model output; default: the
            mean of the output (0.3's ``loss_fns`` follows the models' order).
        steps: training steps; ``optimizer=[paddle_opt, torch_opt]`` (optimizers, or
            callables that step and clear gradients) moves the weights between them.
        out: the result directory (new or empty); default ``./padiff_trace_runs/<time>-<n>``,
            a fresh one per call.

    Returns an ``AutoDiffResult`` (true when the models agree): verdict, first divergence,
    the report and the paths of the traces, mapping and report. The PaDiff-shaped summary
    is printed to stdout.
    """
    if not isinstance(auto_weights, bool):
        raise UserError(f"auto_weights must be True or False, got {type(auto_weights).__name__} (loss functions go to loss_fn=...)")
    base = parse_options({"steps": steps}, {}, AutoDiffSettings(auto_weights=auto_weights))
    settings = parse_options(options, kwargs, base)
    if layer_map is not None and layer_mapping is not None:
        raise UserError("give layer_map= or layer_mapping= (its PaDiff 0.1 name), not both")
    lmap = layer_map if layer_map is not None else layer_mapping
    if settings.single_step and (settings.steps > 1 or optimizer is not None or optimizers is not None):
        logger.warning("single_step: one step, no optimizer (as in PaDiff)")
    if not settings.backward and (settings.steps > 1 or optimizer is not None or optimizers is not None):
        logger.warning("diff_phase='forward': one step, no optimizer (as in PaDiff)")
    if settings.single_step or not settings.backward:
        settings = dataclasses.replace(settings, steps=1)
    with _info_not_logged():
        return _auto_diff(layer, module, example_inp, settings, lmap, loss_fn, loss_fns, optimizer, optimizers, out)


@contextlib.contextmanager
def _info_not_logged() -> Iterator[None]:
    """auto_diff prints its own summary; our INFO lines (weight maps, alignment counts) would
    interleave with it, since importing paddle sets the root logger to INFO. Unless the user set
    a level for the ``padiff_trace`` loggers, only warnings and errors are logged meanwhile."""
    log = logging.getLogger("padiff_trace")
    if log.level != logging.NOTSET:
        yield
        return
    log.setLevel(logging.WARNING)
    try:
        yield
    finally:
        log.setLevel(logging.NOTSET)


def _auto_diff(layer: Any, module: Any, example_inp: Any, settings: AutoDiffSettings, lmap: Any, loss_fn: Any,
               loss_fns: Any, optimizer: Any, optimizers: Any, out: Any) -> AutoDiffResult:
    a, b = make_sides((layer, module), example_inp, _pairs(loss_fn, loss_fns, "loss_fn", "loss_fns"),
                      _pairs(optimizer, optimizers, "optimizer", "optimizers"))
    translation = translate(lmap, (layer, module), (a.framework, b.framework))
    directory = _fresh_directory(out)
    emit(start_text(a, b, directory))
    for line in translation.lines:
        logger.info("layer_map: %s", line)
    mapping_path = _write_mapping(directory, translation.mapping_document())
    return _run(a, b, directory, settings, translation.exclude, mapping_path)


def _write_mapping(directory: Path, doc: dict[str, Any] | None) -> Path | None:
    if doc is None:
        return None
    path = directory / "mapping.json"
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return path


def _names(a: Side, b: Side) -> tuple[str, str]:
    if a.framework != b.framework:
        return a.framework, b.framework
    return f"{a.framework}-a", f"{b.framework}-b"


def _run(
    a: Side, b: Side, directory: Path, s: AutoDiffSettings, exclude: tuple[tuple[str, ...], tuple[str, ...]],
    mapping_path: Path | None,
) -> AutoDiffResult:
    name_a, name_b = _names(a, b)
    steps = s.steps
    meta = {"auto_diff": True, "steps": steps}
    trace_a = record_side(
        a, directory / f"{name_a}.trace", RecordOptions(exclude=exclude[0]), steps=steps, backward=s.backward,
        meta={**meta, "role": "A"}, train=not s.single_step,
    )
    mapping = load_mapping(mapping_path) if mapping_path is not None else None
    wm_path = replay_into(b, trace_a, mapping, weights=s.auto_weights, weight_map_file=directory / f"{name_b}.{WEIGHT_MAP_FILE}")
    opts_b = RecordOptions(exclude=exclude[1])
    meta_b = {**meta, "role": "B", "replayed_inputs": True, "replayed_weights": s.auto_weights}
    if s.single_step:
        trace_b = single_step_replay(b, trace_a, directory, mapping_path, opts_b, meta_b, name_b, s.backward)
    else:
        trace_b = record_side(b, directory / f"{name_b}.trace", opts_b, steps=steps, backward=s.backward, meta=meta_b)
    options: dict[str, Any] = {"mode": s.mode, "quiet": True}
    options.update({k: v for k, v in (("atol", s.atol), ("rtol", s.rtol), ("mapping", mapping_path)) if v is not None})
    report = compare(trace_a, trace_b, **options)
    report_dir = report.write(directory / "report")  # txt, json, csv (and html with plotly)
    outputs = [p.metrics.max_abs for p in report.pairs if p.role == "output" and p.a.module == "" and p.metrics is not None]
    result = AutoDiffResult(
        passed=report.passed, directory=directory, trace_a=trace_a, trace_b=trace_b, frameworks=(a.framework, b.framework),
        report=report, report_dir=report_dir, mapping=mapping_path, weight_map=wm_path,
        max_output_diff=float(max(outputs)) if outputs else None, settings=s,
    )
    emit(result_text(result))
    return result

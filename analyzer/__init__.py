"""The analyzer: two traces -> alignment -> metrics -> report. numpy + h5py only.

    report = analyzer.compare("runs/paddle", "runs/torch", mode="mean")
    report.write("runs/report")          # report.txt, report.json, pairs.csv, report.html
    text, code = report.summary_text(), report.exit_code   # 0 aligned, 1 diverged
"""

from __future__ import annotations

from padiff_trace.matching import Mapping, MappingEntry, WeightMap, WeightPair, load_mapping

from ._compare import CompareOptions, align, compare, weight_map
from ._diagnosis import Finding
from ._formats import FORMATS, ReportFormat
from ._html import write_html
from ._metric_table import METRICS, MetricDef
from ._metrics import DEFAULT_TOLERANCES, MODES, Metrics, Tolerance
from ._noise import NOISE_FACTOR, NoiseFloor, noise_floor
from ._pairing import Alignment, CallPair
from ._referee import CLASSES, RATIO
from ._report import SCHEMA_VERSION, Amplifier, Divergence, PairResult, Report, alignment_text
from ._single_step import local_vs_accumulated, single_step_plan

__all__ = [
    "CLASSES",
    "DEFAULT_TOLERANCES",
    "FORMATS",
    "METRICS",
    "NOISE_FACTOR",
    "RATIO",
    "MODES",
    "SCHEMA_VERSION",
    "Alignment",
    "Amplifier",
    "CallPair",
    "CompareOptions",
    "Divergence",
    "Finding",
    "Mapping",
    "MappingEntry",
    "MetricDef",
    "Metrics",
    "NoiseFloor",
    "PairResult",
    "Report",
    "ReportFormat",
    "Tolerance",
    "WeightMap",
    "WeightPair",
    "align",
    "alignment_text",
    "compare",
    "load_mapping",
    "local_vs_accumulated",
    "noise_floor",
    "single_step_plan",
    "weight_map",
    "write_html",
]

"""The analyzer: two traces -> alignment -> judging -> report. numpy + h5py only.

One folder per step (``alignment/``, ``judging/``, ``reporting/``), each importing only those
before it; ``_compare`` runs them. This module is the public face.

    report = analyzer.compare("runs/paddle", "runs/torch", mode="mean")
    report.write("runs/report")          # report.txt, report.json, pairs.csv, report.html
    text, code = report.summary_text(), report.exit_code   # 0 aligned, 1 diverged

``CompareOptions`` declares every compare option once (``padiff_trace.options``): the keywords
``compare`` accepts and the flags of ``padiff-trace compare`` and ``run`` are its fields.
"""

from __future__ import annotations

from padiff_trace.matching import Mapping, MappingEntry, WeightMap, WeightPair, load_mapping

from ._compare import compare
from ._options import CompareOptions
from .alignment._pairing import Alignment, CallPair
from .alignment._single_step import local_vs_accumulated, single_step_plan
from .alignment._traces import align, weight_map
from .judging._amplifiers import Amplifier
from .judging._divergence import Divergence
from .judging._metric_table import METRICS, MetricDef
from .judging._metrics import DEFAULT_TOLERANCES, MODES, Metrics, Tolerance
from .judging._noise import NOISE_FACTOR, NoiseFloor, noise_floor
from .judging._pairview import PairResult
from .judging._referee import CLASSES, RATIO
from .reporting._channels import channel_alternatives
from .reporting._columns import column_alternatives
from .reporting._contents import Finding
from .reporting._formats import FORMATS, ReportFormat
from .reporting._fusedswap import fused_alternatives
from .reporting._gates import gate_alternatives
from .reporting._html import write_html
from .reporting._layouts import (
    concat_alternatives,
    grouped_alternatives,
    patch_alternatives,
    square_alternatives,
)
from .reporting._orderswaps import order_alternatives
from .reporting._pairings import (
    Alternative,
    confirmed,
    divergence_key,
    diverges_inside,
    fed_by,
    first_use,
    named_alone,
    pairing_alternatives,
    part_alternatives,
)
from .reporting._report import SCHEMA_VERSION, Report
from .reporting._reshapes import reshape_alternatives
from .reporting._rotary import rotary_alternatives
from .reporting._roworders import rolled_alternatives, row_alternatives
from .reporting._subpixel import subpixel_alternatives
from .reporting._text import alignment_text

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
    "Alternative",
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
    "confirmed",
    "named_alone",
    "divergence_key",
    "first_use",
    "fused_alternatives",
    "gate_alternatives",
    "load_mapping",
    "local_vs_accumulated",
    "noise_floor",
    "pairing_alternatives",
    "part_alternatives",
    "diverges_inside",
    "fed_by",
    "rotary_alternatives",
    "grouped_alternatives",
    "column_alternatives",
    "concat_alternatives",
    "subpixel_alternatives",
    "patch_alternatives",
    "square_alternatives",
    "order_alternatives",
    "reshape_alternatives",
    "channel_alternatives",
    "rolled_alternatives",
    "row_alternatives",
    "single_step_plan",
    "weight_map",
    "write_html",
]

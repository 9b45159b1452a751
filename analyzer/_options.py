"""Compare options, each declared once: ``CompareOptions``.

Every field made with ``option(...)`` (``padiff_trace.options``) is also a flag: ``padiff-trace
compare`` makes one per field, ``run`` one per field it does not set itself (it makes the
mapping, the referees and the progress lines), both from ``option_fields(CompareOptions)``;
``compare(a, b, **kw)`` accepts exactly the fields' names; PaDiff's ``auto_diff`` options that
mean the same (``atol``, ``rtol``, ``compare_mode``) are read through these declarations too.
The verdict modes are the judging table's (``MODES``): a new mode is a flag choice at once.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, fields
from typing import Any

from padiff_trace.matching import Mapping
from padiff_trace.options import check_options, option

from .judging._tolerance import MODES

__all__ = ["CompareOptions"]

_MAPPING_HELP = (
    "JSON (or .yaml with pyyaml) file pinning paddle module paths to torch paths ('modules': '*' matches one "
    "path component and must capture the same text on both sides) and tensors ('weights'; a weightmap.json)"
)
_DEFAULT_MODE = "mean"
_MODE_HELP = "verdict mode; " + "; ".join(
    f"{name}: {mode.description}" + (" (default)" if name == _DEFAULT_MODE else "") for name, mode in MODES.items()
)


def _tolerance(v: Any) -> str | None:
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
    return None if ok else "expected a finite number >= 0"


@dataclass(frozen=True)
class CompareOptions:
    """How ``compare`` judges two traces; each ``option`` field is also a flag of ``compare``
    (and of ``run``, except those ``run`` sets itself)."""

    mapping: str | os.PathLike[str] | Mapping | None = option(None, metavar="FILE", parse=str, help=_MAPPING_HELP)  # noqa: RUF009
    mode: str = option(_DEFAULT_MODE, choices=tuple(MODES), help=_MODE_HELP)
    atol: float | None = option(None, check=_tolerance, help="absolute tolerance for every float pair (default: per dtype)")
    rtol: float | None = option(None, check=_tolerance, help="relative tolerance for every float pair (default: per dtype)")
    quiet: bool = option(False, help="no progress bar; print only the verdict line")
    allow_partial: bool = option(False, help="an unfinished or damaged trace may pass (exit 0); without it such a "
                                 "comparison is INCOMPLETE (exit 3)")
    reference: str | os.PathLike[str] | None = option(  # noqa: RUF009 (an option; None is its default)
        None, metavar="R", parse=str,
        help="float64 referee trace (record A's spec with --dtype float64 --inputs-from A --weights-from A): classifies "
        "every pair as rounding, A deviates, B deviates or model difference; without --atol/--rtol only rounding passes")
    reference_b: str | os.PathLike[str] | None = option(  # noqa: RUF009
        None, metavar="RB", parse=str,
        help="float64 referee of the other model (same recipe with B's spec): separates a model difference from one "
        "framework's fp32 numerics")
    progress: bool | None = None  # not a flag (the command line says --quiet); None: a bar on a terminal, for long comparisons

    def __post_init__(self) -> None:
        check_options(self, what="compare")  # mode in MODES, tolerances finite and >= 0

    @property
    def show_progress(self) -> bool | None:
        """``progress`` as given; not given, ``quiet`` turns the bar off (None: the caller decides)."""
        return False if self.quiet and self.progress is None else self.progress

    def to_dict(self) -> dict[str, Any]:
        """Every field by name (``compare(a, b, **opts.to_dict())`` compares with these options)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

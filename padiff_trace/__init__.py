"""padiff-trace core: the trace format, its streaming writer and lazy reader.

Depends on numpy, h5py and tqdm only; importing it imports no framework.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._catalog import CatalogEntry, catalog
from ._errors import (
    CorruptTraceError,
    DamagedRecordError,
    FilterError,
    HostileTraceError,
    InternalError,
    MappingError,
    NotATraceError,
    PadiffTraceError,
    RecordingFailedError,
    SpecError,
    TraceChangedError,
    TraceExistsError,
    TraceLockedError,
    TraceNotFoundError,
    TraceReadError,
    TraceWriteError,
    UnsupportedVersionError,
    UserError,
    WeightTransferError,
    os_failure,
)
from ._header import Frame, RecordHeader
from ._heap import release_freed_memory
from ._integrity import Damage, Health
from ._reader import Record, Trace, is_trace, open_trace
from ._schema import FORMAT_VERSION, STAT_FIELDS, Kind, Phase
from ._visible import csv_cell, visible
from ._writer import Deferred, Summary, TraceWriter, WriterOptions

__version__ = "0.1.0"

__all__ = [
    "HostileTraceError",
    "os_failure",
    "FORMAT_VERSION",
    "STAT_FIELDS",
    "CatalogEntry",
    "catalog",
    "CorruptTraceError",
    "Damage",
    "DamagedRecordError",
    "Deferred",
    "Summary",
    "FilterError",
    "Health",
    "Frame",
    "InternalError",
    "Kind",
    "MappingError",
    "NotATraceError",
    "PadiffTraceError",
    "Phase",
    "Record",
    "RecordHeader",
    "RecordingFailedError",
    "SpecError",
    "Trace",
    "TraceChangedError",
    "TraceExistsError",
    "TraceLockedError",
    "TraceNotFoundError",
    "TraceReadError",
    "TraceWriteError",
    "TraceWriter",
    "UnsupportedVersionError",
    "UserError",
    "WeightTransferError",
    "WriterOptions",
    "is_trace",
    "release_freed_memory",
    "open_trace",
    "csv_cell",
    "visible",
    "__version__",
]

# PaDiff's API on top of the pipeline, imported on first use (importing padiff_trace
# stays free of the recorder and the frameworks): `from padiff_trace import auto_diff`.
_PADIFF_API = ("auto_diff", "AutoDiffResult", "divergence_arrays", "LayerMap")
if TYPE_CHECKING:  # what type checkers see; at run time __getattr__ below
    from .pipeline import AutoDiffResult as AutoDiffResult
    from .pipeline import LayerMap as LayerMap
    from .pipeline import auto_diff as auto_diff
    from .pipeline import divergence_arrays as divergence_arrays


def __getattr__(name: str) -> object:
    """``auto_diff``, ``LayerMap``, ``AutoDiffResult``, ``divergence_arrays`` (from
    ``padiff_trace.pipeline``), loaded lazily."""
    if name not in _PADIFF_API:
        raise AttributeError(f"module 'padiff_trace' has no attribute {name!r}")
    from . import pipeline

    return getattr(pipeline, name)

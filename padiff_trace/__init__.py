"""padiff-trace core: the trace format, its streaming writer and lazy reader.

Depends on numpy, h5py and tqdm only; importing it imports no framework, and nothing but the
exception tree until a name is used (``padiff-trace`` answers Ctrl-C during its start-up with
one line: the heavy imports happen inside the command line's error handling).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

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
    exit_reason,
    interrupted,
    os_failure,
)

__version__ = "0.1.0"

__all__ = [
    "HostileTraceError",
    "os_failure",
    "exit_reason",
    "interrupted",
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
    "command_line",
    "open_trace",
    "csv_cell",
    "visible",
    "__version__",
]

# Every other public name is loaded from its module on first use (PEP 562): the table is the one
# place that says where each lives; type checkers see the imports below.
_LAZY: dict[str, str] = {
    "CatalogEntry": "trace._catalog",
    "catalog": "trace._catalog",
    "Frame": "trace._header",
    "RecordHeader": "trace._header",
    "release_freed_memory": "arrays._heap",
    "command_line": "trace._meta",
    "Damage": "trace._integrity",
    "Health": "trace._integrity",
    "Record": "trace._reader",
    "Trace": "trace._reader",
    "is_trace": "trace._reader",
    "open_trace": "trace._reader",
    "FORMAT_VERSION": "trace._schema",
    "STAT_FIELDS": "trace._schema",
    "Kind": "trace._schema",
    "Phase": "trace._schema",
    "csv_cell": "trace._visible",
    "visible": "trace._visible",
    "Deferred": "trace._writer",
    "Summary": "trace._writer",
    "TraceWriter": "trace._writer",
    "WriterOptions": "trace._writer",
}
# PaDiff's API on top of the pipeline (importing padiff_trace stays free of the recorder and the
# frameworks): `from padiff_trace import auto_diff`.
_LAZY.update(dict.fromkeys(("auto_diff", "AutoDiffResult", "divergence_arrays", "LayerMap"), "pipeline"))

if TYPE_CHECKING:
    from .arrays._heap import release_freed_memory
    from .pipeline import AutoDiffResult as AutoDiffResult
    from .pipeline import LayerMap as LayerMap
    from .pipeline import auto_diff as auto_diff
    from .pipeline import divergence_arrays as divergence_arrays
    from .trace._catalog import CatalogEntry, catalog
    from .trace._header import Frame, RecordHeader
    from .trace._integrity import Damage, Health
    from .trace._meta import command_line
    from .trace._reader import Record, Trace, is_trace, open_trace
    from .trace._schema import FORMAT_VERSION, STAT_FIELDS, Kind, Phase
    from .trace._visible import csv_cell, visible
    from .trace._writer import Deferred, Summary, TraceWriter, WriterOptions


def __getattr__(name: str) -> object:
    """A public name of ``_LAZY``, imported from its module on first use and then kept."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'padiff_trace' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

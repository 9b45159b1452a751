"""padiff-trace core: the trace format, its streaming writer and lazy reader.

Depends on numpy, h5py and tqdm only; importing it imports no framework.
"""

from __future__ import annotations

from ._errors import (
    CorruptTraceError,
    FilterError,
    InternalError,
    MappingError,
    NotATraceError,
    PadiffTraceError,
    SpecError,
    TraceExistsError,
    TraceNotFoundError,
    TraceWriteError,
    UnsupportedVersionError,
    UserError,
    WeightTransferError,
)
from ._reader import Record, Trace, is_trace, open_trace
from ._header import Frame, RecordHeader
from ._schema import FORMAT_VERSION, STAT_FIELDS, Kind, Phase
from ._writer import Deferred, Summary, TraceWriter, WriterOptions

__version__ = "0.1.0"

__all__ = [
    "FORMAT_VERSION",
    "STAT_FIELDS",
    "CorruptTraceError",
    "Deferred",
    "Summary",
    "FilterError",
    "Frame",
    "InternalError",
    "Kind",
    "MappingError",
    "NotATraceError",
    "PadiffTraceError",
    "Phase",
    "Record",
    "RecordHeader",
    "SpecError",
    "Trace",
    "TraceExistsError",
    "TraceNotFoundError",
    "TraceWriteError",
    "TraceWriter",
    "UnsupportedVersionError",
    "UserError",
    "WeightTransferError",
    "WriterOptions",
    "is_trace",
    "open_trace",
    "__version__",
]

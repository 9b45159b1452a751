"""Regenerate ``tests/data/v1_small.trace`` (format v1). Run from the repository root:

    .venv/bin/python tests/data/make_v1_small.py

The committed trace must keep reading with the values in ``tests/test_trace_v1_data.py``;
never regenerate it to make that test pass after a format change - that is the point.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from padiff_trace import Frame, Kind, Phase, RecordHeader, TraceWriter, WriterOptions

OUT = Path(__file__).resolve().parent / "v1_small.trace"
FIXED_META = {
    "framework": "none",
    "device": "cpu",
    "host": "generator",
    "platform": "any",
    "python": "3",
    "created": "2026-01-01T00:00:00+0000",
    "command": "make_v1_small.py",
    "seed": 0,
    "tags": {"purpose": "format-v1 reference"},
}


def main() -> None:
    stack = (Frame("model.py", 7, "forward", "return self.fc(x)"),)
    bits = (np.array([1.0, -2.0, 0.5], dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
    with TraceWriter(OUT, meta=FIXED_META, options=WriterOptions(flush_records=4), overwrite=True) as w:
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODEL_INPUT, position="args[0]"), np.arange(6, dtype=np.float32).reshape(2, 3))
        w.append(
            RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "fc", "Linear", call=0, position="out", stack=stack),
            np.array([[1.5, -2.5]], dtype=np.float64),
        )
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_INPUT, "fc", "Linear", call=0, position='kwargs["mask"]'), np.array([True, False, True]))
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "fc", "Linear", call=0, position="out.attr"), bits, dtype="bfloat16")
        w.append(RecordHeader(0, Phase.FORWARD, Kind.LOSS, position="out"), np.array(0.25, dtype=np.float32))
        w.append(RecordHeader(0, Phase.BACKWARD, Kind.GRAD_OUTPUT, "fc", "Linear", call=0, position="out"), np.array([[np.nan, 1.0]]), keep_data=False)
        w.append(RecordHeader(0, Phase.OTHER, Kind.PARAM, "fc.weight", "Parameter"), np.array([[1, 2], [3, 4]], dtype=np.int64))
        w.append(RecordHeader(0, Phase.FORWARD, Kind.PROBE, position="out[1]"), None, dtype="py:NoneType")


if __name__ == "__main__":
    main()

"""The committed format-v1 trace (tests/data/v1_small.trace) must keep reading with these values."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from padiff_trace import Frame, Kind, Phase, open_trace

V1 = Path(__file__).resolve().parent / "data" / "v1_small.trace"


def test_v1_small_trace_still_reads() -> None:
    with open_trace(V1) as tr:
        assert tr.complete and len(tr) == 8 and tr.missing_shards == []
        assert tr.meta["format_version"] == 1 and tr.meta["tags"] == {"purpose": "format-v1 reference"}
        assert tr.summary["records"] == 8 and tr.summary["shards"] == 3
        assert [r.kind for r in tr.records()] == [
            Kind.MODEL_INPUT, Kind.MODULE_OUTPUT, Kind.MODULE_INPUT, Kind.MODULE_OUTPUT,
            Kind.LOSS, Kind.GRAD_OUTPUT, Kind.PARAM, Kind.PROBE,
        ]
        np.testing.assert_array_equal(tr.read(0), np.arange(6, dtype=np.float32).reshape(2, 3))
        r1 = tr[1]
        assert (r1.module, r1.module_type, r1.position, r1.dtype, r1.shape) == ("fc", "Linear", "out", "float64", (1, 2))
        assert r1.stack == (Frame("model.py", 7, "forward", "return self.fc(x)"),)
        np.testing.assert_array_equal(r1.read(), [[1.5, -2.5]])
        assert tr[2].position == 'kwargs["mask"]'
        np.testing.assert_array_equal(tr.read(2), np.array([True, False, True]))
        assert tr.read(2).dtype == np.bool_
        assert tr[3].dtype == "bfloat16" and tr[3].position == "out.attr"
        np.testing.assert_array_equal(tr.read(3), np.array([1.0, -2.0, 0.5], dtype=np.float32))
        assert tr[4].shape == () and float(tr.read(4)) == 0.25
        g = tr[5]
        assert g.phase is Phase.BACKWARD and not g.has_data
        assert g.stats["nan"] == 1 and g.stats["max"] == 1.0
        np.testing.assert_array_equal(tr.read(6), np.array([[1, 2], [3, 4]], dtype=np.int64))
        st = tr[6].stats
        assert (st["min"], st["max"], st["mean"]) == (1.0, 4.0, 2.5)
        assert math.isclose(st["std"], math.sqrt(1.25)) and math.isclose(st["l2"], math.sqrt(30))
        assert tr[7].dtype == "py:NoneType" and not tr[7].is_tensor

"""Batched statistics of small tensors (the writer's fast path) equal the one-by-one ones."""

from __future__ import annotations

import numpy as np

from padiff_trace import Kind, Phase, RecordHeader, TraceWriter, open_trace
from padiff_trace.arrays._stats import stats_many, stats_tuple


def _arrays(n: int, seed: int = 1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        size = int(rng.integers(1, 4097))
        scale, shift = 10 ** rng.uniform(-3, 3), rng.uniform(-5, 5)
        out.append((rng.standard_normal(size) * scale + shift).astype(rng.choice([np.float16, np.float32, np.float64])))
    return out


def test_stats_many_matches_float64_reference() -> None:
    arrs = _arrays(300)
    many = stats_many(arrs)
    assert many is not None
    for a, got in zip(arrs, many):
        v = a.astype(np.float64)
        want = (v.min(), v.max(), v.mean(), v.std(), np.abs(v).mean(), np.sqrt((v * v).sum()), 0.0, 0.0)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-300)
        np.testing.assert_allclose(got, stats_tuple(a, a.dtype.name), rtol=1e-10)


def test_stats_many_declines_nonfinite() -> None:
    arrs = _arrays(10)
    arrs[3] = arrs[3].copy()
    arrs[3][0] = np.nan
    assert stats_many(arrs) is None


def test_writer_batches_give_the_same_records(tmp_path) -> None:
    arrs = _arrays(2000, seed=2)
    arrs[700] = np.array([1.0, np.inf, np.nan], dtype=np.float32)  # forces the one-by-one path in its batch
    with TraceWriter(tmp_path / "t") as w:
        for a in arrs:
            w.append(RecordHeader(0, Phase.FORWARD, Kind.PROBE, "m", position="x"), a)
    with open_trace(tmp_path / "t") as tr:
        recs = list(tr.records())
        assert len(recs) == len(arrs)
        for a, r in zip(arrs, recs):
            want = stats_tuple(a, a.dtype.name)
            np.testing.assert_allclose(list(r.stats.values()), want, rtol=1e-10, equal_nan=True)
            np.testing.assert_array_equal(r.read(), a)

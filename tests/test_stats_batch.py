"""Batched statistics of small tensors (the writer's fast path) equal the one-by-one ones."""

from __future__ import annotations

import numpy as np

from analyzer.alignment._records import value_id
from analyzer.judging._values import value_key
from padiff_trace import Kind, Phase, RecordHeader, Summary, TraceWriter, open_trace
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



def test_one_value_summed_on_both_paths_is_one_value(tmp_path) -> None:
    """The writer sums a tensor alone (``stats_tuple``) or in a batch of small ones
    (``stats_many``), whichever its queue holds at the time: the last bits of a sum differ
    between them, and the analyzer's identity of a value within a trace must not."""
    arrs = [a.astype(np.float32) for a in _arrays(200, seed=5)]
    many = stats_many(arrs)
    assert many is not None
    alone = [stats_tuple(a, "float32") for a in arrs]
    apart = [i for i, (x, y) in enumerate(zip(alone, many)) if tuple(x) != tuple(y)]
    assert apart, "the two paths summed alike: this test shows nothing on this machine"
    with TraceWriter(tmp_path / "t") as w:
        for i in apart:
            n = int(arrs[i].size)
            w.append(RecordHeader(0, Phase.FORWARD, Kind.PROBE, "alone", position="x"), Summary(n, alone[i]), dtype="float32", shape=arrs[i].shape)
            w.append(RecordHeader(0, Phase.FORWARD, Kind.PROBE, "batched", position="x"), Summary(n, many[i]), dtype="float32", shape=arrs[i].shape)
    with open_trace(tmp_path / "t") as tr:
        recs = list(tr.records())
    pairs = list(zip(recs[0::2], recs[1::2]))
    assert len(pairs) == len(apart)
    for x, y in pairs:
        assert x.stats != y.stats  # as written: the sums differ in their last bits
        assert value_key(x) == value_key(y)
        assert value_id(x) == value_id(y)
    others = {value_key(x) for x, _ in pairs}
    assert len(others) == len(pairs)  # different tensors stay different values

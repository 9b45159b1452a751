"""The C kernels (padiff_trace/arrays/_ckernel.c) against their numpy reference implementations."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from padiff_trace.analyzer.judging._accumulate import Accumulator
from padiff_trace.analyzer.judging._sums import SUM_FIELDS, pair_kernel
from padiff_trace.analyzer.judging._tolerance import Tolerance, tolerance_for, verdict

from padiff_trace.arrays._native import DISABLE_ENV, kernel
from padiff_trace.arrays._stats import copy_with_stats, stats_numpy, stats_tuple

SIZES = [1, 3, 8, 9, 2047, 2048, 2049, 70_001]


def test_kernel_is_built_here() -> None:
    # the install on this machine has a compiler: a silent fallback would hide a broken build
    assert kernel() is not None


def test_environment_switch_forces_numpy() -> None:
    code = "from padiff_trace.arrays._native import kernel; print(kernel() is None)"
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, DISABLE_ENV: "1"},
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def _bf16(x: np.ndarray) -> np.ndarray:
    return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def _data(n: int, dtype: str, seed: int, special: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 5 + 0.5
    if special == "offset":
        x = x * 1e-3 + 1e3  # mean^2 >> var: the two-pass variance
    arr = _bf16(x) if dtype == "bfloat16" else x.astype(dtype)
    if special in ("nan", "inf", "both") and n > 2:
        vals = {"nan": np.nan, "inf": np.inf, "both": -np.inf}[special]
        idx = rng.choice(n, size=max(1, n // 500), replace=False)
        if dtype == "bfloat16":
            arr[idx] = _bf16(np.array([vals]))[0]
        else:
            arr[idx] = vals
        if special == "both":
            arr[idx[0]] = _bf16(np.array([np.nan]))[0] if dtype == "bfloat16" else np.nan
    return arr


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("special", ["plain", "offset", "nan", "inf", "both"])
def test_stats_match_numpy(dtype: str, special: str) -> None:
    for i, n in enumerate(SIZES):
        arr = _data(n, dtype, i, special)
        got, want = stats_tuple(arr, dtype), stats_numpy(arr, dtype)
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-300, equal_nan=True, err_msg=f"n={n}")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("special", ["plain", "offset", "both"])
def test_copy_with_statistics(dtype: str, special: str) -> None:
    """One pass that also copies: the copy is bit-exact and the statistics agree with the numpy
    reference, for sizes around the kernel's block length."""
    for i, n in enumerate(SIZES + [1_500_007]):
        arr = _data(n, dtype, i, special)
        copy, got = copy_with_stats(arr, dtype)
        assert copy is not arr and copy.dtype == arr.dtype and copy.flags.c_contiguous
        assert copy.tobytes() == arr.tobytes(), n
        np.testing.assert_allclose(got, stats_numpy(arr, dtype), rtol=1e-11, atol=1e-300, equal_nan=True, err_msg=f"n={n}")


def test_copy_target_must_fit() -> None:
    k = kernel()
    arr = np.ones(10, np.float32)
    with pytest.raises(ValueError, match="40"):
        k.summary(arr, "f", np.empty(9, np.float32))
    with pytest.raises((TypeError, BufferError)):  # read-only: cannot receive the copy
        k.summary(arr, "f", b"x" * 40)


def test_stats_special_float16_values() -> None:
    arr = np.array([0.0, -0.0, 6e-8, -6e-8, 1e-5, 65504.0, -65504.0, 0.5], dtype=np.float16)
    np.testing.assert_allclose(stats_tuple(arr, "float16"), stats_numpy(arr, "float16"), rtol=1e-13)
    arr[2] = np.inf
    arr[3] = np.nan
    np.testing.assert_allclose(stats_tuple(arr, "float16"), stats_numpy(arr, "float16"), rtol=1e-13)


def test_stats_float64_overflowing_squares() -> None:
    arr = np.array([1e200, -1e200, 3.0] * 1000)
    got, want = stats_tuple(arr, "float64"), stats_numpy(arr, "float64")
    assert got[5] == want[5] == np.inf  # l2 overflows in both
    assert got[:2] == want[:2]
    assert got[2] == pytest.approx(1.0, rel=1e-12)  # compensated sums: exact here, numpy's pairwise sum is not


def _pair(a: np.ndarray, b: np.ndarray, tol: Tolerance, path: str) -> list[float]:
    """The sums record of a pair measured by one kernel path: ``numpy``, ``c`` (AVX2 where the CPU
    has it) or ``generic`` (the C kernel's portable path)."""
    acc = Accumulator(tol, float(np.finfo(np.float32).tiny), generic=path == "generic")
    step = 30_000
    for s in range(0, a.size, step):  # several chunks: offsets and argmax merging
        (acc.add_numpy if path == "numpy" else acc.add)(a[s : s + step], b[s : s + step], s)
    return acc.sums.tolist()


def test_kernel_fills_the_declared_sums() -> None:
    # one declaration: the C struct's field order is the analyzer's SUM_FIELDS
    assert ",".join(f.name for f in SUM_FIELDS) == kernel().PAIR_FIELDS
    assert pair_kernel() is kernel()
    with pytest.raises(ValueError, match="out holds"):
        kernel().pair(np.ones(3, np.float32), "f", np.ones(3, np.float32), "f", 0.0, 0.0, 1e-38, np.empty(len(SUM_FIELDS) - 1))


@pytest.mark.parametrize("da,db", [("float32", "float32"), ("float64", "float64"), ("float16", "float32"),
                                   ("float32", "float64")])
@pytest.mark.parametrize("special", ["plain", "nan", "inf", "both"])
@pytest.mark.parametrize("path", ["c", "generic"])
def test_pair_matches_numpy(da: str, db: str, special: str, path: str) -> None:
    """The C kernel's AVX2 path and its portable path (forced by ``generic``) against numpy."""
    tol = Tolerance(atol=1e-4, rtol=1e-3, mode="strict")
    for i, n in enumerate(SIZES):
        b = _data(n, db, 100 + i, "plain")
        a = (b.astype(np.float64) + np.random.default_rng(i).standard_normal(n) * 1e-3).astype(da)
        if special != "plain" and n > 2:
            bad = _data(n, da, 200 + i, special)
            mask = ~np.isfinite(bad)
            a[mask] = bad[mask]
            if special == "both":
                b[np.flatnonzero(mask)[-1]] = np.inf  # one shared position: a one-sided NaN or a matching Inf
        got, want = _pair(a, b, tol, path), _pair(a, b, tol, "numpy")
        assert got[0] == want[0] and got[1] == want[1], f"n={n}: count/argmax {got[:2]} vs {want[:2]}"
        assert got[11:] == want[11:], f"n={n}: counts {got[11:]} vs {want[11:]}"
        np.testing.assert_allclose(got[2:11], want[2:11], rtol=1e-9, atol=1e-300, err_msg=f"n={n}")


def test_generic_and_avx2_paths_agree_and_differ_in_code() -> None:
    """Where the CPU has AVX2 the default path is the AVX2 one: the switch really changes the code
    that runs (float32 sums grouped in 4 lanes instead of 8 round differently), not the results."""
    rng = np.random.default_rng(7)
    b = rng.standard_normal(1_000_003).astype(np.float32)
    a = (b + rng.standard_normal(b.size) * 1e-3).astype(np.float32)
    tol = Tolerance(atol=1e-4, rtol=1e-3, mode="strict")
    fast, generic, ref = _pair(a, b, tol, "c"), _pair(a, b, tol, "generic"), _pair(a, b, tol, "numpy")
    for got in (fast, generic):
        assert got[:2] == ref[:2] and got[11:] == ref[11:]
        np.testing.assert_allclose(got[2:11], ref[2:11], rtol=1e-9)
    if kernel().avx2():
        assert fast != generic  # not bit-identical: two code paths ran
    s_fast, s_generic = kernel().summary(b, "f"), kernel().summary(b, "f", None, True)
    np.testing.assert_allclose(s_fast, s_generic, rtol=1e-11)
    np.testing.assert_allclose(s_generic, stats_numpy(b, "float32"), rtol=1e-11)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("special", ["plain", "offset", "both"])
def test_generic_stats_match_numpy(dtype: str, special: str) -> None:
    kind = {"float32": "f", "float64": "d", "float16": "e", "bfloat16": "b"}[dtype]
    for i, n in enumerate(SIZES):
        arr = _data(n, dtype, i, special)
        got = kernel().summary(arr, kind, None, True)
        np.testing.assert_allclose(got, stats_numpy(arr, dtype), rtol=1e-11, atol=1e-300, equal_nan=True, err_msg=f"n={n}")


def test_integer_pairs_compare_exactly() -> None:
    """int64 neighbours above 2**53 are equal in float64: counted in integers they differ."""
    exact = tolerance_for("int64", "int64", "mean", 1.0, 1.0)
    assert exact.exact and (exact.atol, exact.rtol) == (0.0, 0.0)  # user tolerances do not loosen integers
    b = np.arange(2**60, 2**60 + 100_000, dtype=np.int64)
    a = b.copy()
    a[[5, 70_000]] += 1
    acc = Accumulator(exact, 1e-38)
    acc.add(a, b, 0)
    m = acc.result(b.shape)
    assert m.frac_fail == 2 / b.size
    passed, reason = verdict(m, exact)
    assert not passed and "2 of 100000 elements differ" in reason
    u = b.astype(np.uint64)  # signed against unsigned: no float64 detour either
    acc = Accumulator(exact, 1e-38)
    acc.add(a, u, 0)
    assert acc.result(b.shape).frac_fail == 2 / b.size
    flags = np.array([True, False, True])
    acc = Accumulator(tolerance_for("bool", "bool", "strict", None, None), 1e-38)
    acc.add(flags, ~flags, 0)
    assert acc.result(flags.shape).frac_fail == 1.0


def test_pair_argmax_is_first_occurrence_across_chunks() -> None:
    b = np.zeros(100_000, dtype=np.float32)
    a = b.copy()
    a[[40_000, 70_000, 90_000]] = [2.0, 2.0, 1.0]
    for path in ("c", "generic", "numpy"):
        assert _pair(a, b, Tolerance(0.0, 0.0, "strict"), path)[1] == 40_000
        assert _pair(b, b, Tolerance(0.0, 0.0, "strict"), path)[1] == 0


FALLBACK = """
import sys
import numpy as np
from padiff_trace import Kind, Phase, RecordHeader, TraceWriter, open_trace
from padiff_trace.arrays._native import kernel
from padiff_trace.arrays._stats import stats_numpy
assert kernel() is None
rng = np.random.default_rng(1)
arrs = [rng.standard_normal(int(n)).astype(np.float32) for n in rng.integers(1, 600, size=300)]
arrs.append(rng.standard_normal(400_000).astype(np.float32))  # a large one: its own dataset
with TraceWriter(sys.argv[1]) as w:
    for i, a in enumerate(arrs):
        w.append(RecordHeader(0, Phase.FORWARD, Kind.PROBE, f"m{i}"), a)
with open_trace(sys.argv[1]) as tr:
    for rec, a in zip(tr.records(), arrs):
        np.testing.assert_array_equal(rec.read(), a)
        np.testing.assert_allclose(list(rec.stats.values()), stats_numpy(a, "float32"), rtol=1e-12)
print("FALLBACK_OK", len(tr))
"""


def test_writer_without_the_kernel(tmp_path) -> None:
    # the numpy path (batched statistics of small tensors) as a machine without a compiler runs it
    out = subprocess.run([sys.executable, "-c", FALLBACK, str(tmp_path / "t.trace")], capture_output=True, text=True,
                         env={**os.environ, DISABLE_ENV: "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert "FALLBACK_OK 301" in out.stdout

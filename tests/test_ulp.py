"""Distance in units of the format: ``ulp_max``, ``ulp_mean`` and ``identical`` of a pair
(analyzer/judging/_ulp.py, the C kernel's ``pair(..., ulp)``), on real traces and in every report format."""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from padiff_trace.analyzer.judging._accumulate import Accumulator
from padiff_trace.analyzer.judging._sums import INDEX
from padiff_trace.analyzer.judging._tolerance import Tolerance
from padiff_trace.analyzer.judging._ulp import ulp_format

from padiff_trace import Frame, Kind, Phase, RecordHeader, TraceWriter, analyzer
from padiff_trace.arrays._native import kernel

_ULP_FIELDS = ("bits_n", "same_bits", "ulp_n", "ulp_max", "ulp_sum")


def _bf16(x: np.ndarray) -> np.ndarray:
    """float -> bfloat16 bits, rounded to nearest even (what a framework stores)."""
    u = np.asarray(x, np.float32).view(np.uint32)
    return ((u + (0x7FFF + ((u >> 16) & 1)).astype(np.uint32)) >> 16).astype(np.uint16)


def _h(position: str) -> RecordHeader:
    return RecordHeader(step=0, phase=Phase.FORWARD, kind=Kind.MODULE_OUTPUT, module="m", module_type="LayerNorm",
                        call=1, position=position, stack=(Frame("model.py", 3, "forward", "y = self.m(x)"),))


def _write(path: Path, tensors: dict[str, tuple[np.ndarray, str | None]]) -> Path:
    with TraceWriter(path, meta={"framework": "torch", "framework_version": "9.9", "model_type": "Net", "seed": 0,
                                 "tags": {}}) as w:
        for pos, (arr, dtype) in tensors.items():
            w.append(_h(pos), arr, dtype=dtype)
    return path


def _cases() -> tuple[dict[str, tuple[np.ndarray, str | None]], dict[str, tuple[np.ndarray, str | None]]]:
    rng = np.random.default_rng(0)
    x32 = rng.standard_normal(1000).astype(np.float32)
    one32 = x32.copy()
    one32[:250] = np.nextafter(one32[:250], np.float32(np.inf))  # a quarter one ULP up
    x64 = rng.standard_normal(400)
    one64 = x64.copy()
    one64[::4] = np.nextafter(one64[::4], -np.inf)  # a quarter one ULP down
    x16 = rng.standard_normal(300).astype(np.float16)
    two16 = x16.copy()
    two16[:30] = np.nextafter(np.nextafter(two16[:30], np.float16(np.inf)), np.float16(np.inf))  # a tenth two ULPs up
    bf = _bf16(rng.standard_normal(200))
    bf1 = bf.copy()
    bf1[:50] += 1  # a quarter one bfloat16 ULP away from zero (positive and negative alike)
    zeros_a = np.array([0.0, -0.0, 1.0, np.nan, np.inf, -np.inf, np.nan, 2.0], np.float32)
    zeros_b = np.array([-0.0, 0.0, 1.0, np.nan, np.inf, np.inf, 3.0, 2.0], np.float32)
    ints = np.arange(10, dtype=np.int64)
    a = {"same32": (x32, None), "one32": (x32, None), "one64": (x64, None), "two16": (x16, None), "bf": (bf, "bfloat16"),
         "special": (zeros_a, None), "ints": (ints, None), "mixed": (x32, None)}
    b = {"same32": (x32.copy(), None), "one32": (one32, None), "one64": (one64, None), "two16": (two16, None),
         "bf": (bf1, "bfloat16"), "special": (zeros_b, None), "ints": (ints.copy(), None),
         "mixed": (_bf16(x32), "bfloat16")}
    return a, b


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[analyzer.Report, Path]:
    d = tmp_path_factory.mktemp("ulp")
    a, b = _cases()
    r = analyzer.compare(_write(d / "a", a), _write(d / "b", b))
    return r, r.write(d / "rep")


def _by_position(r: analyzer.Report) -> dict[str, dict[str, float]]:
    return {p.a.position: p.metrics.values for p in r.pairs if p.metrics is not None}


def test_known_distances(report: tuple[analyzer.Report, Path]) -> None:
    m = _by_position(report[0])
    assert m["same32"]["identical"] == 1.0 and m["same32"]["ulp_max"] == 0 and m["same32"]["ulp_mean"] == 0
    assert m["one32"]["ulp_max"] == 1 and m["one32"]["identical"] == 0.75 and m["one32"]["ulp_mean"] == 0.25
    assert m["one64"]["ulp_max"] == 1 and m["one64"]["identical"] == 0.75
    assert m["two16"]["ulp_max"] == 2 and m["two16"]["identical"] == pytest.approx(0.9) and \
        m["two16"]["ulp_mean"] == pytest.approx(0.2)
    assert m["bf"]["ulp_max"] == 1 and m["bf"]["identical"] == 0.75  # in bfloat16 units, not float32 ones


def test_zeros_nan_and_infinities(report: tuple[analyzer.Report, Path]) -> None:
    s = _by_position(report[0])["special"]
    # +0/-0: 0 apart but not identical; same NaN: identical, no distance; equal Infs: identical, 0 apart;
    # -Inf vs +Inf and NaN vs 3: no distance, not identical
    assert s["identical"] == pytest.approx(4 / 8)  # 1.0, NaN, Inf, 2.0
    assert s["ulp_max"] == 0 and s["ulp_mean"] == 0
    assert s["nan_mismatch"] == 1 and s["inf_mismatch"] == 1


def test_not_float_pairs_have_no_ulp(report: tuple[analyzer.Report, Path]) -> None:
    s = _by_position(report[0])["ints"]
    assert math.isnan(s["ulp_max"]) and math.isnan(s["identical"]) and math.isnan(s["ulp_mean"])


def test_mixed_dtypes_are_measured_in_the_lower_precision(report: tuple[analyzer.Report, Path]) -> None:
    assert ulp_format("float32", "bfloat16") == "bfloat16" and ulp_format("float16", "float64") == "float16"
    assert ulp_format("float16", "bfloat16") == "bfloat16" and ulp_format("int64", "float32") is None
    s = _by_position(report[0])["mixed"]  # float32 x against x rounded to bfloat16: identical once rounded
    assert s["identical"] == 1.0 and s["ulp_max"] == 0


def test_every_format_shows_them(report: tuple[analyzer.Report, Path]) -> None:
    _, out = report
    doc = json.loads((out / "report.json").read_text())
    one = next(p for p in doc["pairs"] if "one32" in json.dumps(p["a"]))
    assert one["metrics"]["ulp_max"] == 1 and one["metrics"]["identical"] == 0.75 and one["metrics"]["ulp_mean"] == 0.25
    assert "ulp_max" in doc["metric_descriptions"] and "identical" in doc["metric_descriptions"]
    rows = list(csv.DictReader((out / "pairs.csv").open()))
    row = next(x for x in rows if x["a"].endswith("one32"))
    assert float(row["ulp_max"]) == 1 and float(row["identical"]) == 0.75 and float(row["ulp_mean"]) == 0.25
    row = next(x for x in rows if x["a"].endswith("ints"))
    assert row["ulp_max"] == row["identical"] == "nan"
    page = (out / "report.html").read_text()
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', page, re.S).group(1))  # type: ignore[union-attr]
    keys = {c["key"]: c for c in data["columns"]}
    assert keys["ulp_max"]["label"] == "max ULP" and keys["identical"]["label"] == "identical"
    hrow = next(x for x in data["rows"]["pairs"] if x["a"].endswith("one32"))
    assert hrow["ulp_max"] == 1 and hrow["identical"] == 0.75
    hint = next(x for x in data["rows"]["pairs"] if x["a"].endswith("ints"))
    assert hint["ulp_max"] is None and hint["identical"] is None


# ---------------------------------------------------------------------- the C kernel against numpy

def _sums(a: np.ndarray, b: np.ndarray, path: str, dtypes: tuple[str, str] | None) -> list[float]:
    acc = Accumulator(Tolerance(1e-4, 1e-3, "strict"), 1e-38, generic=path == "generic", dtypes=dtypes)
    step = 30_000
    for s in range(0, a.size, step):
        (acc.add_numpy if path == "numpy" else acc.add)(a[s : s + step], b[s : s + step], s)
    return [acc.sums[INDEX[k]] for k in _ULP_FIELDS]


def _side(x: np.ndarray, dtype: str) -> np.ndarray:
    """Values of a logical dtype as the analyzer reads them (bfloat16 decoded to float32)."""
    if dtype == "bfloat16":
        return (_bf16(x).astype(np.uint32) << 16).view(np.float32)
    return x.astype(dtype)


@pytest.mark.parametrize("da,db", [("float32", "float32"), ("float64", "float64"), ("float16", "float16"),
                                   ("bfloat16", "bfloat16"), ("float32", "bfloat16"), ("float64", "float32"),
                                   ("float16", "bfloat16"), ("float64", "bfloat16"), ("float32", "float16")])
@pytest.mark.parametrize("path", ["c", "generic"])
def test_kernel_paths_agree(da: str, db: str, path: str) -> None:
    assert kernel() is not None
    rng = np.random.default_rng(3)
    for n in (1, 7, 2047, 2049, 70_001):
        x = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 3, n)
        y = x * (1 + rng.standard_normal(n) * 1e-3)
        y[: n // 3] = x[: n // 3]  # a third the same values
        if n > 20:
            x[[1, 2, 3, 4, 5, 6]] = [np.nan, np.inf, -np.inf, 0.0, -0.0, np.nan]
            y[[1, 2, 3, 4, 5, 6]] = [np.nan, np.inf, np.inf, -0.0, -0.0, 1.0]
            y[7], x[7] = -x[8], x[8]  # opposite signs: the distance crosses zero
        a, b = _side(x, da), _side(y, db)
        got, want = _sums(a, b, path, (da, db)), _sums(a, b, "numpy", (da, db))
        assert got == want, f"n={n}: {got} vs {want}"
        assert got[0] == n and got[2] >= 1


def test_float64_distances_beyond_2_53_are_exact() -> None:
    a = np.array([1e150, -1e150, 5e-324, 1.0])  # 1e150 against -1e150: more than 2**63 apart, summed past 2**64
    b = np.array([-1e150, 1e150, -5e-324, 1.0])
    for path in ("c", "generic", "numpy"):
        bits_n, same, n, mx, total = _sums(a, b, path, ("float64", "float64"))
        d = 2 * int(a[:1].view(np.int64)[0])
        assert (bits_n, same, n) == (4, 1, 4) and mx == float(d) and total == float(2 * d + 2), path

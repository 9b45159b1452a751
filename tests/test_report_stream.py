"""Reports that scale (issue 15): pairs stored as columns, report files streamed pair by pair,
the HTML page listing the interesting pairs, stale temporary files of killed writers removed,
and compare's peak memory not growing with --report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from padiff_trace.analyzer.reporting import _formats, _html
from padiff_trace.analyzer.reporting._formats import _clean

from padiff_trace import Frame, Kind, Phase, RecordHeader, TraceWriter, analyzer

ROOT = Path(__file__).resolve().parents[1]


def _chain(path: Path, framework: str, calls: int, bad_from: int | None, ints: bool = False) -> Path:
    """A root call holding ``calls`` Linear calls; B drifts by 0.5 from call ``bad_from`` on."""
    base = np.linspace(-1, 1, 16, dtype=np.float32)
    with TraceWriter(path, {"framework": framework}) as w:
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODEL_INPUT, "", "Net", 0, -1, 0, "args[0]"), base)
        for i in range(calls):
            x = base + np.float32(i % 97) * np.float32(1e-2)
            y = x * np.float32(1.5) + (np.float32(0.5) if bad_from is not None and i >= bad_from else np.float32(0))
            st = (Frame("model.py", 10 + i % 5, "forward", "x = layer(x)"),)
            w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_INPUT, f"layers.{i}", "Linear", i + 1, 0, 0, "args[0]", stack=st), x)
            w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, f"layers.{i}", "Linear", i + 1, 0, 0, "out", stack=st), y)
        if ints:
            w.append(RecordHeader(0, Phase.FORWARD, Kind.PROBE, "ids", "", -1, -1, 0, "ids"), np.arange(6, dtype=np.int64))
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "", "Net", 0, -1, 0, "out"), base)
    return path


@pytest.fixture(scope="module")
def drifting(tmp_path_factory: pytest.TempPathFactory) -> analyzer.Report:
    d = tmp_path_factory.mktemp("drift")
    return analyzer.compare(_chain(d / "a", "paddle", 600, None), _chain(d / "b", "torch", 600, 300), atol=1e-4, rtol=0)


def test_streamed_json_equals_the_whole_report_dict(drifting: analyzer.Report, tmp_path: Path) -> None:
    out = drifting.write(tmp_path / "rep", formats=["json"])
    on_disk = json.loads((out / "report.json").read_text())
    assert on_disk == json.loads(json.dumps(_clean(drifting.to_dict())))  # every pair, every field
    assert len(on_disk["pairs"]) == len(drifting.pairs) == on_disk["counts"]["pairs"]
    assert on_disk["counts"]["failed"] == len(drifting.failed) == 300
    first = on_disk["first_divergence"]["located"]
    assert first["a"]["module"] == first["b"]["module"] == "layers.300"


def test_pairs_read_back_from_the_table_are_the_measured_ones(drifting: analyzer.Report) -> None:
    t = drifting.pairs
    assert [p.index for p in t[:5]] == [0, 1, 2, 3, 4]
    assert all(t[i].order <= t[i + 1].order for i in range(len(t) - 1))  # execution order
    p = next(p for p in t if p.role == "output" and p.a.module == "layers.300")
    assert not p.passed and p.reason == "mean|a-b| 0.5 > 0.0001"
    assert p.metrics is not None and p.metrics.max_abs == pytest.approx(0.5, rel=1e-6)
    want = np.abs(p.a.read().astype(np.float64) - p.b.read()).max()
    assert p.metrics.max_abs == pytest.approx(want, rel=1e-9)
    assert p.metrics.n == 16 and isinstance(p.metrics.n, int)
    assert p.a.stack[0].file == "model.py" and p.b.module == "layers.300"
    assert p.call_pair is not None and p.call_pair.a.module == "layers.300"
    ok = next(p for p in t if p.role == "output" and p.a.module == "layers.3")
    assert ok.passed and ok.reason == "" and ok.metrics is not None and ok.metrics.max_abs == 0
    assert list(drifting.failed)[0].index == drifting.failed[0].index and len(list(drifting.failed)) == 300
    assert t.role_counts()["output"] == (601, 300)


def test_html_lists_the_interesting_pairs_of_a_long_table(drifting: analyzer.Report, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    rows, total = _html.table_rows(drifting, limit=100)["pairs"]
    assert total == len(drifting.pairs) and len(rows) <= 100
    failing = [int(r) for r in rows if not drifting.pairs[int(r)].passed]
    assert len(failing) >= 50
    first = drifting.first_divergence
    assert first is not None and first.pair.index in set(rows.tolist())
    monkeypatch.setattr(_html, "TABLE_ROWS", 100)
    out = drifting.write(tmp_path / "rep", formats=["html"])
    page = (out / "report.html").read_text()
    data = json.loads(page.split('id="report-data">', 1)[1].split("</script>", 1)[0])
    assert len(data["rows"]["pairs"]) == len(rows)
    assert f"{len(rows)} of {total} pairs listed" in page and 'href="pairs.csv"' in page
    assert page.rstrip().endswith("</html>")


def test_integers_compare_exactly_in_the_table(tmp_path: Path) -> None:
    r = analyzer.compare(_chain(tmp_path / "a", "paddle", 3, None, ints=True), _chain(tmp_path / "b", "torch", 3, None, ints=True))
    ids = next(p for p in r.pairs if p.role == "probe")
    assert ids.tol.exact and ids.passed and ids.metrics is not None and ids.metrics.max_abs == 0


def test_a_killed_writers_temporary_files_are_removed_and_a_live_ones_kept(drifting: analyzer.Report, tmp_path: Path) -> None:
    out = tmp_path / "rep"
    out.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    stale = out / f".report.json.{int(dead.stdout)}.x1y2.tmp"  # that process has exited
    live = out / ".report.json.1.z3w4.tmp"  # pid 1 runs: another writer's, left alone
    mine = out / "notes.tmp"  # not ours
    for f in (stale, live, mine):
        f.write_text("partial")
    drifting.write(out, formats=["json"])
    assert not stale.exists() and live.exists() and mine.exists()
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["notes.tmp", "report.json"]


def test_formats_still_render_as_strings(drifting: analyzer.Report) -> None:
    for name, fmt in _formats.FORMATS.items():
        text = fmt.render(drifting)
        assert len(text) > 1000, name
    assert _formats.render_csv(drifting).count("\n") == len(drifting.pairs) + 1


PEAK = "[int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM')][0] // 1024"


@pytest.mark.slow
def test_compare_peak_memory_does_not_grow_with_report(tmp_path: Path) -> None:
    a = _chain(tmp_path / "a", "paddle", 15_000, None)
    b = _chain(tmp_path / "b", "torch", 15_000, 7_000)
    peaks = {}
    for name, extra in (("plain", ""), ("report", f"r.write({str(tmp_path / 'rep')!r})")):
        code = (f"from padiff_trace import analyzer\nr = analyzer.compare({str(a)!r}, {str(b)!r}, quiet=True, atol=1e-4, rtol=0)\n"
                f"{extra}\nprint('PEAK', {PEAK})")
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert res.returncode == 0, res.stderr[-2000:]
        peaks[name] = int(res.stdout.split("PEAK")[-1])
    assert (tmp_path / "rep" / "report.json").stat().st_size > 10_000_000  # 30k pairs with stacks
    assert peaks["report"] - peaks["plain"] < 25, peaks  # the files stream: no per-pair memory

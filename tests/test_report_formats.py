"""Report formats (registry, atomic writes), the metric table, the diagnosis and hostile trace strings."""

from __future__ import annotations

import csv
import errno
import html
import io
import json
import math
import os
import re
from pathlib import Path
from typing import TextIO

import numpy as np
import pytest
from padiff_trace.analyzer.judging._tolerance import MODES
from padiff_trace.analyzer.reporting import _formats
from padiff_trace.analyzer.reporting._html import render_html
from test_analyzer_helpers import toy_model

from padiff_trace import Frame, Kind, Phase, RecordHeader, TraceWriteError, TraceWriter, UserError, analyzer, visible


@pytest.fixture(scope="module")
def buggy(tmp_path_factory: pytest.TempPathFactory) -> analyzer.Report:
    d = tmp_path_factory.mktemp("buggy")
    return analyzer.compare(toy_model(d / "a", "paddle", ln_eps=1e-1), toy_model(d / "b", "torch"))


def _files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def test_formats_are_a_registry_and_html_is_written_by_default(buggy: analyzer.Report, tmp_path: Path) -> None:
    assert list(_formats.FORMATS) == ["txt", "json", "csv", "html"]
    out = buggy.write(tmp_path / "rep")
    assert sorted(_files(out)) == ["pairs.csv", "report.html", "report.json", "report.txt"]
    only = buggy.write(tmp_path / "only", formats=["json"])
    assert sorted(_files(only)) == ["report.json"]
    with pytest.raises(UserError, match=r"unknown report format.*pdf"):
        buggy.write(tmp_path / "x", formats=["pdf"])


def test_a_metric_added_in_one_place_reaches_every_format(buggy: analyzer.Report, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(analyzer.METRICS, "rms_diff", analyzer.MetricDef(
        "rms_diff", lambda s: math.sqrt(s["dd"] / max(s["n"], 1.0)), ".5g", "root mean square of a-b", "rms diff"))
    pair = next(p for p in buggy.pairs if p.a.module == "norm" and p.role == "output")
    # recompute the pair's metrics with the table as it is now (a new compare would do the same)
    r = analyzer.compare(buggy.a.path, buggy.b.path)
    pair = next(p for p in r.pairs if p.index == pair.index)
    want = float(np.sqrt(np.mean((pair.a.read().astype(np.float64) - pair.b.read()) ** 2)))
    assert pair.metrics is not None and pair.metrics.rms_diff == pytest.approx(want, rel=1e-9)
    out = r.write(tmp_path / "rep")
    txt = (out / "report.txt").read_text()
    assert f"rms diff: {want:.5g}" in txt
    rows = list(csv.DictReader((out / "pairs.csv").open()))
    row = next(x for x in rows if int(x["index"]) == pair.index)
    assert float(row["rms_diff"]) == pytest.approx(want, rel=1e-12)
    doc = json.loads((out / "report.json").read_text())
    jp = next(x for x in doc["pairs"] if x["index"] == pair.index)
    assert jp["metrics"]["rms_diff"] == pytest.approx(want, rel=1e-12)
    assert doc["metric_descriptions"]["rms_diff"] == "root mean square of a-b"
    page = (out / "report.html").read_text()
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', page, re.S).group(1))  # type: ignore[union-attr]
    assert {"key": "rms_diff", "label": "rms diff", "num": True, "title": "root mean square of a-b"} in data["columns"]
    hrow = next(x for x in data["rows"]["pairs"] if x["index"] == pair.index)
    assert hrow["rms_diff"] == pytest.approx(want, rel=1e-12)


def test_verdict_modes_are_a_table() -> None:
    assert list(MODES) == ["mean", "strict", "rel-l2"]
    assert all(callable(m.judge) and m.description for m in MODES.values())


def _words(text: str) -> str:
    return " ".join(text.split())


def test_report_json_carries_the_diagnosis_of_the_summary(buggy: analyzer.Report, tmp_path: Path) -> None:
    summary = _words(buggy.summary_text())
    out = buggy.write(tmp_path / "rep")
    doc = json.loads((out / "report.json").read_text())
    texts = [f["text"] for f in doc["diagnosis"]]
    assert texts and texts == [f.text for f in buggy.diagnosis]
    codes = {f["code"] for f in doc["diagnosis"]}
    assert {"call_inputs", "error_starts_inside"} <= codes
    for t in texts:
        assert _words(t) in summary, t  # the same sentences, wrapped for 80 columns there
    page = _words((out / "report.html").read_text())
    txt = _words((out / "report.txt").read_text())
    for t in texts:
        assert _words(t).replace("<", "&lt;").replace(">", "&gt;") in page and _words(t) in txt


def test_failed_write_leaves_the_old_report_whole(buggy: analyzer.Report, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    out = buggy.write(tmp_path / "rep")
    before = _files(out)

    def broken(report: analyzer.Report, out: TextIO) -> None:
        out.write("index,step\n0,0\n")  # part of the file streamed, then the writer fails
        raise RuntimeError("renderer bug")

    monkeypatch.setitem(_formats.FORMATS, "csv", _formats.ReportFormat("csv", "pairs.csv", broken, "broken"))
    with pytest.raises(RuntimeError, match="renderer bug"):
        buggy.write(out)
    assert _files(out) == before
    monkeypatch.undo()

    calls = []
    real_fsync = os.fsync

    def full_disk(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 3:  # the third file: the first two are written, nothing is renamed yet
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(TraceWriteError, match="No space left"):
        buggy.write(out)
    assert _files(out) == before  # no temporary file left, nothing replaced
    monkeypatch.undo()
    assert buggy.write(out) == out and sorted(_files(out)) == sorted(before)


HOSTILE = "enc\x1b[2J\x1b[31m.layer\n0\r\u202eevil\x07"
FORMULAS = ["=HYPERLINK(\"http://x\")", "+1+1", "-2+3", "@SUM(A1)", "\tx"]


def _trace(path: Path, framework: str, bug: bool) -> None:
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)
    names = [HOSTILE, *FORMULAS]
    with TraceWriter(path, {"framework": framework, "tags": {"model": HOSTILE}}) as w:
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODEL_INPUT, "", "Net", 0, -1, 0, "args[0]"), x)
        for i, name in enumerate(names):
            st = (Frame("m\x1b]0;title\x07.py", 3 + i, "forward", "y = self.f(x)\x1b[1A"),)
            hdr = RecordHeader(0, Phase.FORWARD, Kind.MODULE_INPUT, name, "Lin\x1bear", i + 1, 0, 0, "args[0]", stack=st)
            w.append(hdr, x)
            x = np.tanh(x).astype(np.float32) + np.float32(0.05 if bug and i == 0 else 0)
            w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, name, "Lin\x1bear", i + 1, 0, 0, "out", stack=st), x)
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "", "Net", 0, -1, 0, "out"), x)


_RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f\u202e]")  # what must never reach a terminal or a text file


def test_trace_strings_are_made_visible_in_text_and_csv(tmp_path: Path) -> None:
    _trace(tmp_path / "a", "paddle", True)
    _trace(tmp_path / "b", "torch", False)
    r = analyzer.compare(tmp_path / "a", tmp_path / "b")
    assert r.exit_code == 1 and r.first_divergence is not None and r.first_divergence.pair.a.module == HOSTILE
    summary = r.summary_text()
    assert not _RAW.search(summary) and "\\x1b[2J" in summary and "\\u202e" in summary and "\\n0\\r" in summary
    assert max(len(line) for line in summary.splitlines()) <= 80
    out = r.write(tmp_path / "rep")
    txt = (out / "report.txt").read_text()
    assert not _RAW.search(txt) and "enc\\x1b[2J\\x1b[31m.layer\\n0\\r\\u202eevil\\x07#0:out" in txt
    csv_text = (out / "pairs.csv").read_text()
    assert not _RAW.search(csv_text.replace("\r\n", "\n"))
    rows = list(csv.reader(io.StringIO(csv_text)))
    cells = [c for row in rows[1:] for c in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")], "a cell starts a formula"
    assert "'=HYPERLINK(\"http://x\")#0:out" in cells and "'+1+1#0:out" in cells and "'@SUM(A1)#0:out" in cells
    assert "\\tx#0:out" in cells  # a leading tab is made visible (and so starts nothing)
    doc = json.loads((out / "report.json").read_text())
    assert any(p["a"]["module"] == HOSTILE for p in doc["pairs"])  # JSON keeps the exact string
    page = render_html(r)
    # HTML: made visible, then escaped (the page's script inserts table text as text)
    assert html.escape(visible(f"{HOSTILE}#0:out")) in page and not _RAW.search(page.replace("\n", ""))
    assert analyzer.alignment_text(analyzer.align(tmp_path / "a", tmp_path / "b")).count("\\x1b[2J") >= 1


def test_plots_are_inline_svg_without_plotly(buggy: analyzer.Report) -> None:
    page = render_html(buggy)
    assert page.count('<svg class="plot"') == 2  # forward and backward
    assert "plotly" not in page.lower() and "<script src" not in page
    assert len(page.encode()) < 60_000


def test_plot_size_is_bounded_for_big_models() -> None:
    from types import SimpleNamespace

    from padiff_trace.analyzer.judging._metric_table import Metrics
    from padiff_trace.analyzer.reporting._svg import error_plot

    rng = np.random.default_rng(0)

    def pair(i: int) -> SimpleNamespace:
        v = 10 ** rng.uniform(-8, -2)
        a = SimpleNamespace(name=f"layers.{i}.fc#0:out", module_type="Linear", id=i)
        return SimpleNamespace(metrics=Metrics({"max_abs": 10 * v, "mean_abs": v, "rel_l2": 3 * v}), passed=v < 1e-3,
                               index=i, a=a, call_pair=SimpleNamespace(a=a))

    small = error_plot([pair(i) for i in range(50)], "t", 3, {7})
    assert small.count("<title>") == 50 and small.count("<polyline") == 3 and 'class="amp"' in small
    big = error_plot([pair(i) for i in range(50_000)], "t", 3, {7})
    assert len(big) < 500_000 and big.count("<polyline") == 3 and big.count("<title>") <= 1002


def test_a_step_series_of_one_value_is_drawn() -> None:
    """Two steps where only step 0 has a loss: a polyline of one point draws nothing, so each
    value of a short series is also a dot (the demo's loss plot was empty)."""
    from padiff_trace.analyzer.reporting._svg import series_plot

    svg = series_plot("loss", [0, 1], [("loss A", "#1f77b4", [0.5, None]), ("loss B", "#ff7f0e", [0.5, None])], log=False)
    assert svg.count('<circle class="pt"') == 2
    long = series_plot("loss", list(range(200)), [("loss A", "#1f77b4", [1.0 + k for k in range(200)])], log=True)
    assert '<circle class="pt"' not in long and "<polyline" in long

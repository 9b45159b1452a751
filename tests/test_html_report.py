"""The HTML report in a real headless Chromium: renders, plots, filters, runs no trace content.

No plotting library: the plots are inline SVG, so the page is small and opens offline."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from browser import HOW_TO_GET, chromium
from padiff_trace.analyzer.reporting._html import write_html
from test_analyzer_helpers import toy_model

from padiff_trace import Frame, Kind, Phase, RecordHeader, TraceWriter, analyzer


@pytest.fixture(autouse=True, scope="module")
def _browser() -> None:
    """A headless browser renders every page here: found, or installed where this user may
    (tests/browser.py says so on the terminal); else these tests skip with what to do."""
    if chromium() is None:
        pytest.skip(HOW_TO_GET)


EVIL = '<img src=x onerror="document.body.setAttribute(\'data-pwned\',\'1\')">'
BIDI = "layer4\u202egnp.exe\x1b[2J"  # a bidi override and a terminal escape in a module name
EVIL_SCRIPT = "</script><script>document.body.setAttribute('data-pwned','2')</script>"


def _trace(path: Path, framework: str, bug: bool, names: list[str], *, input_bug: bool = False,
           meta: dict[str, Any] | None = None) -> None:
    """A model of Linear layers; ``bug``: layer 2's output is off; ``input_bug``: the model's input is."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    if input_bug:
        x = x + np.float32(1e-2)
    meta = {"framework": framework, "framework_version": "x", "tags": {"model": EVIL}, **(meta or {})}
    with TraceWriter(path, meta) as w:
        call = 0
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODEL_INPUT, "", "Net", 0, -1, 0, "args[0]"), x)
        for i, name in enumerate(names):
            call += 1
            stack = (Frame("model.py", 10 + i, "forward", f"x = self.{EVIL_SCRIPT}(x)"),)
            hdr = RecordHeader(0, Phase.FORWARD, Kind.MODULE_INPUT, name, "Linear", call, 0, 0, "args[0]", stack=stack)
            w.append(hdr, x)
            x = np.tanh(x * 1.01).astype(np.float32)
            if bug and i == 2:
                x = x + np.float32(1e-2)
            w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, name, "Linear", call, 0, 0, "out", stack=stack), x)
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "", "Net", 0, -1, 0, "out"), x)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("html")
    names = [f"layer{i}.{EVIL}" if i == 2 else BIDI if i == 4 else f"layer{i}" for i in range(6)]
    _trace(d / "a.trace", "paddle", bug=True, names=names)
    _trace(d / "b.trace", "torch", bug=False, names=names)
    report = analyzer.compare(d / "a.trace", d / "b.trace", quiet=True)
    assert report.exit_code == 1
    return write_html(report, d / "report.html")


def _dom(url: str, tmp: Path) -> str:
    browser = chromium()
    assert browser is not None  # the module's fixture skipped otherwise
    out = subprocess.run(
        [
            browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={tmp / 'profile'}", "--virtual-time-budget=8000", "--dump-dom", url,
        ],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_renders_with_plots_and_tables(page: Path, tmp_path: Path) -> None:
    dom = _dom(page.as_uri(), tmp_path)
    assert "DIVERGED" in dom
    assert dom.count('<svg class="plot"') == 1 and "<polyline" in dom  # the forward plot, drawn inline
    assert 'class="first"' in dom and 'class="fail"' in dom  # first divergence and failing pairs marked
    m = re.search(r"(\d+) of (\d+) rows", dom)
    assert m and m.group(1) == m.group(2) and int(m.group(2)) >= 12
    assert "first divergence" in dom
    text = page.read_text()
    assert "<script src" not in text and "http://" not in text.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in text  # nothing fetched: opens offline
    assert page.stat().st_size < 100_000  # one small file (with plotly.js inlined it was 4.8 MB)


def test_table_filters(page: Path, tmp_path: Path) -> None:
    dom = _dom(page.as_uri() + "#module=layer4&kind=output", tmp_path)
    m = re.search(r"(\d+) of (\d+) rows", dom)
    assert m is not None and m.group(1) == "1", m
    dom = _dom(page.as_uri() + "#verdict=FAIL", tmp_path)
    m2 = re.search(r"(\d+) of (\d+) rows", dom)
    assert m2 is not None and 0 < int(m2.group(1)) < int(m2.group(2))


def test_trace_strings_run_nothing(page: Path, tmp_path: Path) -> None:
    dom = _dom(page.as_uri(), tmp_path)
    assert "data-pwned" not in dom.split("<body", 1)[1].split(">", 1)[0]
    assert 'data-pwned="1"' not in dom and 'data-pwned="2"' not in dom
    # the payload is shown as text, not parsed into elements
    assert "<img src=\"x\"" not in dom and "<img src=x" not in dom.replace("&lt;img src=x", "")
    assert "&lt;img src=x" in dom


def test_control_and_bidi_characters_are_shown_as_escapes(page: Path, tmp_path: Path) -> None:
    """In the static page and in the tables the script builds, a trace string's bidi override
    and escape sequence are shown as escapes: what a reader sees is what the trace says."""
    dom = _dom(page.as_uri(), tmp_path)
    body = dom.split("<body", 1)[1].split('<script type="application/json"', 1)[0]
    assert "\u202e" not in body and "\x1b" not in body
    assert "layer4\\u202egnp.exe\\x1b[2J" in body


def _plots(dom: str) -> list[str]:
    """Each error plot of a page's DOM, in order (forward, then backward)."""
    return re.findall(r'<svg class="plot".*?</svg>', dom, re.S)


@pytest.fixture(scope="module")
def input_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A comparison whose first divergence is the model's input (every output follows from it)."""
    d = tmp_path_factory.mktemp("html_input")
    names = [f"layer{i}" for i in range(6)]
    _trace(d / "a.trace", "paddle", bug=False, names=names, input_bug=True)
    _trace(d / "b.trace", "torch", bug=False, names=names)
    report = analyzer.compare(d / "a.trace", d / "b.trace", quiet=True)
    assert report.first_divergence is not None and report.first_divergence.pair.role == "model_input"
    return write_html(report, d / "report.html")


@pytest.fixture(scope="module")
def grad_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy model whose first (and only) divergence is a parameter gradient."""
    d = tmp_path_factory.mktemp("html_grad")
    report = analyzer.compare(toy_model(d / "a", "paddle", grad_bug=True), toy_model(d / "b", "torch"), quiet=True)
    assert report.first_divergence is not None and report.first_divergence.pair.role == "param_grad"
    return write_html(report, d / "report.html")


@pytest.mark.parametrize(("fixture", "role", "plot", "where"), [
    ("input_page", "model_input", 0, "before"),  # before the forward plot's first output
    ("grad_page", "param_grad", 1, "after"),  # after the backward plot's last output gradient
])
def test_first_divergence_of_a_kind_not_drawn_is_marked(fixture: str, role: str, plot: int, where: str, tmp_path: Path,
                                                         request: pytest.FixtureRequest) -> None:
    """A first divergence the plots do not draw (a model input, a parameter gradient) is marked
    at the nearest point drawn, on one plot, labelled, and its tooltip says what it is."""
    dom = _dom(request.getfixturevalue(fixture).as_uri(), tmp_path)
    plots = _plots(dom)
    marked = [k for k, svg in enumerate(plots) if '<line class="first' in svg]
    assert marked == [plot], (marked, len(plots))
    svg = plots[plot]
    assert '<line class="first nearest"' in svg  # dashed: a point standing for it
    assert f"first divergence: {role}, {where} this point</text>" in svg
    tips = re.findall(r"<title>(first divergence[^<]*)</title>", svg)
    assert len(tips) == 1 and tips[0].startswith(f"first divergence: {role} ") and "Not drawn on this plot" in tips[0]


def test_legend_explains_every_marker_drawn(page: Path, input_page: Path, grad_page: Path, tmp_path: Path) -> None:
    """Each error plot's legend has an entry for each kind of marker it draws (failing pair ✕,
    amplifier ◇, first divergence line), and none for a kind it does not draw."""
    seen: set[str] = set()
    for url in (page.as_uri(), input_page.as_uri(), grad_page.as_uri()):
        for svg in _plots(_dom(url, tmp_path)):
            drawn = {kind for kind, tag in (("fail", '<path class="fail"'), ("amp", '<path class="amp"'),
                                            ("first", '<line class="first')) if tag in svg}
            legend = set(re.findall(r'<g class="legend-mark" data-mark="(\w+)">', svg))
            assert legend == drawn, (legend, drawn)
            seen |= drawn
    assert seen == {"fail", "amp", "first"}  # every kind was checked on some plot


def test_traces_section_shows_command_and_tags_readably(tmp_path: Path) -> None:
    """The Traces section shows tags as key=value (not a dict repr) and the command without the
    pipeline's internal ``record --job FILE --watch-parent PID`` arguments, or the user's command
    where the trace records one; trace strings stay escaped and visible."""
    internal = shlex.join(["__main__.py", "record", "--job", "out/jobs/paddle_model.json", "--watch-parent", "987654321"])
    names = [f"layer{i}" for i in range(3)]
    _trace(tmp_path / "a.trace", "paddle", bug=False, names=names,
           meta={"command": internal, "tags": {"model": "bert", "note": "a b, c", "odd": BIDI, "html": EVIL}})
    _trace(tmp_path / "b.trace", "torch", bug=False, names=names,
           meta={"command": internal, "user_command": f"python train.py --lr 0.1 --name {BIDI}", "tags": {}})
    page = write_html(analyzer.compare(tmp_path / "a.trace", tmp_path / "b.trace", quiet=True), tmp_path / "report.html")
    dom = _dom(page.as_uri(), tmp_path)
    traces = dom.split("<h2>Traces</h2>", 1)[1].split("<script", 1)[0]
    assert "--job" not in traces and "paddle_model.json" not in traces and "987654321" not in traces
    assert "__main__.py record" in traces and "not recorded" in traces  # what is left, and why
    assert "python train.py --lr 0.1 --name layer4\\u202egnp.exe\\x1b[2J" in traces
    for tag in ("model=bert", "note=a b, c", "odd=layer4\\u202egnp.exe\\x1b[2J", "html=&lt;img src=x"):
        assert f'<span class="tag">{tag}' in traces, tag
    assert "{" not in traces and "&#x27;" not in traces and "\u202e" not in traces and "\x1b" not in traces
    assert "<img" not in traces

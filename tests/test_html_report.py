"""The HTML report in a real headless Chromium: renders, plots, filters, runs no trace content.

No plotting library: the plots are inline SVG, so the page is small and opens offline."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from padiff_trace.analyzer._html import write_html

from padiff_trace import Frame, Kind, Phase, RecordHeader, TraceWriter, analyzer

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (make test installs it)")

EVIL = '<img src=x onerror="document.body.setAttribute(\'data-pwned\',\'1\')">'
BIDI = "layer4\u202egnp.exe\x1b[2J"  # a bidi override and a terminal escape in a module name
EVIL_SCRIPT = "</script><script>document.body.setAttribute('data-pwned','2')</script>"


def _trace(path: Path, framework: str, bug: bool, names: list[str]) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    meta = {"framework": framework, "framework_version": "x", "tags": {"model": EVIL}}
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
    out = subprocess.run(
        [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
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

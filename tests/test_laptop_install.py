"""The laptop side (issue 5): an analyzer-only install compares traces recorded elsewhere.

A fresh virtual environment gets ``pip install <project>`` (no extras: numpy, h5py,
tqdm), has no paddle or torch, and compares two traces copied from another directory.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from padiff_trace import Kind, Phase, RecordHeader, TraceWriter

ROOT = Path(__file__).resolve().parents[1]


def _trace(path: Path, framework: str, scale: float) -> None:
    x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(4, 16)
    with TraceWriter(path, {"framework": framework}) as w:
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODEL_INPUT, "", "Net", 0, -1, 0, "args[0]"), x)
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_INPUT, "fc", "Linear", 1, 0, 0, "args[0]"), x)
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "fc", "Linear", 1, 0, 0, "out"), x * scale)
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "", "Net", 0, -1, 0, "out"), x * scale)


@pytest.fixture(scope="module")
def laptop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with only `pip install <project>`; the source is copied as git would ship it."""
    base = tmp_path_factory.mktemp("laptop")
    src = base / "src"
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    for f in files:
        (src / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, src / f)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(src)], capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stderr[-3000:]
    return venv


def test_no_framework_in_the_laptop_env(laptop: Path) -> None:
    py = str(laptop / "bin" / "python")
    for fw in ("torch", "paddle"):
        r = subprocess.run([py, "-c", f"import {fw}"], capture_output=True, text=True)
        assert r.returncode != 0 and "ModuleNotFoundError" in r.stderr


def test_compare_copied_traces_without_frameworks(laptop: Path, tmp_path: Path) -> None:
    server = tmp_path / "gpu-server"
    _trace(server / "paddle.trace", "paddle", 1.0)
    _trace(server / "torch.trace", "torch", 1.001)
    copied = tmp_path / "laptop-home" / "runs"
    shutil.copytree(server, copied)
    shutil.rmtree(server)  # nothing points back at the original location
    cli = str(laptop / "bin" / "padiff-trace")
    r = subprocess.run([cli, "compare", str(copied / "paddle.trace"), str(copied / "torch.trace"), "--report", str(tmp_path / "rep")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr  # the 0.1 % scale difference is found
    assert "fc#0:out" in r.stdout
    assert (tmp_path / "rep" / "report.json").is_file()
    page = tmp_path / "rep" / "report.html"  # written with the base dependencies only (inline SVG plots)
    assert page.is_file() and "<svg" in page.read_text() and page.stat().st_size < 100_000
    r = subprocess.run([cli, "info", str(copied / "torch.trace")], capture_output=True, text=True)
    assert r.returncode == 0 and "complete" in r.stdout


def test_wheel_installs_one_top_level_package(laptop: Path) -> None:
    """`recorder` and `analyzer` are names taken on the package index: ours install under padiff_trace."""
    (record,) = laptop.glob("lib/python*/site-packages/padiff_trace-*.dist-info/RECORD")
    tops = {line.split(",")[0].split("/")[0] for line in record.read_text().splitlines() if line}
    tops = {t for t in tops if not t.endswith(".dist-info") and t != ".."}
    assert tops == {"padiff_trace"}, tops
    py = str(laptop / "bin" / "python")
    code = "import padiff_trace.analyzer, padiff_trace.recorder, importlib.util as u; print(u.find_spec('analyzer'), u.find_spec('recorder'))"
    r = subprocess.run([py, "-c", code], capture_output=True, text=True, cwd=laptop)
    assert r.returncode == 0 and r.stdout.split() == ["None", "None"], r.stderr
    r = subprocess.run([py, "-m", "padiff_trace", "--help"], capture_output=True, text=True, cwd=laptop)
    assert r.returncode == 0 and "usage: padiff-trace" in r.stdout

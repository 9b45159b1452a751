"""``padiff-trace info`` / ``ls`` / ``--help`` on real traces."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from padiff_trace import Kind, Phase, RecordHeader, TraceWriter, WriterOptions
from padiff_trace.cli import main

CLI = Path(sys.executable).with_name("padiff-trace")


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    """2 steps x (1 model_input, 3 module_output fwd, 3 grad_output bwd) + 2 params; 16 records."""
    path = tmp_path / "t"
    meta = {"framework": "torch", "framework_version": "2.13.0", "seed": 7, "tags": {"exp": "a"}}
    with TraceWriter(path, meta=meta, options=WriterOptions(flush_records=5)) as w:
        for step in range(2):
            w.append(RecordHeader(step, Phase.FORWARD, Kind.MODEL_INPUT, position="args[0]"), np.ones((2, 4)))
            for i in range(3):
                h = RecordHeader(step, Phase.FORWARD, Kind.MODULE_OUTPUT, f"enc.layers.{i}.fc", "Linear", position="out")
                w.append(h, np.full((2, 4), -float(i + 1), dtype=np.float32))
            for i in reversed(range(3)):
                h = RecordHeader(step, Phase.BACKWARD, Kind.GRAD_OUTPUT, f"enc.layers.{i}.fc", "Linear", position="out[0]")
                w.append(h, np.zeros((2, 4), dtype=np.float32), keep_data=False)
        for name in ("enc.layers.0.fc.weight", "enc.layers.0.fc.bias"):
            w.append(RecordHeader(0, Phase.OTHER, Kind.PARAM, name, "Parameter"), np.ones(4))
    return path


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_help_texts_are_useful() -> None:
    top = subprocess.run([str(CLI), "--help"], capture_output=True, text=True, timeout=120)
    assert top.returncode == 0
    assert "info" in top.stdout and "ls" in top.stdout and "trace" in top.stdout.lower()
    info = subprocess.run([str(CLI), "info", "--help"], capture_output=True, text=True, timeout=120)
    assert info.returncode == 0 and "--json" in info.stdout and "metadata" in info.stdout
    ls = subprocess.run([str(CLI), "ls", "--help"], capture_output=True, text=True, timeout=120)
    for opt in ("--module", "--kind", "--phase", "--step", "--stats", "--limit"):
        assert opt in ls.stdout
    bad = subprocess.run([str(CLI), "ls"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "trace" in bad.stderr and "Traceback" not in bad.stderr


def test_info_text(trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run_main(capsys, "info", str(trace))
    assert rc == 0 and err == ""
    assert f"trace      {trace}" in out
    assert "state      complete" in out
    assert "framework  torch 2.13.0" in out
    assert "seed       7" in out and "tags       exp=a" in out
    assert "format     v1.2, 4 shard(s)" in out
    assert "records    16 in steps 0..1" in out
    assert "by phase  backward 6, forward 8, other 2" in out
    assert "by kind   grad_output 6, model_input 2, module_output 6, param 2" in out


def test_info_json(trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run_main(capsys, "info", "--json", str(trace))
    assert rc == 0
    info = json.loads(out)
    assert info["complete"] is True and info["records"] == 16 and info["steps"] == [0, 1]
    assert info["shards"] == 4
    assert info["counts"]["kind"] == {"model_input": 2, "module_output": 6, "grad_output": 6, "param": 2}
    assert info["counts"]["phase"] == {"forward": 8, "backward": 6, "other": 2}
    assert info["meta"]["framework"] == "torch" and info["meta"]["format_version"] == 1
    assert info["size_bytes"] == sum(p.stat().st_size for p in trace.iterdir())


def test_ls_lists_in_order_with_filters(trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_main(capsys, "ls", str(trace))
    lines = out.splitlines()
    assert len(lines) == 16
    assert [int(ln.split()[0]) for ln in lines] == list(range(16))
    assert "enc.layers.2.fc#0:out" in lines[3] and "Linear" in lines[3] and "max|x|=3" in lines[3]
    assert lines[4].rstrip().endswith("stats")  # grad outputs were kept as statistics only
    assert lines[1].rstrip().endswith("data")

    _, out, _ = run_main(capsys, "ls", str(trace), "--module", "enc.layers.1.*")
    assert [int(ln.split()[0]) for ln in out.splitlines()] == [2, 5, 9, 12]
    _, out, _ = run_main(capsys, "ls", str(trace), "--kind", "grad_output", "--step", "1")
    assert [int(ln.split()[0]) for ln in out.splitlines()] == [11, 12, 13]
    _, out, _ = run_main(capsys, "ls", str(trace), "--kind", "param", "--kind", "model_input")
    assert [int(ln.split()[0]) for ln in out.splitlines()] == [0, 7, 14, 15]
    _, out, _ = run_main(capsys, "ls", str(trace), "--phase", "other")
    assert [ln.split()[3] for ln in out.splitlines()] == ["param", "param"]
    _, out, _ = run_main(capsys, "ls", str(trace), "--limit", "3")
    assert len(out.splitlines()) == 3
    _, out, _ = run_main(capsys, "ls", str(trace), "--stats", "--module", "enc.layers.0.fc", "--step", "0", "--phase", "forward")
    (line,) = out.splitlines()
    assert "min=-1 max=-1 mean=-1 std=0 mean_abs=1 l2=2.828 nan=0 inf=0" in line


def test_ls_unknown_kind_is_a_clear_error(trace: Path) -> None:
    out = subprocess.run([str(CLI), "ls", str(trace), "--kind", "bogus"], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert "bogus" in out.stderr
    assert "Traceback" not in out.stderr, out.stderr


def test_info_on_missing_path(tmp_path: Path) -> None:
    out = subprocess.run([str(CLI), "info", str(tmp_path / "nope")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr.strip() == f"padiff-trace: error: {tmp_path / 'nope'}: no such trace"


def test_trace_strings_reach_the_terminal_visible(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A module name or tag holding escape sequences or a newline cannot retitle, clear or
    recolour the terminal, nor break `ls` into two rows (issue 15)."""
    import numpy as np

    from padiff_trace import Kind, Phase, RecordHeader, TraceWriter
    from padiff_trace.cli import main

    evil = "layer\x1b]0;pwned\x07\x1b[2J\nfake"
    with TraceWriter(tmp_path / "t", {"tags": {"model": evil}}) as w:
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, evil, "Linear", 0, -1, 0, "out"), np.ones(3))
    for argv in (["ls", str(tmp_path / "t")], ["info", str(tmp_path / "t")], ["ls", str(tmp_path)]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out, argv
        assert "\\x1b" in out or argv == ["ls", str(tmp_path)], argv
    assert main(["ls", str(tmp_path / "t")]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1  # the newline in the name did not split the row

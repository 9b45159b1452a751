"""What a new user meets first, through real ``python -m padiff_trace`` processes: ``--version``,
NO_COLOR, progress bars only on a terminal, one-line errors for a broken spec file, and
``ls DIR`` / ``history DIR`` tables laid out from their contents."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path
from typing import Any

import numpy as np

import padiff_trace
from padiff_trace import Kind, Phase, RecordHeader, TraceWriter

SPEC = """import torch
def model():
    torch.manual_seed(0)
    return torch.nn.Linear(4, 2)
def inputs():
    return (torch.ones(3, 4),)
"""


def _cli(*args: object) -> list[str]:
    return [sys.executable, "-m", "padiff_trace", *map(str, args)]


def _env(**changes: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in changes}
    env.update({k: v for k, v in changes.items() if v is not None})
    return env


def _on_terminal(argv: list[str], stream: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> tuple[int, str]:
    """Run ``argv`` with its ``stream`` ("stdout" or "stderr") on a pseudo-terminal, the other
    one discarded; its exit status and everything written to the terminal."""
    master, slave = pty.openpty()
    # a terminal has a size: tqdm draws nothing on one 0 columns wide (a bare pty's)
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    other = "stderr" if stream == "stdout" else "stdout"
    kw: dict[str, Any] = {stream: slave, other: subprocess.DEVNULL}
    proc = subprocess.Popen(argv, env=env, cwd=cwd, **kw)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: every holder of the terminal's other end has closed it
            break
        if not data:
            break
        chunks.append(data)
    rc = proc.wait(timeout=300)
    os.close(master)
    return rc, b"".join(chunks).decode("utf-8", "replace")


def _trace(path: Path, *, bug: bool = False, **meta: Any) -> None:
    x = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)
    with TraceWriter(path, {"framework": "torch", "framework_version": "2.13.0", **meta}) as w:
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODEL_INPUT, "", "Net", 0, -1, 0, "args[0]"), x)
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_INPUT, "lin", "Linear", 1, 0, 0, "args[0]"), x)
        y = np.tanh(x).astype(np.float32) + np.float32(0.5 if bug else 0)
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "lin", "Linear", 1, 0, 0, "out"), y)
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "", "Net", 0, -1, 0, "out"), y)


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


# ---------------------------------------------------------------- --version


def test_version_prints_name_and_version() -> None:
    r = subprocess.run(_cli("--version"), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"padiff-trace {padiff_trace.__version__}\n"


# ---------------------------------------------------------------- NO_COLOR


def test_no_color_turns_colour_off_on_a_terminal(tmp_path: Path) -> None:
    _trace(tmp_path / "a.trace", bug=True)
    _trace(tmp_path / "b.trace")
    argv = _cli("compare", tmp_path / "a.trace", tmp_path / "b.trace", "--quiet")
    rc, out = _on_terminal(argv, "stdout", _env(NO_COLOR=None))
    assert rc == 1 and "\033[1;31mDIVERGED\033[0m" in out, out
    rc, out = _on_terminal(argv, "stdout", _env(NO_COLOR=""))  # no-color.org: empty is unset
    assert rc == 1 and "\033[" in out, out
    rc, out = _on_terminal(argv, "stdout", _env(NO_COLOR="1"))
    assert rc == 1 and "DIVERGED" in out and "\033" not in out, out


# ---------------------------------------------------------------- progress bars


def test_record_progress_bar_only_on_a_terminal(tmp_path: Path) -> None:
    (tmp_path / "spec.py").write_text(SPEC)
    argv = _cli("record", "spec.py", "--out", "t.trace", "--steps", "3", "--force")
    r = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "\r" not in r.stderr and "it/s" not in r.stderr and "step/s" not in r.stderr, r.stderr
    rc, err = _on_terminal(argv, "stderr", cwd=tmp_path)  # on a terminal the bar stays
    assert rc == 0 and "\r" in err and "record spec.py" in err, err


def test_run_relays_the_recorders_bars_to_a_terminal_only(tmp_path: Path) -> None:
    """``run``'s recorders write to a pipe that ``run`` copies to its stderr: their bars show
    when that is a terminal, and stay out of a log file."""
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(SPEC)
    argv = _cli("run", "a.py", "b.py", "--out", "out", "--steps", "3", "--force")
    r = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "\r" not in r.stderr and "step/s" not in r.stderr, r.stderr
    rc, err = _on_terminal(argv, "stderr", cwd=tmp_path)
    assert rc == 0 and "record a.py" in err and "record b.py" in err and "\r" in err, err


def test_history_progress_bar_not_in_a_log(tmp_path: Path) -> None:
    for i in range(3):
        _trace(tmp_path / f"v{i}.trace", bug=i == 2, created=f"2024-01-0{i + 1}T00:00:00", tags={"version": f"v{i}"})
    with open(tmp_path / "log", "w+b") as log:
        r = subprocess.run(_cli("history", tmp_path), stdout=subprocess.PIPE, stderr=log, timeout=300)
        log.seek(0)
        err = log.read()
    assert r.returncode == 1, err
    assert b"\r" not in err and b"trace/s" not in err and b"history" not in err, err


# ---------------------------------------------------------------- a broken spec file


def test_spec_syntax_error_is_one_line_with_its_line(tmp_path: Path) -> None:
    spec = tmp_path / "broken.py"
    spec.write_text("import torch\n\ndef model(:\n    return torch.nn.Linear(2, 2)\n")
    r = subprocess.run(_cli("record", spec, "--out", tmp_path / "t.trace"), capture_output=True, text=True, timeout=300)
    assert r.returncode == 2
    (line,) = _error_lines(r.stderr)
    assert line.startswith("padiff-trace: error: ") and f"{spec}:3:" in line and "SyntaxError" in line, line
    assert "marked incomplete" not in line and not (tmp_path / "t.trace").exists()


def test_raising_model_is_one_line_and_claims_no_trace(tmp_path: Path) -> None:
    """model() raises before anything is recorded: one line at its place in the spec; an output
    directory that was there already is not called this recording's incomplete trace."""
    spec = tmp_path / "raises.py"
    spec.write_text("import torch\n\ndef model():\n    raise RuntimeError('no such layer')\n\ndef inputs():\n    return (torch.ones(2),)\n")
    out = tmp_path / "t.trace"
    for existing in (False, True):
        if existing:
            out.mkdir()
        r = subprocess.run(_cli("record", spec, "--out", out), capture_output=True, text=True, timeout=300)
        assert r.returncode == 2
        (line,) = _error_lines(r.stderr)
        assert line.startswith("padiff-trace: error: ") and f"{spec}:4:" in line, line
        assert "model() raised RuntimeError: no such layer" in line and "nothing was recorded" in line, line
        assert "marked incomplete" not in line, line


def test_run_with_a_broken_spec_is_one_line(tmp_path: Path) -> None:
    good, bad, raising = tmp_path / "good.py", tmp_path / "bad.py", tmp_path / "raising.py"
    good.write_text(SPEC)
    bad.write_text("def model()\n    pass\n")
    raising.write_text(SPEC.replace("torch.manual_seed(0)", "raise ValueError('wrong width')"))
    for a, b, said in ((bad, good, f"{bad}:1:"), (good, raising, f"{raising}:3:")):
        r = subprocess.run(_cli("run", a, b, "--out", tmp_path / "out", "--force"), capture_output=True, text=True, timeout=300)
        assert r.returncode == 2
        (line,) = _error_lines(r.stderr)
        assert line.startswith("padiff-trace: error: recording ") and said in line, line
        assert "marked incomplete" not in line, line


# ---------------------------------------------------------------- ls / history tables


def _aligned(header: str, rows: list[str], columns: list[str], right: set[str]) -> None:
    """Every cell of ``rows`` starts (left-aligned columns) or ends (``right``) where its
    column's name does in ``header``; a row may end early (history's baseline row)."""
    for name in columns:
        start = header.index(name)
        end = start + len(name)
        for row in (r for r in rows if len(r) > start):
            if name in right:
                assert row[end - 1] != " " and row[end:end + 1] in (" ", ""), (name, header, row)
            else:
                assert row[start] != " " and row[start - 1:start] in (" ", ""), (name, header, row)


def test_ls_catalog_shows_long_names_whole_in_aligned_columns(tmp_path: Path) -> None:
    long_dir = "run_" + "x" * 52 + "_end"  # 60 characters
    assert len(long_dir) == 60
    _trace(tmp_path / long_dir / "t.trace", created="2024-01-01T00:00:00", tags={"model": "mlp", "version": "v1"})
    _trace(tmp_path / "s.trace", created="2024-01-02T00:00:00", tags={"model": "a-much-longer-model-name", "version": "v2"})
    r = subprocess.run(_cli("ls", tmp_path), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    header, *rows = r.stdout.splitlines()
    assert len(rows) == 2
    assert rows[0].startswith(f"{long_dir}/t.trace ") and rows[1].startswith("s.trace ")
    assert "a-much-longer-model-name" in rows[1]
    columns = ["trace", "model", "version", "framework", "device", "created", "steps", "size", "state"]
    assert header.split() == columns
    _aligned(header, rows, columns, right={"steps", "size"})


def test_history_columns_line_up_with_long_versions(tmp_path: Path) -> None:
    versions = ["v1", "release-2024.06-with-a-very-long-version-tag", "v3"]
    for i, v in enumerate(versions):
        _trace(tmp_path / f"{i}.trace", bug=i == 2, created=f"2024-01-0{i + 1}T00:00:00", tags={"version": v})
    r = subprocess.run(_cli("history", tmp_path), capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stderr
    _, header, *rows = r.stdout.splitlines()
    assert [row.split()[0] for row in rows] == versions
    columns = ["version", "created", "framework", "verdict", "out max|a-b|", "out rel-L2", "first divergence"]
    _aligned(header, rows, columns, right={"out max|a-b|", "out rel-L2"})


def test_run_records_the_command_the_user_typed(tmp_path: Path) -> None:
    """Each trace of a ``run`` keeps the command line typed (meta ``user_command``) besides its
    recorder's own (``command``: ``record --job ...``); the report's Traces section shows it."""
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(SPEC)
    r = subprocess.run(_cli("run", "a.py", "b.py", "--out", "out", "--force"), capture_output=True, text=True,
                       cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    from padiff_trace import open_trace

    for trace in sorted((tmp_path / "out").glob("*.trace")):
        with open_trace(trace) as tr:
            assert tr.meta["user_command"] == "padiff-trace run a.py b.py --out out --force", tr.meta
            assert "--job" in tr.meta["command"]
    html = (tmp_path / "out" / "report" / "report.html").read_text()
    assert "padiff-trace run a.py b.py --out out --force" in html


def test_errors_speak_python_to_the_api_and_flags_to_the_command_line(tmp_path: Path) -> None:
    """The same refusal (outputs already there) says ``force=True`` to a Python caller and
    ``--force`` on the command line."""
    import pytest

    from padiff_trace import TraceExistsError, pipeline

    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(SPEC)
    r = subprocess.run(_cli("run", "a.py", "b.py", "--out", "out"), capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    with pytest.raises(TraceExistsError) as err:
        pipeline.run(tmp_path / "a.py", tmp_path / "b.py", tmp_path / "out")
    assert "force=True" in str(err.value) and "--force" not in str(err.value)
    r = subprocess.run(_cli("run", "a.py", "b.py", "--out", "out"), capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 2 and "--force" in r.stderr and "force=True" not in r.stderr, r.stderr

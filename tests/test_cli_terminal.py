"""Terminal output: 80 columns, colour on a TTY only."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from padiff_trace import Frame, Kind, Phase, RecordHeader, TraceWriter


def _trace(path: Path, framework: str, bug: bool) -> None:
    x = np.random.default_rng(1).standard_normal((4, 32)).astype(np.float32)
    long = "encoder.layers.11.attention.self.very_long_projection_name_for_wrapping"
    with TraceWriter(path, {"framework": framework}) as w:
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODEL_INPUT, "", "Net", 0, -1, 0, "args[0]"), x)
        for i in range(3):
            name = f"{long}.{i}"
            st = (Frame("models/a/really/deep/path/modeling_transformer.py", 120 + i, "forward", "hidden = self.proj(hidden) * self.scale + residual_branch"),)
            w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_INPUT, name, "Linear", i + 1, 0, 0, "args[0]", stack=st), x)
            x = np.tanh(x).astype(np.float32) + np.float32(0.1 if bug and i == 1 else 0)
            w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, name, "Linear", i + 1, 0, 0, "out", stack=st), x)
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "", "Net", 0, -1, 0, "out"), x)


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("term")
    _trace(d / "a.trace", "paddle", True)
    _trace(d / "b.trace", "torch", False)
    return d / "a.trace", d / "b.trace"


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "padiff_trace", *args]


def test_piped_output_has_no_colour_and_fits_80_columns(pair: tuple[Path, Path]) -> None:
    r = subprocess.run(_cli("compare", str(pair[0]), str(pair[1])), capture_output=True, text=True)
    assert r.returncode == 1
    assert "\033[" not in r.stdout
    assert "First divergence" in r.stdout and "very_long" in r.stdout
    too_long = [line for line in r.stdout.splitlines() if len(line) > 80]
    assert not too_long, too_long


def test_tty_output_is_coloured(pair: tuple[Path, Path]) -> None:
    master, slave = pty.openpty()
    proc = subprocess.Popen(_cli("compare", str(pair[0]), str(pair[1]), "--quiet"), stdout=slave, stderr=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait()
    os.close(master)
    out = b"".join(chunks).decode()
    assert proc.returncode == 1
    assert "\033[1;31mDIVERGED\033[0m" in out

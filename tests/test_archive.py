"""Trace archives per model version: ``ls DIR`` catalog and ``history`` regression view."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from padiff_trace import Kind, Phase, RecordHeader, TraceWriter
from padiff_trace.cli import main


def _version(path: Path, version: str, model: str = "mlp", bug_at: int | None = None, framework: str = "paddle") -> None:
    x = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    meta = {"framework": framework, "framework_version": "3.3.1", "tags": {"model": model, "version": version}}
    with TraceWriter(path, meta) as w:
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODEL_INPUT, "", "MLP", 0, -1, 0, "args[0]"), x)
        for i in range(4):
            name = f"layers.{i}"
            w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_INPUT, name, "Linear", i + 1, 0, 0, "args[0]"), x)
            x = np.tanh(x * 0.9).astype(np.float32)
            if bug_at == i:
                x = (x * 1.05).astype(np.float32)
            w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, name, "Linear", i + 1, 0, 0, "out"), x)
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODULE_OUTPUT, "", "MLP", 0, -1, 0, "out"), x)
    time.sleep(1.05)  # creation times order the versions (1 s resolution)


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("archive")
    _version(root / "mlp" / "v1.trace", "v1")
    _version(root / "mlp" / "v2.trace", "v2")
    _version(root / "mlp" / "v3.trace", "v3", bug_at=2)
    _version(root / "other" / "o1.trace", "o1", model="resnet", framework="torch")
    (root / "broken.trace").mkdir()
    (root / "broken.trace" / "shard-000000.h5").write_bytes(b"not hdf5 at all")
    return root


def test_ls_catalog_lists_every_trace(archive: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ls", str(archive)]) == 0
    out = capsys.readouterr().out.splitlines()
    body = out[1:]
    assert len(body) == 5
    rows = {line.split()[0]: line for line in body}
    assert set(rows) == {"mlp/v1.trace", "mlp/v2.trace", "mlp/v3.trace", "other/o1.trace", "broken.trace"}
    assert "paddle 3.3.1" in rows["mlp/v1.trace"] and rows["mlp/v1.trace"].rstrip().endswith("complete")
    assert "torch" in rows["other/o1.trace"] and "resnet" in rows["other/o1.trace"]
    assert "DAMAGED" in rows["broken.trace"]


def test_ls_catalog_filters_by_tag(archive: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ls", str(archive), "--tag", "model=mlp"]) == 0
    body = capsys.readouterr().out.splitlines()[1:]
    assert [line.split()[0] for line in body] == ["mlp/v1.trace", "mlp/v2.trace", "mlp/v3.trace"]


def test_history_shows_the_regression(archive: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["history", str(archive), "--tag", "model=mlp"])
    out = capsys.readouterr().out.splitlines()
    assert rc == 1  # v3 diverges from the baseline
    assert str(archive / "mlp" / "v1.trace") in out[0]
    rows = {line.split()[0]: line for line in out[2:]}
    assert "baseline" in rows["v1"]
    assert "aligned" in rows["v2"] and "0.000e+00" in rows["v2"]
    assert "diverged" in rows["v3"] and "layers.2#0:out" in rows["v3"]


def test_history_with_explicit_baseline(archive: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["history", str(archive), "--tag", "model=mlp", "--baseline", str(archive / "mlp" / "v3.trace")])
    out = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line for line in out[2:]}
    assert rc == 1 and "baseline" in rows["v3"] and "diverged" in rows["v1"]


def test_history_without_matches_is_a_user_error(archive: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", str(archive), "--tag", "model=nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "model=nope" in err

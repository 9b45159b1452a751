"""A 2-way tensor-parallel run compared with the same model in one process: real torchrun
subprocesses, real gloo collectives; the ranks joined like the single-process trace.

``torch_tp.py`` is written by hand on collectives (column-parallel ``fc1``, row-parallel ``fc2``
whose ``fc2.local`` holds partial sums, and a ``monitor`` whose output no rule rebuilds);
``torch_dtensor.py`` is the same MLP sharded by torch's own tensor-parallel API (DTensor), whose
placements the recorder keeps. Join rules on synthetic traces: tests/test_distributed_join.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from launch_env import LAUNCH_VARS, MODELS, ROOT, TIMEOUT, env

from padiff_trace import Kind, open_trace, recorder
from padiff_trace.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("launchers")]  # each recording starts torchrun and 2 Python processes with torch (~6 s)

TP_SPEC, DTENSOR_SPEC = MODELS / "torch_tp.py", MODELS / "torch_dtensor.py"


def record_nproc(spec: Path, out: Path) -> Path:
    proc = subprocess.run([sys.executable, "-m", "padiff_trace", "record", str(spec), "--out", str(out), "--steps", "2",
                           "--nproc", "2"], capture_output=True, text=True, cwd=ROOT, env=env(), timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def record_single(spec: Path, out: Path) -> Path:
    """The same spec in this process, without a launcher: the unsharded model."""
    for name in LAUNCH_VARS:
        assert name not in os.environ, name
    cwd = os.getcwd()
    os.chdir(ROOT)  # stacks relative to the repository, as the subprocesses record them
    try:
        return Path(recorder.RecordJob(str(spec.relative_to(ROOT)), str(out), steps=2).run())
    finally:
        os.chdir(cwd)


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_single(TP_SPEC, tmp_path_factory.mktemp("single") / "t")


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hand-written 2-way tensor-parallel run, ``record --nproc 2``."""
    return record_nproc(TP_SPEC, tmp_path_factory.mktemp("tp") / "t")


@pytest.fixture(scope="module")
def buggy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same with rank 1's slice of ``fc1`` off by 1e-3, torchrun typed by hand."""
    out = tmp_path_factory.mktemp("bug") / "t"
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m",
                           "padiff_trace", "record", str(TP_SPEC), "--out", str(out), "--steps", "2"], capture_output=True,
                          text=True, cwd=ROOT, env=env(PADIFF_TEST_BUG_RANK="1"), timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_tensor_parallel_run_aligns_with_one_process(sharded: Path, single: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report"
    assert main(["compare", str(sharded), str(single), "--report", str(report)]) == 0
    text = capsys.readouterr().out
    first = text.splitlines()[0]
    assert first == (f"A {sharded} is a multi-rank trace (2 ranks): joined like the single-process trace into "
                     f"{report}/joined.trace (31 concatenated, 2 summed, 23 replicated, 0 differing; 2 left out, not compared)")
    assert "padiff-trace compare: ALIGNED" in text
    # the probe's Gram matrix is a diagonal block on each rank: listed, not silently dropped
    assert "left out: monitor#0:out step 0 module_output: rank shapes (8, 8), (8, 8), single process (16, 16)" in text
    assert json.loads((report / "report.json").read_text())["verdict"] == "aligned"

    # the joined records, by rule
    assert main(["join", str(sharded), "--like", str(single), "--out", str(tmp_path / "joined")]) == 0
    text = capsys.readouterr().out
    assert "56 records (23 replicated, 31 concat, 2 sum, 0 differing), 2 left out" in text
    assert "concat axis 0 (shapes): fc1#0:weight param (step 0-2), fc1#0:bias param (step 0-2)" in text
    assert "concat axis 1 (shapes): fc2.local#0:weight param (step 0-2), fc1#0:out module_output (step 0, 1)" in text
    assert "sum (values): fc2.local#0:out module_output (step 0, 1)" in text  # partial sums before the all-reduce
    with open_trace(tmp_path / "joined") as tj, open_trace(single) as ts:
        meta = tj.meta["joined"]
        assert meta["rules"] == {"replicated": 23, "concat": 31, "sum": 2, "differing": 0, "left out": 2}
        assert meta["from"] == str(sharded) and meta["like"] == str(single) and meta["launcher"] == "torchrun"
        assert [d["record"] for d in meta["left_out"]] == ["monitor#0:out", "monitor#0:out"]
        for name in ("fc1", "fc2.local"):  # each rank's slice of the same full weights: joined, the very weights
            wj, ws = (next(r for r in t.select(kind=Kind.PARAM, module=name, step=0) if r.position == "weight") for t in (tj, ts))
            np.testing.assert_array_equal(wj.read(), ws.read())


def test_a_bug_in_one_shard_is_found_at_its_layer(buggy: Path, single: Path, sharded: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report"
    assert main(["compare", str(buggy), str(single), "--report", str(report)]) == 1
    text = capsys.readouterr().out
    assert "padiff-trace compare: DIVERGED" in text
    assert "First divergence: step 0, output" in text and "A fc1#0:out  [ColumnParallelLinear] float32[4, 16]" in text
    assert "first divergence fc1#0:out was joined by concat axis 1 (shapes)" in text
    assert "rank 0's slice [0:8] on axis 1" in text and "the largest difference is in rank 1's slice" in text
    doc = json.loads((report / "report.json").read_text())
    assert doc["verdict"] == "diverged" and doc["first_divergence"]["located"]["a"]["module"] == "fc1"
    with open_trace(report / "joined.trace") as tj:
        assert tj.meta["joined"]["from"] == str(buggy)
    # rank by rank, the two sharded runs: the all-reduce in fc2 carries rank 1's error to rank 0
    assert main(["compare", str(buggy), str(sharded)]) == 1
    text = capsys.readouterr().out
    rank0, rank1 = text[text.index("rank 0: DIVERGED"):text.index("rank 1: DIVERGED")], text[text.index("rank 1: DIVERGED"):]
    assert "A fc2#0:out  [RowParallelLinear]" in rank0 and "A fc1#0:out  [ColumnParallelLinear]" in rank1
    assert "earliest divergence: rank 1, step 0, fc1#0:out (record 6); later: rank 0 (fc2#0:out, record 14)" in text


def test_torch_tensor_parallel_api_dtensor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ColwiseParallel/RowwiseParallel on a CPU mesh: the recorder keeps each rank's local shard and the
    parameters' placements, and the join uses them before shapes."""
    sharded = record_nproc(DTENSOR_SPEC, tmp_path / "dt")
    single = record_single(DTENSOR_SPEC, tmp_path / "single")
    with open_trace(sharded / "rank-00001") as tr:
        splits = tr.meta["distributed"]["splits"]
        assert splits["fc1.weight"] == {"axis": 0, "from": "DTensor Shard(dim=0)"}
        assert splits["fc2.weight"] == {"axis": 1, "from": "DTensor Shard(dim=1)"} and splits["fc2.bias"]["replicated"]
        w = next(r for r in tr.select(kind=Kind.PARAM, module="fc1", step=0) if r.position == "weight")
        assert w.shape == (8, 8) and w.has_data  # the local shard, with its values
    assert main(["compare", str(sharded), str(single)]) == 0
    text = capsys.readouterr().out
    assert "(27 concatenated, 0 summed, 21 replicated, 0 differing; 0 left out, not compared)" in text
    assert "padiff-trace compare: ALIGNED" in text
    assert main(["join", str(sharded), "--like", str(single), "--out", str(tmp_path / "j")]) == 0
    text = capsys.readouterr().out
    assert "concat axis 0 (split info: DTensor Shard(dim=0)): fc1#0:weight param (step 0-2)" in text
    assert "concat axis 1 (split info: DTensor Shard(dim=1)): fc2#0:weight param (step 0-2)" in text
    assert "concat axis 1 (shapes): fc1#0:out module_output (step 0, 1)" in text

"""Weight replay into a sharded model: ``record --nproc 2 --weights-from T_SINGLE``, each rank taking
its slice of a single-process trace's weights (``recorder/_shardreplay.py``). Real torchrun, real gloo.

The models draw their weights from ``--seed`` (``tests/distributed_models/*_seeded.py``): the single
process records seed 1, the sharded runs seed 2, so only a replay makes them agree. Each rank's
recorded step-0 weights are checked against numpy slices of the single trace's, read from the
traces (not through ``join``).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from launch_env import LAUNCH_VARS, MODELS, ROOT, TIMEOUT, env
from padiff_trace.recorder._shardreplay import RankSlicePair, rank_range, replay_rank, slice_axis

from padiff_trace import Kind, open_trace, recorder
from padiff_trace.cli import main

pytestmark = pytest.mark.xdist_group("launchers")  # real launchers and gloo: one at a time under pytest -n

TP_SPEC, DTENSOR_SPEC, SCRIPT = MODELS / "torch_tp_seeded.py", MODELS / "torch_dtensor_seeded.py", MODELS / "torch_tp_script.py"
slow = pytest.mark.slow  # each sharded recording starts torchrun and 2 Python processes with torch (~5 s)


def record_single(spec: Path, out: Path, seed: int = 1) -> Path:
    """The unsharded model in this process."""
    for name in LAUNCH_VARS:
        assert name not in os.environ, name
    cwd = os.getcwd()
    os.chdir(ROOT)  # stacks relative to the repository, as the subprocesses record them
    try:
        job = recorder.RecordJob(str(spec.relative_to(ROOT)), str(out), recorder.RecordOptions(seed=seed), steps=2)
        return Path(job.run())
    finally:
        os.chdir(cwd)


def record_nproc(spec: Path, out: Path, *extra: str, **environ: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "padiff_trace", "record", str(spec), "--out", str(out), "--steps", "2",
                           "--nproc", "2", "--seed", "2", *extra], capture_output=True, text=True, cwd=ROOT,
                          env=env(**environ), timeout=TIMEOUT)


def weights(path: Path) -> dict[str, np.ndarray]:
    """A trace's step-0 weights by full name, read with numpy."""
    with open_trace(path) as tr:
        return {f"{r.module}.{r.position}" if r.module else r.position: r.read() for r in tr.select(kind=Kind.PARAM, step=0)}


def compare(sharded: Path, single: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["compare", str(sharded), str(single)])
    return code, capsys.readouterr().out


@pytest.fixture(scope="module")
def single_tp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_single(TP_SPEC, tmp_path_factory.mktemp("single_tp") / "t")


@pytest.fixture(scope="module")
def single_dt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_single(DTENSOR_SPEC, tmp_path_factory.mktemp("single_dt") / "t")


@slow
def test_hand_written_tp_takes_its_slices(single_tp: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No split information: shapes decide (fc1 on axis 0, fc2.local on axis 1); fc2.bias is copied whole."""
    out = tmp_path / "tp"
    proc = record_nproc(TP_SPEC, out, "--weights-from", str(single_tp))
    assert proc.returncode == 0, proc.stderr[-3000:]
    code, text = compare(out, single_tp, capsys)
    assert code == 0 and "padiff-trace compare: ALIGNED" in text, text
    whole = weights(single_tp)
    for rank in (0, 1):
        got = weights(out / f"rank-{rank:05d}")
        rows, cols = slice(8 * rank, 8 * rank + 8), slice(8 * rank, 8 * rank + 8)
        np.testing.assert_array_equal(got["fc1.weight"], whole["fc1.weight"][rows])
        np.testing.assert_array_equal(got["fc1.bias"], whole["fc1.bias"][rows])
        np.testing.assert_array_equal(got["fc2.local.weight"], whole["fc2.local.weight"][:, cols])
        np.testing.assert_array_equal(got["fc2.bias"], whole["fc2.bias"])
        doc = json.loads((out / f"rank-{rank:05d}" / "weightmap.json").read_text())
        convert = {e["target"]: e["convert"] for e in doc["weights"]}
        assert convert == {"fc1.weight": f"sliced axis 0, rank {rank} of 2 (shapes)",
                           "fc1.bias": f"sliced axis 0, rank {rank} of 2 (shapes)",
                           "fc2.local.weight": f"sliced axis 1, rank {rank} of 2 (shapes)", "fc2.bias": "copy"}


@slow
def test_without_replay_the_seeds_differ(single_tp: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The control: the same sharded run without ``--weights-from`` keeps seed 2's weights."""
    proc = record_nproc(TP_SPEC, tmp_path / "tp")
    assert proc.returncode == 0, proc.stderr[-3000:]
    code, text = compare(tmp_path / "tp", single_tp, capsys)
    assert code == 1 and "padiff-trace compare: DIVERGED" in text, text
    assert not np.array_equal(weights(tmp_path / "tp" / "rank-00000")["fc2.bias"], weights(single_tp)["fc2.bias"])


@slow
def test_dtensor_model_takes_its_shards(single_dt: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Split information decides: Shard(0) for fc1, Shard(1) for fc2.weight, Replicate for fc2.bias, and the
    Partial ``offset``: rank 0 the value, rank 1 zeros (their sum is the value)."""
    out = tmp_path / "dt"
    proc = record_nproc(DTENSOR_SPEC, out, "--weights-from", str(single_dt))
    assert proc.returncode == 0, proc.stderr[-3000:]
    code, text = compare(out, single_dt, capsys)
    assert code == 0 and "padiff-trace compare: ALIGNED" in text, text
    whole = weights(single_dt)
    for rank in (0, 1):
        got = weights(out / f"rank-{rank:05d}")
        part = slice(8 * rank, 8 * rank + 8)
        np.testing.assert_array_equal(got["fc1.weight"], whole["fc1.weight"][part])
        np.testing.assert_array_equal(got["fc1.bias"], whole["fc1.bias"][part])
        np.testing.assert_array_equal(got["fc2.weight"], whole["fc2.weight"][:, part])
        np.testing.assert_array_equal(got["fc2.bias"], whole["fc2.bias"])
        np.testing.assert_array_equal(got["offset"], whole["offset"] if rank == 0 else np.zeros_like(whole["offset"]))
        doc = json.loads((out / f"rank-{rank:05d}" / "weightmap.json").read_text())
        convert = {e["target"]: e["convert"] for e in doc["weights"]}
        assert convert["fc2.weight"] == f"sliced axis 1, rank {rank} of 2 (DTensor Shard(dim=1))"
        assert convert["offset"] == f"partial sum, rank {rank} of 2: {'zeros' if rank else 'the value'} (DTensor Partial(sum))"
    # the control (the sharded control run is the hand-written model's, above): seed 2 is other weights
    other = weights(record_single(DTENSOR_SPEC, tmp_path / "seed2", seed=2))
    assert all(not np.array_equal(other[name], whole[name]) for name in whole)


@slow
def test_a_slice_on_no_axis_is_one_line(single_tp: Path, tmp_path: Path) -> None:
    out = tmp_path / "bad"
    proc = record_nproc(TP_SPEC, out, "--weights-from", str(single_tp), PADIFF_TEST_BAD_SLICE="1")
    assert proc.returncode == 2
    line = "fc1.weight [6, 8] is no 1/2 slice of the trace's fc1.weight [16, 8] on any one axis (world size 2)"
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("padiff-trace: error: ")]
    assert errors and all(line in ln for ln in errors), proc.stderr[-3000:]
    assert f"{single_tp} -> model (rank 0 of 2): {line}" in proc.stderr  # each rank says it, once
    assert "recorder/_shardreplay.py" not in proc.stderr and "WeightTransferError" not in proc.stderr  # no traceback of ours
    assert sorted(p.name for p in out.iterdir()) == ["jobs"]  # nothing recorded, no rank directory


@slow
def test_python_api_under_torchrun(single_tp: Path, tmp_path: Path) -> None:
    """A script of one's own: ``recorder.transfer_weights`` in each rank, then ``recorder.record``."""
    out = tmp_path / "script"
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", str(SCRIPT),
                           str(single_tp), str(out)], capture_output=True, text=True, cwd=ROOT, env=env(), timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "rank 1: fc2.local.weight: sliced axis 1, rank 1 of 2 (shapes)" in proc.stdout
    whole = weights(single_tp)
    for rank in (0, 1):
        got = weights(out / f"rank-{rank:05d}")
        np.testing.assert_array_equal(got["fc1.weight"], whole["fc1.weight"][8 * rank:8 * rank + 8])
        np.testing.assert_array_equal(got["fc2.local.weight"], whole["fc2.local.weight"][:, 8 * rank:8 * rank + 8])


@slow
def test_split_axis_and_layouts_in_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               caplog: pytest.LogCaptureFixture) -> None:
    """The launcher's variables set by hand in this process: paddle's ``split_axis`` (a paddle Linear
    ``[in, out]`` split on its out axis, rank 1 of 2), then the same paddle trace sliced into a torch
    rank's Linear ``[out, in]`` by shapes, across the two layouts (rank 0 of 2)."""
    paddle = pytest.importorskip("paddle")
    torch = pytest.importorskip("torch")
    paddle.seed(1)
    full = paddle.nn.Linear(8, 16)
    with recorder.record(full, tmp_path / "one"):
        pass  # the step-0 weights are recorded on entry
    w, b = full.weight.numpy(), full.bias.numpy()  # [8, 16], [16]
    part = paddle.nn.Linear(8, 8)
    for t, axis in ((part.weight, 1), (part.bias, 0)):
        t.is_distributed, t.split_axis = True, axis
    monkeypatch.setenv("PADDLE_TRAINER_ID", "1")
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "2")
    with caplog.at_level(logging.INFO, logger="padiff_trace.recorder._shardreplay"):
        wm = recorder.transfer_weights(recorder.get_adapter("paddle"), part, tmp_path / "one")
    assert (f"rank 1 of 2: 2 weight tensor(s) of {tmp_path / 'one'} sliced (axis 1: weight; axis 0: bias), "
            "0 copied whole") in caplog.messages
    np.testing.assert_array_equal(part.weight.numpy(), w[:, 8:])
    np.testing.assert_array_equal(part.bias.numpy(), b[8:])
    assert [p.conversion() for p in wm.pairs] == ["sliced axis 1, rank 1 of 2 (is_distributed, split_axis)",
                                                  "sliced axis 0, rank 1 of 2 (is_distributed, split_axis)"]
    monkeypatch.delenv("PADDLE_TRAINER_ID")
    monkeypatch.delenv("PADDLE_TRAINERS_NUM")
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    lin = torch.nn.Linear(8, 8)
    wm = recorder.transfer_weights(recorder.get_adapter("torch"), lin, tmp_path / "one")
    np.testing.assert_array_equal(lin.weight.detach().numpy(), w[:, :8].T)
    np.testing.assert_array_equal(lin.bias.detach().numpy(), b[:8])
    assert wm.pairs[0].conversion() == "sliced axis 0, rank 0 of 2 (shapes), transpose"


# ---------------------------------------------------------------- the rules, without processes

def test_rank_range_is_torch_chunk() -> None:
    torch = pytest.importorskip("torch")
    for size in range(12):
        for world in (1, 2, 3, 4, 5):
            chunks = [len(c) for c in torch.arange(size).chunk(world)] if size else []
            got = [rank_range(size, r, world) for r in range(world)]
            assert [b - a for a, b in got][:len(chunks)] == chunks and all(a == b for a, b in got[len(chunks):])
            assert [a for a, _ in got][:len(chunks)] == [sum(chunks[:k]) for k in range(len(chunks))]


def test_slice_axis() -> None:
    assert slice_axis((16, 8), (8, 8), 2) == 0
    assert slice_axis((4, 16), (4, 8), 2) == 1
    assert slice_axis((16,), (8,), 2) == 0
    assert slice_axis((16, 8), (6, 8), 2) is None  # not a half
    assert slice_axis((16, 16), (8, 8), 2) is None  # two axes
    assert slice_axis((16, 8), (16, 8), 2) is None  # the same shape: copied whole, no slice
    assert slice_axis((16, 8), (8,), 2) is None


def test_conversion_names_axis_and_rank() -> None:
    p = RankSlicePair("w", "w", None, None, "name", (8, 16), None, 0, rank=1, world_size=2, model_axis=0, split_from="shapes")
    assert p.conversion() == "sliced axis 0, rank 1 of 2 (shapes)" and not p.zero
    q = RankSlicePair("w", "w", None, (1, 0), "name", (0, 4), None, 1, rank=0, world_size=4, model_axis=0, split_from="x")
    assert q.conversion() == "sliced axis 0, rank 0 of 4 (x), transpose"
    z = RankSlicePair("w", "w", None, None, "name", rank=1, world_size=2, split_from="DTensor Partial(sum)")
    assert z.zero and z.conversion() == "partial sum, rank 1 of 2: zeros (DTensor Partial(sum))"


def test_a_single_process_is_no_rank(tmp_path: Path) -> None:
    """Without a launcher the replay is the single-process one (``replay_rank`` opens nothing)."""
    pytest.importorskip("torch")
    for name in LAUNCH_VARS:
        assert name not in os.environ, name
    assert replay_rank(recorder.get_adapter("torch"), tmp_path / "no such trace") is None

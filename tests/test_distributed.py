"""Multi-rank traces without a launcher (fast): the rank layout and meta a recorder writes when a
launcher's environment says who it is, single-process recording left as it was, and ``info``,
``ls`` and ``compare`` on multi-rank traces with a rank missing. Real launchers (torchrun, paddle's),
real gloo and real SIGKILL: tests/test_distributed_launch.py."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
from launch_env import LAUNCH_VARS

from padiff_trace import UserError, open_trace, pipeline, recorder
from padiff_trace.cli import main


@pytest.fixture(autouse=True)
def _no_launcher(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in LAUNCH_VARS:
        monkeypatch.delenv(name, raising=False)


class Net(torch.nn.Module):
    def __init__(self, bug: float = 0.0) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.fc1, self.fc2, self.bug = torch.nn.Linear(4, 8), torch.nn.Linear(8, 2), bug

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.tanh(self.fc1(x))) + self.bug


def record(path: Path, bug: float = 0.0, seed: int = 0) -> tuple[Path, np.ndarray]:
    """One training step of ``Net`` recorded into ``path``; the trace directory and the output."""
    model = Net(bug)
    x = torch.tensor(np.random.default_rng(seed).standard_normal((3, 4)), dtype=torch.float32)
    with recorder.record(model, path) as rec:
        out = model(x)
        rec.loss((out**2).mean()).backward()
        rec.step()
    return rec.path, out.detach().numpy()


@pytest.fixture
def as_rank(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """``as_rank(k, n)``: this process is rank k of n, as torchrun tells it (environment only)."""

    def set_rank(rank: int, world: int, launch: str = "launch-1") -> None:
        for name, value in (("RANK", rank), ("WORLD_SIZE", world), ("LOCAL_RANK", rank), ("TORCHELASTIC_RUN_ID", launch)):
            monkeypatch.setenv(name, str(value))

    yield set_rank


def test_single_process_layout_is_unchanged(tmp_path: Path) -> None:
    path, _ = record(tmp_path / "t")
    assert path == tmp_path / "t"
    names = sorted(p.name for p in path.iterdir())
    assert names and all(re.fullmatch(r"shard-\d{6}\.h5", n) for n in names), names  # shards only, as before
    with open_trace(path) as tr:
        assert "distributed" not in tr.meta and tr.complete
    assert not pipeline.is_multirank(path)


def test_a_rank_writes_its_own_trace_with_distributed_meta(tmp_path: Path, as_rank: object) -> None:
    as_rank(1, 2)  # type: ignore[operator]
    path, out = record(tmp_path / "t", seed=1)
    assert path == tmp_path / "t" / "rank-00001"
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == ["rank-00001", "ranks.json"]
    doc = json.loads((tmp_path / "t" / "ranks.json").read_text())
    assert doc == {"format": "padiff-trace-ranks", "version": 1, "world_size": 2, "launcher": "torchrun",
                   "launch_id": "launch-1", "framework": "torch"}
    with open_trace(path) as tr:
        assert tr.complete
        assert tr.meta["distributed"] == {"rank": 1, "world_size": 2, "local_rank": 1, "backend": None,
                                          "launcher": "torchrun", "launch_id": "launch-1", "detected_from": "environment"}
        (root,) = [r for r in tr.select(kind="module_output", module="") if r.step == 0]
        np.testing.assert_array_equal(root.read(), out)  # recorded as computed


def test_each_launcher_is_a_table_row() -> None:
    adapter = recorder.get_adapter("torch")
    paddle_env = {"PADDLE_TRAINER_ID": "3", "PADDLE_TRAINERS_NUM": "4", "PADDLE_LOCAL_RANK": "1",
                  "PADDLE_MASTER": "10.0.0.1:6170", "PADDLE_DISTRI_BACKEND": "GLOO"}
    d = recorder.detect_distributed(adapter, paddle_env)
    assert d == recorder.Distributed(3, 4, 1, "gloo", "paddle.distributed.launch", "10.0.0.1:6170", "environment")
    # the variables without the launcher's own marker: named by where they came from
    d = recorder.detect_distributed(adapter, {"RANK": "0", "WORLD_SIZE": "2"})
    assert d is not None and d.launcher == "RANK/WORLD_SIZE environment" and d.local_rank is None
    assert recorder.detect_distributed(adapter, {}) is None
    cmd = recorder.LAUNCHERS["paddle"].command(2, ["prog", "x"], "L")
    assert cmd[1:] == ["-m", "paddle.distributed.launch", "--nproc_per_node", "2", "--log_dir", "L", "prog", "x"]


@pytest.mark.parametrize(("env", "words"), [({"RANK": "one", "WORLD_SIZE": "2"}, "RANK='one' is not a number"),
                                            ({"RANK": "2", "WORLD_SIZE": "2"}, "RANK=2 is not a rank of a world of 2")])
def test_a_malformed_launch_environment_is_one_line(env: dict[str, str], words: str) -> None:
    with pytest.raises(UserError, match=words) as info:
        recorder.detect_distributed(recorder.get_adapter("torch"), env)
    assert "\n" not in str(info.value)


def test_single_and_multi_rank_never_share_a_directory(tmp_path: Path, as_rank: object) -> None:
    record(tmp_path / "single")
    as_rank(0, 2)  # type: ignore[operator]
    with pytest.raises(UserError, match="single-process trace is there"):
        record(tmp_path / "single")
    record(tmp_path / "multi")
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "TORCHELASTIC_RUN_ID"):
        os.environ.pop(name)
    with pytest.raises(UserError, match="holds a multi-rank trace"):
        record(tmp_path / "multi")


@pytest.fixture
def two_runs(tmp_path: Path, as_rank: object) -> tuple[Path, Path]:
    """A: ranks 0 and 1 of 2, clean. B: rank 0 clean, rank 1 with a bug in its output; C: rank 0 only."""
    for rank in (0, 1):
        as_rank(rank, 2)  # type: ignore[operator]
        record(tmp_path / "a", seed=rank)
        record(tmp_path / "b", bug=1e-3 * rank, seed=rank)
        if rank == 0:
            record(tmp_path / "c", seed=rank)
    return tmp_path / "a", tmp_path / "b"


def test_info_and_ls_name_the_missing_rank(two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    c = two_runs[0].parent / "c"
    assert main(["info", str(c)]) == 0
    out = capsys.readouterr().out
    assert "world size 2" in out and "rank 0 of 2: complete" in out
    assert "rank 1 of 2: missing" in out and "INCOMPLETE" in out
    assert main(["info", str(c), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["state"] for r in doc["ranks"]] == ["complete", "missing"] and doc["world_size"] == 2
    assert main(["ls", str(c)]) == 0
    out = capsys.readouterr().out
    assert "complete, rank 0 of 2" in out and "MISSING: rank 1 of 2" in out
    assert main(["ls", str(c.parent)]) == 0  # a directory of archived traces
    out = capsys.readouterr().out
    assert "a/rank-00001" in out and "c/rank-00001" in out and "MISSING: rank 1 of 2" in out
    assert main(["info", str(c / "rank-00000")]) == 0
    assert "process    rank 0 of 2 (local 0), torchrun" in capsys.readouterr().out


def test_compare_rank_by_rank(two_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = two_runs
    assert main(["compare", str(a), str(b), "--report", str(tmp_path / "r")]) == 1
    out = capsys.readouterr().out
    assert "rank 0: ALIGNED" in out and "rank 1: DIVERGED" in out
    assert "first divergence: step 0" in out and "test_distributed.py" in out  # the user stack of the divergence
    assert (tmp_path / "r" / "rank-00001" / "report.json").is_file() and (tmp_path / "r" / "rank-00000" / "report.html").is_file()
    doc = json.loads((tmp_path / "r" / "ranks.json").read_text())
    assert [r["verdict"] for r in doc["ranks"]] == ["aligned", "diverged"] and doc["exit_code"] == 1
    first = doc["ranks"][1]["first_divergence"]
    assert first["a"]["module_type"] == "Net" and first["a"]["stack"] and doc["ranks"][0]["first_divergence"] is None
    assert main(["compare", str(a), str(a)]) == 0


def test_compare_names_a_missing_rank_and_fails(two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a = two_runs[0]
    assert main(["compare", str(a), str(a.parent / "c")]) == 3
    out = capsys.readouterr().out
    assert "rank 0: ALIGNED" in out and "rank 1: MISSING" in out and "B rank 1 of 2: missing" in out


def test_compare_joins_one_multi_rank_side_and_refuses_two_world_sizes(two_runs: tuple[Path, Path], tmp_path: Path,
                                                                       as_rank: object, capsys: pytest.CaptureFixture[str]) -> None:
    a = two_runs[0]
    as_rank(0, 3)  # type: ignore[operator]
    record(tmp_path / "three")
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "TORCHELASTIC_RUN_ID"):
        os.environ.pop(name)
    record(tmp_path / "single")
    capsys.readouterr()
    # data-parallel ranks (other inputs on rank 1) against one process: joined, rank 0's values where they differ
    assert main(["compare", str(tmp_path / "single"), str(a)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"B {a} is a multi-rank trace (2 ranks): joined like the single-process trace into a temporary trace")
    assert "ALIGNED" in out and " differing;" in out and "0 differing" not in out
    assert main(["compare", str(a), str(tmp_path / "three")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "2 ranks" in err and "3" in err and "same world size" in err
    assert "issue 29" in err and "padiff-trace join" in err


SPEC = """
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(7)  # other weights than the traces': replaced by rank 1's
        self.fc1, self.fc2 = torch.nn.Linear(4, 8), torch.nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))

def model():
    return Net()

def inputs():
    return torch.zeros(3, 4)
"""


def test_a_rank_replays_the_same_rank(two_runs: tuple[Path, Path], tmp_path: Path, as_rank: object) -> None:
    """``--weights-from``/``--inputs-from`` a multi-rank trace: each rank takes its own rank's."""
    spec = tmp_path / "spec.py"
    spec.write_text(SPEC)
    a = two_runs[0]
    as_rank(1, 2)  # type: ignore[operator]
    out = recorder.RecordJob(str(spec), str(tmp_path / "replayed"), inputs_from=str(a), weights_from=str(a)).run()
    assert out == tmp_path / "replayed" / "rank-00001"
    with open_trace(out) as tr, open_trace(a / "rank-00001") as src:
        for kind in ("model_input", "param"):
            mine = {(r.module, r.position): r.read() for r in tr.select(kind=kind, step=0)}
            theirs = {(r.module, r.position): r.read() for r in src.select(kind=kind, step=0)}
            assert mine.keys() == theirs.keys() and mine
            for k, value in mine.items():
                np.testing.assert_array_equal(value, theirs[k])


def test_a_rank_left_by_an_earlier_launch_is_stale(tmp_path: Path, as_rank: object, capsys: pytest.CaptureFixture[str]) -> None:
    """Launch 2 wrote rank 0 only (its rank 1 died before recording): rank 1's trace is launch 1's."""
    for rank in (0, 1):
        as_rank(rank, 2, "launch-1")  # type: ignore[operator]
        record(tmp_path / "t", seed=rank)
    as_rank(0, 2, "launch-2")  # type: ignore[operator]
    model = Net()
    with recorder.record(model, tmp_path / "t", overwrite=True) as rec:
        rec.loss(model(torch.zeros(3, 4)).mean())
        rec.step()
    t = pipeline.open_ranks(tmp_path / "t")
    assert [r.state for r in t.ranks] == ["complete", "stale"] and t.launch_id == "launch-2"
    assert main(["info", str(tmp_path / "t")]) == 0
    assert "rank 1 of 2: stale (left by an earlier launch (launch-1)" in capsys.readouterr().out
    assert main(["compare", str(tmp_path / "t"), str(tmp_path / "t")]) == 3
    assert "rank 1: MISSING" in capsys.readouterr().out

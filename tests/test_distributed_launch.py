"""Models that need more than one process, under the frameworks' own launchers: real torchrun and
``python -m paddle.distributed.launch`` subprocesses, real gloo collectives, a real SIGKILL.

The spec (tests/distributed_models/torch_ranks.py) broadcasts rank 0's weights and centres each
step's inputs with an all-reduce; it has no gradient all-reduce, so a bug planted on rank 1 stays
on rank 1 and rank 0 must compare aligned.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from launch_env import MODELS, ROOT, TIMEOUT, env

from padiff_trace import Kind, open_trace

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("launchers")]  # each launch starts 2-3 Python processes with a framework (~5 s)

TORCH_SPEC, PADDLE_SPEC = MODELS / "torch_ranks.py", MODELS / "paddle_ranks.py"


def cli(*argv: object, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "padiff_trace", *map(str, argv)], capture_output=True, text=True, cwd=ROOT,
                          env=env(**extra), timeout=TIMEOUT)


def torchrun_argv(out: Path, *, steps: int = 2) -> list[str]:
    """What a user types: torchrun around ``padiff-trace record`` (``python -m`` for the venv's interpreter)."""
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m", "padiff_trace",
            "record", str(TORCH_SPEC), "--out", str(out), "--steps", str(steps)]


def by_hand(out: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(torchrun_argv(out), capture_output=True, text=True, cwd=ROOT, env=env(**extra), timeout=TIMEOUT)


def records(path: Path) -> dict[tuple[int, str, str, str, int], np.ndarray | None]:
    """Every record of a trace by (step, kind, module, position, call_index), with its data."""
    with open_trace(path) as tr:
        assert tr.complete, path
        return {(r.step, r.kind.label, r.module, r.position, r.call_index): (r.read() if r.has_data else None) for r in tr.records()}


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clean 2-rank recording, torchrun typed by hand."""
    out = tmp_path_factory.mktemp("clean") / "t"
    proc = by_hand(out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def buggy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same spec with a bug on rank 1 only, recorded through ``record --nproc 2``."""
    out = tmp_path_factory.mktemp("buggy") / "t"
    proc = cli("record", TORCH_SPEC, "--out", out, "--steps", 2, "--nproc", 2, PADIFF_TEST_BUG_RANK="1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "with torchrun (2 processes)" in proc.stdout and "2 ranks" in proc.stdout
    return out


def test_each_rank_is_an_ordinary_trace_with_its_rank(clean: Path) -> None:
    assert sorted(p.name for p in clean.iterdir()) == ["rank-00000", "rank-00001", "ranks.json"]
    ids = set()
    for rank in (0, 1):
        with open_trace(clean / f"rank-{rank:05d}") as tr:
            d = tr.meta["distributed"]
            assert (d["rank"], d["world_size"], d["local_rank"], d["backend"], d["launcher"]) == (rank, 2, rank, "gloo", "torchrun")
            assert d["detected_from"] == "process group"
            ids.add(d["launch_id"])
    assert len(ids) == 1 and json.loads((clean / "ranks.json").read_text())["launch_id"] in ids


def test_bug_on_rank_1_is_found_on_rank_1_only(clean: Path, buggy: Path, tmp_path: Path) -> None:
    report = tmp_path / "report"
    proc = cli("compare", clean, buggy, "--report", report)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    assert "padiff-trace compare, 2 ranks: DIVERGED" in out
    assert "rank 0: ALIGNED" in out and "rank 1: DIVERGED" in out
    rank1 = out[out.index("rank 1: DIVERGED"):]
    assert "first divergence: step 0, output" in rank1
    assert "fc2#0:out  [Head]" in rank1  # the module whose forward adds the 1e-3
    assert "torch_ranks.py:" in rank1 and "return self.fc2(self.act(self.fc1(x)))" in rank1  # its stack
    doc = json.loads((report / "ranks.json").read_text())
    assert [(r["rank"], r["verdict"], r["report"]) for r in doc["ranks"]] == [(0, "aligned", "rank-00000"), (1, "diverged", "rank-00001")]
    for rank, verdict in ((0, "aligned"), (1, "diverged")):
        assert json.loads((report / f"rank-{rank:05d}" / "report.json").read_text())["verdict"] == verdict
    assert (report / "summary.txt").read_text().startswith("padiff-trace compare, 2 ranks: DIVERGED")


def test_nproc_records_what_torchrun_by_hand_records(clean: Path, tmp_path: Path) -> None:
    out = tmp_path / "t"
    proc = cli("record", TORCH_SPEC, "--out", out, "--steps", 2, "--nproc", 2)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for rank in (0, 1):
        a, b = records(clean / f"rank-{rank:05d}"), records(out / f"rank-{rank:05d}")
        assert a.keys() == b.keys()
        for key, value in a.items():
            if value is None:
                assert b[key] is None, key
            else:
                np.testing.assert_array_equal(value, b[key], err_msg=str(key))
        with open_trace(clean / f"rank-{rank:05d}") as ta, open_trace(out / f"rank-{rank:05d}") as tb:
            da, db = dict(ta.meta["distributed"]), dict(tb.meta["distributed"])
            assert da.pop("launch_id") != db.pop("launch_id") and da == db
            assert tb.meta["user_command"].endswith("--nproc 2")
    # the job every rank ran stays beside the ranks; the launcher was started once
    assert json.loads((out / "jobs" / "record.json").read_text())["job"]["out"] == str(out)
    assert cli("compare", clean, out).returncode == 0


NUMBERS = """
import sys, numpy as np, torch, torch.distributed as dist
sys.path.insert(0, sys.argv[1])
import torch_ranks as s
net = s.model()
opt = s.optimizer(net)
outs = []
for step in range(s.STEPS):
    y = net(s.inputs(step))
    s.loss(y).backward()
    opt.step()
    opt.zero_grad()
    outs.append(y.detach().numpy())
np.save(f"{sys.argv[2]}/out-{dist.get_rank()}.npy", np.stack(outs))
dist.destroy_process_group()
import os
os._exit(0)  # torch 2.13 + gloo sometimes abort in the interpreter's teardown ("terminate called without an active exception")
"""


def test_recording_does_not_change_the_numbers_of_any_rank(clean: Path, tmp_path: Path) -> None:
    script = tmp_path / "bare.py"
    script.write_text(NUMBERS)
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", str(script),
                           str(MODELS), str(tmp_path)], capture_output=True, text=True, cwd=ROOT, env=env(), timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for rank in (0, 1):
        bare = np.load(tmp_path / f"out-{rank}.npy")
        with open_trace(clean / f"rank-{rank:05d}") as tr:
            recorded = [r.read() for r in sorted(tr.select(kind=Kind.MODULE_OUTPUT, module=""), key=lambda r: r.step)]
        assert len(recorded) == len(bare) == 2
        for step, out in enumerate(recorded):
            np.testing.assert_array_equal(out, bare[step])  # bit for bit, every step


def _wait(what: str, ready: object, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _complete(path: Path) -> bool:
    try:
        with open_trace(path) as tr:
            return tr.complete
    except Exception:
        return False


def test_sigkill_of_one_rank_leaves_the_other_readable(clean: Path, tmp_path: Path) -> None:
    out, pids = tmp_path / "t", tmp_path / "pids"
    pids.mkdir()
    proc = subprocess.Popen(torchrun_argv(out), cwd=ROOT, env=env(PADIFF_TEST_HANG_RANK="1", PADIFF_TEST_PID_DIR=str(pids)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        pid_file = pids / "rank-1.pid"
        _wait("rank 1 to hang in its last step", pid_file.exists)
        _wait("rank 0 to finish", lambda: _complete(out / "rank-00000"))
        os.kill(int(pid_file.read_text()), signal.SIGKILL)
        _, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0 and "SIGKILL" in err  # torchrun reports the killed rank
    # rank 0: complete and readable; rank 1: what it flushed before it was killed
    with open_trace(out / "rank-00000") as tr:
        assert tr.complete and len(tr) == len(records(clean / "rank-00000"))
    with open_trace(out / "rank-00001") as tr:
        assert not tr.complete and tr.select(kind=Kind.MODEL_INPUT, step=0)
    info = cli("info", out)
    assert info.returncode == 0, info.stderr
    assert "rank 0 of 2: complete" in info.stdout and "rank 1 of 2: incomplete (the recorder did not close it" in info.stdout
    assert "INCOMPLETE" in info.stdout
    ls = cli("ls", out)
    assert "complete, rank 0 of 2" in ls.stdout and "incomplete, rank 1 of 2" in ls.stdout
    cmp = cli("compare", clean, out)
    assert cmp.returncode == 3, cmp.stdout + cmp.stderr
    assert "rank 0: ALIGNED" in cmp.stdout and "rank 1: INCOMPLETE" in cmp.stdout and "B rank 1 of 2: incomplete" in cmp.stdout


def test_nproc_failure_is_one_line_naming_the_rank(tmp_path: Path) -> None:
    spec = tmp_path / "bad.py"
    spec.write_text("import torch\nimport torch.distributed as dist\n\ndef model():\n    dist.init_process_group('gloo')\n"
                    "    if dist.get_rank() == 1:\n        raise ValueError('boom on rank 1')\n    return torch.nn.Linear(2, 2)\n\n"
                    "def inputs():\n    return torch.ones(1, 2)\n")
    proc = cli("record", spec, "--out", tmp_path / "t", "--nproc", 2)
    assert proc.returncode == 2, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("padiff-trace: error: recording ") and "with torchrun (2 processes) failed" in last
    assert "raised ValueError: boom on rank 1" in last and "rank 1 of 2: missing" in last
    assert cli("info", tmp_path / "t").stdout.count("rank 0 of 2: complete") == 1


def test_paddle_distributed_launch_on_cpu(tmp_path: Path) -> None:
    runs = {}
    for name, bug in (("clean", "-1"), ("buggy", "1")):
        out = tmp_path / name
        proc = cli("record", PADDLE_SPEC, "--out", out, "--steps", 2, "--nproc", 2, PADIFF_TEST_BUG_RANK=bug)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
        assert "with paddle.distributed.launch (2 processes)" in proc.stdout
        runs[name] = out
    for rank in (0, 1):
        with open_trace(runs["clean"] / f"rank-{rank:05d}") as tr:
            d = tr.meta["distributed"]
            assert (tr.meta["framework"], d["rank"], d["world_size"], d["backend"], d["launcher"]) == (
                "paddle", rank, 2, "gloo", "paddle.distributed.launch")
    assert (runs["clean"] / "logs" / "workerlog.1").is_file()  # paddle's per-rank logs, not in ./log
    proc = cli("compare", runs["clean"], runs["buggy"])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "rank 0: ALIGNED" in proc.stdout and "rank 1: DIVERGED" in proc.stdout and "fc2#0:out  [Head]" in proc.stdout


def test_run_nproc_paddle_ranks_against_torch_ranks(tmp_path: Path) -> None:
    """``run --nproc 2``: paddle's launcher records A, torchrun records B, each torch rank replaying the
    same paddle rank's weights; rank k is compared with rank k."""
    proc = cli("run", PADDLE_SPEC, TORCH_SPEC, "--out", tmp_path, "--nproc", 2, "--steps", 2)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "padiff-trace compare, 2 ranks: ALIGNED" in proc.stdout
    assert "rank 0: ALIGNED" in proc.stdout and "rank 1: ALIGNED" in proc.stdout
    for rank in (0, 1):
        b = tmp_path / "torch_ranks.trace" / f"rank-{rank:05d}"
        with open_trace(b) as tb, open_trace(tmp_path / "paddle_ranks.trace" / f"rank-{rank:05d}") as ta:
            assert tb.meta["replayed_weights"] and (b / "weightmap.json").is_file()
            assert (ta.meta["distributed"]["launcher"], tb.meta["distributed"]["launcher"]) == ("paddle.distributed.launch", "torchrun")
            wa = {r.module: r.read() for r in ta.select(kind=Kind.PARAM, step=0) if r.position == "weight"}
            wb = {r.module: r.read() for r in tb.select(kind=Kind.PARAM, step=0) if r.position == "weight"}
            for module in ("fc1", "fc2"):
                np.testing.assert_array_equal(wa[module].T, wb[module])  # paddle [in, out] -> torch [out, in]
        assert json.loads((tmp_path / "report" / f"rank-{rank:05d}" / "report.json").read_text())["verdict"] == "aligned"

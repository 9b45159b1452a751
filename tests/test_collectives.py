"""Collective calls recorded as op records (``record --collectives``), under the frameworks' own
launchers: real torchrun and ``python -m paddle.distributed.launch`` subprocesses, real gloo.

``tests/distributed_models/torch_collectives.py`` all-reduces in place the partial sums each rank
computes from its own data, then all-gathers (autograd-aware) and all-reduces asynchronously; its
knobs plant a MAX for the SUM (a bug in the reduction itself) or a NaN on rank 1 before the
all-reduce. The interception itself (originals restored, also after an exception): the last tests.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from launch_env import MODELS, ROOT, TIMEOUT, env

from padiff_trace import Kind, open_trace, pipeline, recorder

pytestmark = pytest.mark.xdist_group("launchers")  # real launchers and gloo: one at a time under pytest -n

SPEC, PADDLE_SPEC = MODELS / "torch_collectives.py", MODELS / "paddle_collectives.py"

Key = tuple[int, str, str, str, int, str]  # step, kind, module, module type (op), call index, position


def _line(path: Path, marker: str) -> int:
    return next(i for i, text in enumerate(path.read_text().splitlines(), 1) if marker in text)


def record(spec: Path, out: Path, *flags: str, **extra: str) -> Path:
    proc = subprocess.run([sys.executable, "-m", "padiff_trace", "record", str(spec), "--out", str(out), "--steps", "2",
                           "--nproc", "2", *flags], capture_output=True, text=True, cwd=ROOT, env=env(**extra), timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def records(path: Path) -> dict[Key, Any]:
    """Every record of a rank trace by identity: its data (or its Python value), and its stack's last line."""
    with open_trace(path) as tr:
        assert tr.complete, path
        return {(r.step, r.kind.label, r.module, r.module_type, r.call_index, r.position):
                (r.read() if r.has_data else None, r.stack[-1].line if r.stack else None) for r in tr.records()}


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record(SPEC, tmp_path_factory.mktemp("clean") / "t", "--collectives")


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record(SPEC, tmp_path_factory.mktemp("bare") / "t")


@pytest.mark.slow
def test_collective_records_hold_the_inputs_before_and_the_outputs_after(clean: Path, bare: Path) -> None:
    ranks = [records(clean / f"rank-0000{k}") for k in (0, 1)]
    line = _line(SPEC, "# COLLECTIVE: in place")

    def op(k: int, step: int, module: str, name: str, pos: str) -> Any:
        return ranks[k][(step, "op_output" if pos.startswith("out") else "op_input", module, name, 0, pos)]

    for step in (0, 1):
        for k in (0, 1):
            (x, at_x), (y, at_y) = op(k, step, "reduce", "all_reduce", "in"), op(k, step, "reduce", "all_reduce", "out")
            assert not np.array_equal(x, y) and at_x == at_y == line  # copied before the in-place call
            assert np.array_equal(y, op(0, step, "reduce", "all_reduce", "in")[0] + op(1, step, "reduce", "all_reduce", "in")[0])
            assert op(k, step, "reduce", "all_reduce", "reduce_op=SUM")[0] == np.True_
            assert op(k, step, "reduce", "all_reduce", "group_size")[0] == 2
            # the module's output after the in-place call is what the call wrote, with or without --collectives
            for trace in (ranks[k], records(bare / f"rank-0000{k}")):
                assert np.array_equal(trace[(step, "module_output", "reduce", "Reduce", 0, "out")][0], y)
            g = op(k, step, "mix", "all_gather", "in")[0]
            assert np.array_equal(op(k, step, "mix", "all_gather", "out[0]")[0], g)
            assert np.array_equal(op(k, step, "mix", "all_gather", "out[1]")[0], g)
            assert op(k, step, "mix", "all_reduce", "in")[1] == _line(SPEC, "# COLLECTIVE-ASYNC")
            assert np.array_equal(op(k, step, "mix", "all_reduce", "out")[0],  # waited for
                                  op(0, step, "mix", "all_reduce", "in")[0] + op(1, step, "mix", "all_reduce", "in")[0])


@pytest.mark.slow
def test_recording_collectives_changes_no_number(clean: Path, bare: Path) -> None:
    for k in (0, 1):
        with_, without = records(clean / f"rank-0000{k}"), records(bare / f"rank-0000{k}")
        assert not any(key[1].startswith("op_") for key in without)
        assert set(without) <= set(with_) and len(with_) > len(without)
        for key, (data, _) in without.items():  # outputs, loss, gradients, weights after each update
            other = with_[key][0]
            assert (data is None and other is None) or (data.dtype == other.dtype and data.tobytes() == other.tobytes()), key


@pytest.mark.slow
def test_a_bug_in_the_reduction_is_found_at_the_collective(clean: Path, tmp_path: Path) -> None:
    buggy = record(SPEC, tmp_path / "max", "--collectives", PADIFF_TEST_REDUCE_OP="max")
    cmp = pipeline.compare_ranks(clean, buggy)
    line = _line(SPEC, "# COLLECTIVE: in place")
    for r in cmp.ranks:
        assert r.verdict == "DIVERGED" and r.first is not None
        d = r.first
        assert (d.step, d.role, d.a.module_type, d.b.module_type) == (0, "op_output", "all_reduce", "all_reduce")
        assert d.a.stack[-1].line == d.b.stack[-1].line == line
        assert d.entered == "all_reduce inside reduce (a collective, group_size=2 on both sides): A reduce_op=SUM; B reduce_op=MAX"
    text = cmp.summary_text()
    assert "entered at all_reduce inside reduce" in text and "dist.all_reduce(y, op=op)" in text
    assert cmp.as_dict()["ranks"][0]["first_divergence"]["entered"] == cmp.ranks[0].first.entered  # type: ignore[union-attr]


@pytest.mark.slow
def test_first_nonfinite_names_the_rank_and_the_collective_that_spread_it(clean: Path, tmp_path: Path) -> None:
    poisoned = record(SPEC, tmp_path / "nan", "--collectives", PADIFF_TEST_NAN_RANK="1")
    found = pipeline.first_nonfinite(pipeline.open_ranks(poisoned))
    assert [(n.rank, n.name, n.kind) for n in found] == [(1, "poison#0:out", "module_output"), (0, "reduce#0:out", "op_output")]
    assert found[0].via is None
    via = found[1].via
    assert via is not None and (via.op, via.module, via.step, found[1].from_ranks) == ("all_reduce", "reduce", 0, (1,))
    cmp = pipeline.compare_ranks(poisoned, clean)
    text = cmp.summary_text()
    assert (f"first NaN/Inf in A: rank 1, step 0, poison#0:out (module_output, Poison; 1 values, record {found[0].seq}); "
            f"later: rank 0 (step 0, reduce#0:out, spread through all_reduce in reduce (record {via.seq}) from rank 1)") in text
    assert cmp.as_dict()["first_nonfinite"]["a"][1]["via"]["from_ranks"] == [1]


@pytest.mark.slow
def test_paddle_all_reduce_is_recorded(tmp_path: Path) -> None:
    out = record(PADDLE_SPEC, tmp_path / "p", "--collectives")
    ranks = [records(out / f"rank-0000{k}") for k in (0, 1)]
    for step in (0, 1):
        for k in (0, 1):
            x, y = (ranks[k][(step, kind, "reduce", "all_reduce", 0, pos)][0] for kind, pos in (("op_input", "in"), ("op_output", "out")))
            assert not np.array_equal(x, y)
            assert np.array_equal(y, ranks[0][(step, "op_input", "reduce", "all_reduce", 0, "in")][0]
                                  + ranks[1][(step, "op_input", "reduce", "all_reduce", 0, "in")][0])
            assert np.array_equal(ranks[k][(step, "module_output", "reduce", "Reduce", 0, "out")][0], y)
            assert ranks[k][(step, "op_input", "reduce", "all_reduce", 0, "reduce_op=SUM")][0] == np.True_


# ---------------------------------------------------------------- the interception, in this process
def _originals(framework: str) -> dict[tuple[str, str], Any]:
    fam = recorder.COLLECTIVES[framework]
    return {(c.owner, c.name): vars(sys.modules[c.owner])[c.name] for c in fam.calls if c.owner in sys.modules}


@pytest.mark.parametrize("framework", ["torch", "paddle"])
def test_collectives_are_restored_exactly_also_after_an_exception(framework: str, tmp_path: Path) -> None:
    """Every function of the table is replaced while recording and the very original is back after
    it, also when the model raised; without a process group nothing is recorded."""
    if framework == "torch":
        import torch

        model: Any = torch.nn.Linear(2, 2)
        x: Any = torch.ones(1, 2)
    else:
        import paddle
        import paddle.distributed

        model, x = paddle.nn.Linear(2, 2), paddle.ones([1, 2])
    before = _originals(framework)
    assert ("torch.distributed" if framework == "torch" else "paddle.distributed", "all_reduce") in before
    for n, fail in enumerate((False, True)):
        with pytest.raises(RuntimeError) if fail else contextlib.nullcontext(), recorder.record(model, tmp_path / f"t{n}", collectives=True):
            during = _originals(framework)
            for key, fn in during.items():
                assert fn is not before[key] and fn.__padiff_original__ is before[key], key
            model(x)
            if fail:
                raise RuntimeError("the model failed")
        assert all(_originals(framework)[key] is fn for key, fn in before.items())
        with open_trace(tmp_path / f"t{n}") as tr:
            assert not tr.select(kind=[Kind.OP_INPUT, Kind.OP_OUTPUT])

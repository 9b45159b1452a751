"""``padiff-trace record`` / ``run`` across real processes: replay of inputs and weights between
Paddle and PyTorch, user errors (exit 2, one line), model crashes (exit 1, readable trace).

Traces are compared here with numpy (independently of the analyzer).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from padiff_trace import Kind, open_trace

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "recorder_models"
EXAMPLES = ROOT / "examples"
PARENT = """
import sys
from padiff_trace.cli import main
rc = main(sys.argv[1:])
print("PARENT_FRAMEWORKS", sorted(m for m in ("torch", "paddle") if m in sys.modules))
sys.exit(rc)
"""


def cli(*argv: str, env: dict[str, str] | None = None, parent_check: bool = False) -> subprocess.CompletedProcess[str]:
    head = [sys.executable, "-c", PARENT] if parent_check else [sys.executable, "-m", "padiff_trace"]
    return subprocess.run([*head, *map(str, argv)], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)


def root_output(tr: Any, step: int = 0) -> np.ndarray:
    (r,) = [r for r in tr.select(kind=Kind.MODULE_OUTPUT, module="", step=step) if r.call_index == 0]
    return r.read()


def weights(tr: Any) -> dict[str, np.ndarray]:
    return {f"{r.module}.{r.position}": r.read() for r in tr.select(kind=[Kind.PARAM, Kind.BUFFER], step=0)}


def error_lines(stderr: str) -> list[str]:
    """stderr without paddle's import warning."""
    return [ln for ln in stderr.splitlines() if ln.strip() and "ccache" not in ln and "warnings.warn" not in ln]


@pytest.fixture(scope="module")
def simple_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """PaDiff README SimpleLayer (paddle) -> SimpleModule (torch), through the CLI entry point."""
    out = tmp_path_factory.mktemp("simple")
    proc = cli("run", EXAMPLES / "simple_paddle.py", EXAMPLES / "simple_torch.py", "--out", out, parent_check=True)
    return out, proc


def test_run_simple_layer_paddle_to_torch(simple_run: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    out, proc = simple_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    # the parent launches both recorders but imports neither framework
    assert "PARENT_FRAMEWORKS []" in proc.stdout
    with open_trace(out / "simple_paddle.trace") as a, open_trace(out / "simple_torch.trace") as b:
        assert a.complete and b.complete
        assert (a.meta["framework"], b.meta["framework"]) == ("paddle", "torch")
        assert b.meta["replayed_inputs"] and b.meta["replayed_weights"]
        np.testing.assert_array_equal(a.select(kind=Kind.MODEL_INPUT)[0].read(), b.select(kind=Kind.MODEL_INPUT)[0].read())
        wa, wb = weights(a), weights(b)
        for name in ("linear1.weight", "linear2.weight"):  # paddle [in, out] -> torch [out, in], exactly
            np.testing.assert_array_equal(wa[name].T, wb[name])
        np.testing.assert_array_equal(wa["linear1.bias"], wb["linear1.bias"])
        ya, yb = root_output(a), root_output(b)
        assert ya.shape == yb.shape == (100, 10)
        # 100-term fp32 dot products of values in [0, 1), outputs ~|1|: a few ulps
        assert np.abs(ya - yb).max() <= 1e-5


def test_weight_shape_mismatch_is_one_line_exit_2(simple_run: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path) -> None:
    src = simple_run[0] / "simple_paddle.trace"
    proc = cli("record", MODELS / "mismatch_torch.py", "--out", tmp_path / "t", "--weights-from", src, "--inputs-from", src)
    assert proc.returncode == 2
    lines = error_lines(proc.stderr)
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    line = lines[0]
    assert line.startswith("padiff-trace: error:") and "cannot match" in line
    # both sides listed with their shapes: paddle linear1 [100, 100], torch linear1 [50, 100]
    assert "trace: " in line and "model: " in line
    assert "linear1.weight [100, 100]" in line and "linear1.weight [50, 100]" in line


def test_spec_without_model_is_one_line_exit_2(tmp_path: Path) -> None:
    proc = cli("record", MODELS / "no_model_spec.py", "--out", tmp_path / "t")
    assert proc.returncode == 2
    lines = error_lines(proc.stderr)
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert "no_model_spec.py" in lines[0] and "model()" in lines[0]
    assert not (tmp_path / "t").exists()
    proc = cli("record", MODELS / "does_not_exist.py", "--out", tmp_path / "t")
    assert proc.returncode == 2 and len(error_lines(proc.stderr)) == 1


def test_model_crash_leaves_incomplete_trace_exit_2(tmp_path: Path) -> None:
    proc = cli("record", MODELS / "crash_torch.py", "--out", tmp_path / "t")
    assert proc.returncode == 2  # 1 means a divergence was found, nothing else
    assert "Traceback" in proc.stderr and "ValueError: user model bug at layer 2" in proc.stderr
    assert "crash_torch.py" in proc.stderr  # the user's own frame is in the traceback
    assert "marked incomplete" in proc.stderr
    with open_trace(tmp_path / "t") as tr:
        assert not tr.complete
        (lin1,) = tr.select(kind=Kind.MODULE_OUTPUT, module="lin1")
        assert lin1.shape == (3, 4)
        assert not tr.select(kind=Kind.MODULE_OUTPUT, module="lin2")
        assert tr.select(kind=Kind.MODEL_INPUT) and tr.select(kind=Kind.PARAM)
    assert "the model raised ValueError" in proc.stderr
    info = cli("info", tmp_path / "t")  # the reason the recorder wrote is shown, not "killed"
    assert "recorder stopped: ValueError: user model bug at layer 2" in info.stdout, info.stdout
    assert "killed" not in info.stdout


def test_a_raising_spec_function_is_named(tmp_path: Path) -> None:
    """An error in the spec's inputs() or loss() is not called the model's."""
    bad = "raise KeyError('no such column')"
    for fn, body_in, body_loss in (("inputs", bad, "return out.sum()"), ("loss", "return torch.ones(2, 4)", bad)):
        spec = tmp_path / f"bad_{fn}.py"
        spec.write_text(f"""import torch
def model():
    return torch.nn.Linear(4, 4)
def inputs():
    {body_in}
def loss(out):
    {body_loss}
""")
        proc = cli("record", spec, "--out", tmp_path / f"t_{fn}")
        assert proc.returncode == 2, proc.stderr
        assert f"the spec's {fn}() raised KeyError: 'no such column'" in proc.stderr, proc.stderr
        assert "the model raised" not in proc.stderr


def test_run_encoder_paddle_to_torch(tmp_path: Path) -> None:
    proc = cli("run", MODELS / "encoder_paddle.py", MODELS / "encoder_torch.py", "--out", tmp_path)
    assert proc.returncode in (0, 1) and "failed (exit" not in proc.stderr, proc.stderr[-3000:]  # 1 = the analyzer's verdict, not a failure to record
    with open_trace(tmp_path / "encoder_paddle.trace") as a, open_trace(tmp_path / "encoder_torch.trace") as b:
        assert a.complete and b.complete
        np.testing.assert_array_equal(a.select(kind=Kind.MODEL_INPUT)[0].read(), b.select(kind=Kind.MODEL_INPUT)[0].read())
        # every torch linear (incl. MHA out_proj) and the packed in_proj got paddle's weights
        wa, wb = weights(a), weights(b)
        for i in (0, 1):
            p = f"layers.{i}"
            np.testing.assert_array_equal(wa[f"{p}.linear1.weight"].T, wb[f"{p}.linear1.weight"])
            np.testing.assert_array_equal(wa[f"{p}.self_attn.out_proj.weight"].T, wb[f"{p}.self_attn.out_proj.weight"])
            qkv = np.concatenate([wa[f"{p}.self_attn.{n}_proj.weight"].T for n in "qkv"])
            np.testing.assert_array_equal(qkv, wb[f"{p}.self_attn.in_proj_weight"])
        ya, yb = root_output(a), root_output(b)
        # two post-norm layers, LayerNorm outputs ~1: the notes measured 1.1e-6 for 2+2 layers at d=512
        assert ya.shape == (2, 4, 8) and np.abs(ya - yb).max() <= 1e-5
        for layer in ("layers.0", "layers.1"):
            la = a.select(kind=Kind.MODULE_OUTPUT, module=layer)[0].read()
            lb = b.select(kind=Kind.MODULE_OUTPUT, module=layer)[0].read()
            assert np.abs(la - lb).max() <= 1e-5
        ga = {f"{r.module}.{r.position}": r.read() for r in a.select(kind=Kind.PARAM_GRAD)}
        gb = {f"{r.module}.{r.position}": r.read() for r in b.select(kind=Kind.PARAM_GRAD)}
        # loss = sum(out * w) over 64 elements: gradients are O(1); fp32 backward through 2 layers
        np.testing.assert_allclose(ga["layers.1.linear2.weight"].T, gb["layers.1.linear2.weight"], atol=1e-5, rtol=1e-4)


def test_run_conv_bn_paddle_to_torch(tmp_path: Path) -> None:
    proc = cli("run", MODELS / "convbn_paddle.py", MODELS / "convbn_torch.py", "--out", tmp_path)
    assert proc.returncode in (0, 1) and "failed (exit" not in proc.stderr, proc.stderr[-3000:]
    with open_trace(tmp_path / "convbn_paddle.trace") as a, open_trace(tmp_path / "convbn_torch.trace") as b:
        wa, wb = weights(a), weights(b)
        np.testing.assert_array_equal(wa["conv.weight"], wb["conv.weight"])  # same layout
        np.testing.assert_array_equal(wa["bn._mean"], wb["bn.running_mean"])
        np.testing.assert_array_equal(wa["bn._variance"], wb["bn.running_var"])
        np.testing.assert_array_equal(wa["head.weight"].T, wb["head.weight"])
        bn_a = a.select(kind=Kind.MODULE_OUTPUT, module="bn")[0].read()
        bn_b = b.select(kind=Kind.MODULE_OUTPUT, module="bn")[0].read()
        # 27-term convolutions then batch normalisation (outputs ~N(0,1)); eps both 1e-5
        assert np.abs(bn_a - bn_b).max() <= 1e-5
        # the head sums 144 such values: allow a few ulps of its ~|1| outputs more
        assert np.abs(root_output(a) - root_output(b)).max() <= 2e-5


def test_run_torch_to_paddle_keeps_children_env(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    env["PADIFF_TEST_ENV_DUMP"] = str(tmp_path / "env")
    env["PADIFF_TEST_MARKER"] = "marker-42"
    out = tmp_path / "run"
    proc = cli("run", MODELS / "convbn_torch.py", MODELS / "convbn_paddle.py", "--out", out, env=env, parent_check=True)
    assert proc.returncode in (0, 1) and "failed (exit" not in proc.stderr, proc.stderr[-3000:]
    assert "PARENT_FRAMEWORKS []" in proc.stdout
    # paddle sets OMP_NUM_THREADS=1 on import; neither child may inherit that from the parent
    for fw in ("torch", "paddle"):
        seen = json.loads((tmp_path / f"env.{fw}.json").read_text())
        assert seen == {"OMP_NUM_THREADS": None, "PADIFF_TEST_MARKER": "marker-42"}, fw
    with open_trace(out / "convbn_torch.trace") as a, open_trace(out / "convbn_paddle.trace") as b:
        assert b.meta["framework"] == "paddle" and b.meta["replayed_weights"]
        wa, wb = weights(a), weights(b)
        np.testing.assert_array_equal(wa["head.weight"].T, wb["head.weight"])
        np.testing.assert_array_equal(wa["bn.running_var"], wb["bn._variance"])
        np.testing.assert_array_equal(a.select(kind=Kind.MODEL_INPUT)[0].read(), b.select(kind=Kind.MODEL_INPUT)[0].read())
        assert np.abs(root_output(a) - root_output(b)).max() <= 2e-5


def test_run_concurrent_replays_while_a_records(tmp_path: Path) -> None:
    """--concurrent: B starts with A and replays A's weights and inputs once A has flushed them."""
    proc = cli("run", EXAMPLES / "simple_paddle.py", EXAMPLES / "simple_torch.py", "--out", tmp_path, "--concurrent")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "(concurrently)" in proc.stdout and "exporting" not in proc.stdout
    assert not list(tmp_path.glob("*.export.trace"))  # no separate export pass any more
    with open_trace(tmp_path / "simple_paddle.trace") as a, open_trace(tmp_path / "simple_torch.trace") as b:
        assert a.complete and b.complete
        assert b.meta["replayed_inputs"] and b.meta["replayed_weights"]
        # A flushed its step-0 weights and inputs to a shard of their own before running on
        assert len(a.shard_paths) >= 2
        np.testing.assert_array_equal(a.select(kind=Kind.MODEL_INPUT)[0].read(), b.select(kind=Kind.MODEL_INPUT)[0].read())
        wa, wb = weights(a), weights(b)
        np.testing.assert_array_equal(wa["linear1.weight"].T, wb["linear1.weight"])
        assert np.abs(root_output(a) - root_output(b)).max() <= 1e-5
    # a second --concurrent run over the same directory never replays the previous A
    again = cli("run", EXAMPLES / "simple_paddle.py", EXAMPLES / "simple_torch.py", "--out", tmp_path, "--concurrent")
    assert again.returncode == 2 and "already exists" in again.stderr


def test_run_concurrent_stops_b_when_a_fails(tmp_path: Path) -> None:
    proc = cli("run", MODELS / "no_model_spec.py", EXAMPLES / "simple_torch.py", "--out", tmp_path, "--concurrent")
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "recording" in proc.stderr and "failed" in proc.stderr
    assert not list(tmp_path.glob("simple_torch.trace/shard-*.h5"))  # B never got to record


def test_wait_for_replay_source_until_inputs_are_flushed(tmp_path: Path) -> None:
    """B may poll before A has even created its trace directory, then before A's first flush."""
    import threading
    import time

    from padiff_trace.recorder._spec import wait_for_replay_source

    from padiff_trace import Phase, RecordHeader, TraceWriter, UserError

    src = tmp_path / "late" / "a.trace"

    def writer() -> None:
        time.sleep(0.4)
        w = TraceWriter(src)
        w.append(RecordHeader(0, Phase.OTHER, Kind.PARAM, "lin", position="weight"), np.ones(3, np.float32))
        time.sleep(0.3)  # weights alone are not enough: B waits for the model inputs
        w.append(RecordHeader(0, Phase.FORWARD, Kind.MODEL_INPUT, ""), np.ones(2, np.float32))
        w.flush()
        time.sleep(1.0)
        w.close()

    t = threading.Thread(target=writer)
    start = time.monotonic()
    t.start()
    wait_for_replay_source(src, 30)
    waited = time.monotonic() - start
    with open_trace(src) as tr:
        assert tr.select(kind=Kind.MODEL_INPUT) and not tr.complete  # found by the flush, not the close
    t.join()
    assert 0.6 <= waited < 1.6
    with pytest.raises(UserError, match="no model inputs"):
        wait_for_replay_source(tmp_path / "never.trace", 0.2)

"""False alarms from the issue tracker, on real paddle and torch models recorded through the
CLI in separate processes (models in tests/false_alarm_models/).

1. ``--referee``: float64 runs that differ by less than fp32 rounding (a float32 constant in
   one model's loss) are rounding, not a model difference.
2. ``--ops``: operands pair by meaning (signatures, producers), not by position, so an
   attention whose shapes coincide (head_dim == seq == heads) passes.
3. ``run --referee/--single-step`` honour ``--no-replay``; a paddle->torch mapping is not
   applied to a trace and its own float64 referee.
4. tanh-approximate GELU in one block of a GPT-style MLP is flagged by the default verdict
   and classed a model difference by the referee; the clean pair is aligned.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from padiff_trace.analyzer.judging._noise import NOISE_FACTOR
from padiff_trace.analyzer.judging._referee import F64_REL_MARGIN, RATIO

from padiff_trace import Kind, open_trace

MODELS = Path(__file__).parent / "false_alarm_models"
MLP_A, MLP_B = MODELS / "mlp_paddle.py", MODELS / "mlp_torch.py"
ATTN_A, ATTN_B = MODELS / "attn_paddle.py", MODELS / "attn_torch.py"

pytestmark = pytest.mark.slow


def _run(out: Path, spec_a: Path, spec_b: Path, *flags: str, env: dict[str, str] | None = None,
         ok: tuple[int, ...] = (0, 1)) -> tuple[int, dict[str, Any], str]:
    """``padiff-trace run``; (exit code, report.json, stdout)."""
    cmd = [sys.executable, "-m", "padiff_trace", "run", str(spec_a), str(spec_b), "--out", str(out), *flags]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})})
    assert proc.returncode in ok, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.returncode, json.loads((out / "report" / "report.json").read_text()), proc.stdout


def _pairs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc["pairs"] + doc["weights"] + doc["param_grads"]


def _first(doc: dict[str, Any]) -> dict[str, Any]:
    index = doc["first_divergence"]["index"]
    return next(p for p in _pairs(doc) if p["index"] == index)


# ------------------------------------------------------------------ 1 + 4: the MLP pair
@pytest.fixture(scope="module")
def clean_referee(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], str]:
    return _run(tmp_path_factory.mktemp("clean") / "run", MLP_A, MLP_B, "--referee")


def test_float64_disagreement_below_the_fp32_floor_is_rounding(clean_referee: tuple[int, dict[str, Any], str]) -> None:
    rc, doc, text = clean_referee
    assert rc == 0, text
    assert all(p["class"] == "rounding" for p in _pairs(doc) if p["class"] is not None), text
    (loss,) = [p for p in doc["pairs"] if p["role"] == "loss"]
    ref, diff_ab = loss["referee"], loss["noise"]["diff_rms"]
    scale = abs(loss["metrics"]["mean_abs_b"])
    # the float64 runs do differ (paddle adds float32(0.53), torch 0.53) - beyond the float64
    # margin, and A and B differ by it far more than either differs from its own float64 run:
    # the old rule called this a model difference ...
    assert ref["err_64"] > NOISE_FACTOR * F64_REL_MARGIN * scale
    assert diff_ab > RATIO * max(ref["err_a"], ref["err_b"]) and ref["err_64"] * RATIO >= diff_ab
    # ... but it is 100x below the fp32 noise floor of the loss: rounding at fp32
    assert ref["err_64"] < 1e-2 * math.hypot(ref["floor_a"], ref["floor_b"])
    assert loss["class"] == "rounding" and loss["passed"]


@pytest.fixture(scope="module")
def gelu_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, dict[str, Any], str]]:
    base = tmp_path_factory.mktemp("gelu")
    env = {"FA_TANH_GELU": "1"}
    return {
        "default": _run(base / "default", MLP_A, MLP_B, env=env),
        "referee": _run(base / "referee", MLP_A, MLP_B, "--referee", env=env),
    }


def test_tanh_gelu_is_flagged_by_the_default_verdict(gelu_runs: dict[str, tuple[int, dict[str, Any], str]]) -> None:
    rc, doc, text = gelu_runs["default"]
    assert rc == 1, text
    first = _first(doc)
    assert (first["a"]["module"], first["b"]["module"]) == ("blocks.1.act", "blocks.1.act"), text
    assert first["role"] == "output" and first["a"]["module_type"] == "GELU"
    # ~2e-4 relative at the GELU; dozens of times beyond the noise floor (4 x expected rms)
    assert 5e-5 < first["metrics"]["rel_l2"] < 1e-3
    assert first["noise"]["ratio"] > 10 * NOISE_FACTOR
    # everything before the bug is rounding, within the floor
    before = [p for p in doc["pairs"] if p["index"] < first["index"] and p["role"] in ("input", "output")]
    assert before and all(p["passed"] for p in before)
    out = next(p for p in doc["pairs"] if p["role"] == "output" and p["a"]["module"] == "")
    assert not out["passed"] and out["metrics"]["rel_l2"] > 1e-5


def test_tanh_gelu_is_a_model_difference_for_the_referee(gelu_runs: dict[str, tuple[int, dict[str, Any], str]]) -> None:
    rc, doc, text = gelu_runs["referee"]
    assert rc == 1, text
    first = _first(doc)
    assert first["a"]["module"] == first["b"]["module"] == "blocks.1.act", text
    assert first["class"] == "model difference", text
    assert all(p["class"] == "rounding" for p in doc["pairs"] if p["index"] < first["index"] and p["class"])


# ------------------------------------------------------------------ 3: --no-replay, --mapping
def _weight(trace: Path, module: str) -> np.ndarray:
    (r,) = [r for r in open_trace(trace).select(kind=Kind.PARAM, module=module, step=0) if r.position == "weight"]
    return r.read()


def test_no_replay_reaches_the_referee_and_single_step_recordings(tmp_path: Path) -> None:
    out = tmp_path / "run"
    rc, _, text = _run(out, MLP_A, MLP_B, "--referee", "--single-step", "--no-replay")
    assert rc == 1, text  # torch's own random weights: a different model
    w_a = _weight(out / "mlp_paddle.trace", "blocks.0.fc1")  # paddle [in, out]
    for name in ("mlp_torch", "mlp_torch-float64", "mlp_torch-single-step"):
        trace = out / f"{name}.trace"
        assert open_trace(trace).meta["replayed_weights"] is False, name
        assert open_trace(trace).meta["replayed_inputs"] is False, name
        w_b = _weight(trace, "blocks.0.fc1")  # torch [out, in]
        assert w_b.shape == w_a.T.shape and not np.allclose(w_b, w_a.T, atol=1e-3), name
    assert open_trace(out / "mlp_paddle-float64.trace").meta["replayed_weights"] is False


def test_referee_with_a_cross_framework_mapping(tmp_path: Path) -> None:
    """The mapping names paddle and torch paths; the paddle trace and its float64 run pair by
    their identical paths (applying the mapping there raised MappingError)."""
    mapping = MODELS / "mapping_renamed.json"
    rc, doc, text = _run(tmp_path / "run", MLP_A, MODELS / "mlp_torch_renamed.py", "--referee", "--mapping", str(mapping))
    assert rc == 0, text
    pairs = {(p["a"]["module"], p["b"]["module"]) for p in doc["pairs"] if p["role"] == "output"}
    assert ("blocks.1.act", "layers.1.gelu") in pairs
    assert all(p["class"] == "rounding" for p in _pairs(doc) if p["class"] is not None)


# ------------------------------------------------------------------ 2: operands by meaning
def _op_pairs(doc: dict[str, Any], role: str, op: str) -> list[dict[str, Any]]:
    return [p for p in doc["pairs"] if p["role"] == role and op in (p["a"]["module_type"], p["b"]["module_type"])]


@pytest.mark.parametrize("variant", ["fold", "fold_k", "sdpa", "mixed"])
def test_clean_attention_with_coinciding_shapes_passes_at_op_level(tmp_path: Path, variant: str) -> None:
    rc, doc, text = _run(tmp_path / "run", ATTN_A, ATTN_B, "--ops", env={"FA_ATTN": variant})
    assert rc == 0, text
    ops = [p for p in doc["pairs"] if p["role"].startswith("op_")]
    assert ops and all(p["passed"] for p in ops)
    if variant == "fold":
        # paddle scales k, torch q: the two divisions are different ops and do not pair,
        # and the matmul's operands (q vs q/sqrt(d), k/sqrt(d) vs k^T) are not compared
        assert not _op_pairs(doc, "op_output", "truediv")
        assert len(_op_pairs(doc, "op_output", "matmul")) == 2
        first_mm = min(_op_pairs(doc, "op_output", "matmul"), key=lambda p: p["a"]["seq"])
        assert not [p for p in _op_pairs(doc, "op_input", "matmul") if p["a"]["seq"] < first_mm["a"]["seq"]]
    if variant == "fold_k":
        # both scale k: paddle's k (transpose_y=True) is compared with torch's k^T, transposed
        kt = [p for p in _op_pairs(doc, "op_input", "matmul") if p["layout"]]
        assert len(kt) == 1 and kt[0]["a"]["position"] == kt[0]["b"]["position"] == "args[1]"
        assert kt[0]["layout"] == [0, 1, 3, 2]
    if variant == "sdpa":
        # paddle's [B, S, H, D] against torch's [B, H, S, D], equal shapes here
        sdpa = _op_pairs(doc, "op_input", "scaled_dot_product_attention") + _op_pairs(
            doc, "op_output", "scaled_dot_product_attention")
        assert len(sdpa) == 4 and all(p["layout"] for p in sdpa)


def test_attention_bug_still_found_at_its_op(tmp_path: Path) -> None:
    """torch forgets to transpose k (square, so it runs): the matmul's output diverges first."""
    env = {"FA_ATTN": "fold_k", "FA_ATTN_BUG": "no_transpose"}
    rc, doc, text = _run(tmp_path / "run", ATTN_A, ATTN_B, "--ops", env=env)
    assert rc == 1, text
    first = _first(doc)
    assert first["role"] == "op_output" and first["a"]["module_type"] == "matmul", text
    for side, spec in (("a", ATTN_A), ("b", ATTN_B)):
        line = first[side]["stack"][-1][1]
        assert "OP-DOTS" in spec.read_text().splitlines()[line - 1], (side, first[side]["stack"])


# ------------------------------------------------------------------ 5: gradients across ReLU kinks
RELU_A, RELU_B = MODELS / "relu_paddle.py", MODELS / "relu_torch.py"


def test_gradients_rounded_across_a_relu_kink_are_rounding(tmp_path: Path) -> None:
    """Forward values agree to ~1e-5, but where the two runs round a ReLU input to opposite
    sides of 0 the gradient is all or nothing: a gradient differs by ~1e-2 (far past the
    1e-3 that carried rounding may reach without a kink). The flip is measured at the kink
    from the recorded values, and the clean twin is aligned."""
    rc, doc, text = _run(tmp_path / "run", RELU_A, RELU_B)
    assert rc == 0, text
    forward = [p["metrics"]["rel_l2"] for p in doc["pairs"] if p["role"] == "output" and p["metrics"]]
    assert max(forward) < 1e-4
    grads = [p for p in _pairs(doc) if p["role"] in ("grad_output", "param_grad") and p["metrics"]]
    worst = max(grads, key=lambda p: p["metrics"]["rel_l2"])
    if worst["metrics"]["rel_l2"] <= 3e-3:
        # whether the two frameworks round a ReLU input to opposite sides of 0 depends on the
        # machine's kernels (session 41's machine rounds this model alike on both sides)
        pytest.skip(f"no gradient here crosses a kink (worst rel-L2 {worst['metrics']['rel_l2']:.2g}): the aligned run is all this machine shows")
    assert any("opposite sides of the kink" in (p.get("reason") or "") for p in grads), text


def test_a_wrong_relu_backward_is_still_found(tmp_path: Path) -> None:
    """Block 5's activation leaks 1% of the gradient where its input is negative, forward
    bit-identical: the first divergence is the gradient that activation passes back, in block 5,
    named at the activation (whose type differs on the two sides: a custom autograd function)."""
    rc, doc, text = _run(tmp_path / "run", RELU_A, RELU_B, env={"FA_RELU_GRAD": "5"})
    assert rc == 1, text
    first = _first(doc)
    assert first["role"] == "grad_output", text
    assert first["a"]["module"] == first["b"]["module"] == "blocks.5.bn1", text  # the gradient that differs ...
    assert all(p["passed"] for p in doc["pairs"] if p["role"] in ("input", "output"))
    # ... is named at the call whose backward made it: the activation that used bn1's output
    located = doc["first_divergence"]["located"]
    assert (located["a"]["module"], located["b"]["module"]) == ("blocks.5.relu", "blocks.5.act"), located
    assert located["a"]["why"] == located["b"]["why"] == "backward"
    assert "its backward made the difference" in text

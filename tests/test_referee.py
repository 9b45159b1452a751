"""Rounding or bug: the float64 referee, the noise floor and single-step replay, on real
paddle and torch built-in layers recorded in separate processes through the CLI.

Models live in tests/referee_models/ (bugs are planted through environment variables,
see encoder_paddle.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from padiff_trace import analyzer

pytest.importorskip("h5py")

MODELS = Path(__file__).parent / "referee_models"
U32 = 2.0**-24


def _cli(*argv: str, env: dict[str, str] | None = None, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    e = dict(os.environ)
    e.update(env or {})
    proc = subprocess.run([sys.executable, "-m", "padiff_trace", *argv], capture_output=True, text=True, env=e, timeout=600)
    assert proc.returncode in ok, f"{argv}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _record_four(out: Path, spec_a: str, spec_b: str, env: dict[str, str], referee_b: bool = True) -> dict[str, Path]:
    """A (fp32), B (fp32, A's inputs and weights), R = A's model in float64, RB = B's model in float64."""
    t = {k: out / f"{k}.trace" for k in ("a", "b", "r", "rb")}
    sa, sb = str(MODELS / spec_a), str(MODELS / spec_b)
    rep = ["--inputs-from", str(t["a"]), "--weights-from", str(t["a"])]
    _cli("record", sa, "--out", str(t["a"]), env=env)
    _cli("record", sb, "--out", str(t["b"]), *rep, env=env)
    _cli("record", sa, "--out", str(t["r"]), "--dtype", "float64", *rep, env=env)
    if referee_b:
        _cli("record", sb, "--out", str(t["rb"]), "--dtype", "float64", *rep, env=env)
    return t


def _compare_json(tmp: Path, a: Path, b: Path, *flags: str, name: str = "report") -> tuple[int, dict[str, Any], str]:
    proc = _cli("compare", str(a), str(b), "--report", str(tmp / name), *flags, ok=(0, 1))
    return proc.returncode, json.loads((tmp / name / "report.json").read_text()), proc.stdout


def _pairs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc["pairs"] + doc["weights"] + doc["param_grads"]


def _by_index(doc: dict[str, Any], index: int) -> dict[str, Any]:
    return next(p for p in _pairs(doc) if p["index"] == index)


# ------------------------------------------------------------------ (a) the seeds' matmul
@pytest.mark.parametrize("std", ["1", "0.02"])
def test_matmul_seed_case_is_rounding_and_within_fp32_of_float64(tmp_path: Path, std: str) -> None:
    t = _record_four(tmp_path, "matmul_paddle.py", "matmul_torch.py", {"REFEREE_STD": std}, referee_b=False)
    rc, doc, text = _compare_json(tmp_path, t["a"], t["b"], "--reference", str(t["r"]))
    assert rc == 0, text
    assert doc["referees"]["reference_model"] == "A"
    assert "classes: rounding" in text and "noise-aware: float64 referee" in text
    out = [p for p in doc["pairs"] if p["role"] == "output" and p["a"]["module"] == "proj"]
    assert len(out) == 1
    p = out[0]
    assert p["class"] == "rounding" and p["passed"]
    ref = p["referee"]
    # both frameworks are within fp32 error of the float64 result: relative RMS error of an
    # fp32 dot product of length K=768 is at most ~u*sqrt(K) (5.96e-8 * 27.7 = 1.7e-6)
    bound = U32 * (1 + 768**0.5)
    for side in ("rel_err_a", "rel_err_b"):
        assert 0 < ref[side] <= bound, (side, ref)
    assert ref["err_a"] <= ref["floor_a"] and ref["err_b"] <= ref["floor_b"]
    # the estimate alone (no referee) also calls it noise
    r = analyzer.compare(t["a"], t["b"], quiet=True)
    est = next(q for q in r.pairs if q.role == "output" and q.a.module == "proj")
    assert est.noise is not None and est.noise["within"] and est.cls is None
    # absolute size of the error scales with the data, as in the seeds: ~1e-5 at N(0,1), ~1e-9 at N(0,0.02)
    rec = next(q for q in analyzer.compare(t["a"], t["r"], quiet=True).pairs if q.role == "output" and q.a.module == "proj")
    assert rec.metrics is not None
    assert (1e-6 < rec.metrics.mean_abs < 1e-4) if std == "1" else (1e-11 < rec.metrics.mean_abs < 1e-8)


# ------------------------------------------------------------------ (b) planted model bug
@pytest.fixture(scope="module")
def eps_bug(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("eps")
    return _record_four(out, "encoder_paddle.py", "encoder_torch.py", {"REFEREE_BUG": "eps", "REFEREE_BUG_SIDE": "torch"})


@pytest.fixture(scope="module")
def residual_bug(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("residual")
    return _record_four(out, "encoder_paddle.py", "encoder_torch.py", {"REFEREE_BUG": "residual", "REFEREE_BUG_SIDE": "torch"})


def _layer(p: dict[str, Any]) -> int | None:
    parts = p["a"]["module"].split(".")
    return int(parts[1]) if len(parts) > 1 and parts[0] == "layers" else None


@pytest.mark.parametrize("bug,module,role", [("eps", "layers.5.norm1", "output"), ("residual", "layers.5.norm1", "input")])
def test_planted_bug_is_model_difference_and_drift_is_rounding(
    tmp_path: Path, request: pytest.FixtureRequest, bug: str, module: str, role: str
) -> None:
    t = request.getfixturevalue(f"{bug}_bug")
    rc, doc, text = _compare_json(tmp_path, t["a"], t["b"], "--reference", str(t["r"]), "--reference-b", str(t["rb"]))
    assert rc == 1, text
    first = _by_index(doc, doc["first_divergence"]["index"])
    assert first["a"]["module"] == module and first["b"]["module"] == module, text
    assert first["role"] == role and first["class"] == "model difference", text
    assert first["referee"]["err_64"] > 1e3 * max(first["referee"]["err_a"], first["referee"]["err_b"])
    assert "class: model difference" in text
    # the fp32 drift of the unbugged layers 0-4 is rounding, and passes with no tolerance given
    before = [p for p in doc["pairs"] if p["role"] in ("input", "output") and _layer(p) in range(5) and p["metrics"]]
    assert len(before) > 40
    assert all(p["class"] == "rounding" and p["passed"] for p in before)
    assert max(p["metrics"]["rel_l2"] for p in before) > 1e-7  # there is fp32 drift to judge
    # the loss is the mean of a LayerNorm output: every gradient is ~1e-10 of pure noise
    # (rel-L2 A vs B ~1): rounding relative to the gradient's scale, not a failure
    # (the LayerNorm weight gradients of the last layer are real, and differ with the bug)
    grads = [p for p in doc["pairs"] if p["role"] == "grad_output" and p["metrics"]]
    noisy = [p for p in grads if p["metrics"]["rel_l2"] > 0.5]
    assert len(noisy) > 50 and all(p["passed"] and p["class"] == "rounding" for p in noisy)
    # every failure is a model difference, none is rounding
    assert all(p["class"] == "model difference" for p in _pairs(doc) if not p["passed"])


def test_one_referee_says_which_side_deviates_and_tolerances_override(tmp_path: Path, eps_bug: dict[str, Path]) -> None:
    t = eps_bug
    rc, doc, text = _compare_json(tmp_path, t["a"], t["b"], "--reference", str(t["r"]))
    assert rc == 1
    first = _by_index(doc, doc["first_divergence"]["index"])
    assert first["a"]["module"] == "layers.5.norm1" and first["class"] == "B deviates", text
    assert "--reference-b tells them apart" in text
    # the referee of B's model only: A now deviates from it
    rc, doc, text = _compare_json(tmp_path, t["a"], t["b"], "--reference", str(t["rb"]), name="rb")
    first = _by_index(doc, doc["first_divergence"]["index"])
    assert doc["referees"]["reference_model"] == "B" and first["class"] == "A deviates", text
    # explicit tolerances override the noise-aware verdict (classes stay)
    rc, doc, text = _compare_json(tmp_path, t["a"], t["b"], "--reference", str(t["r"]), "--atol", "0", "--rtol", "1e-9", name="tol")
    first = _by_index(doc, doc["first_divergence"]["index"])
    assert rc == 1 and first["class"] == "rounding" and first["a"]["module"].startswith("layers.0"), text


def test_noise_floor_without_referee(eps_bug: dict[str, Path]) -> None:
    r = analyzer.compare(eps_bug["a"], eps_bug["b"], quiet=True)
    assert r.exit_code == 1
    d = r.first_divergence
    assert d is not None and d.pair.a.module == "layers.5.norm1", r.summary_text()
    fwd = [p for p in r.pairs if p.role in ("input", "output") and p.noise is not None]
    early = [p for p in fwd if p.a.module.startswith(("layers.0", "layers.1", "layers.2", "layers.3", "layers.4"))]
    assert early and all(p.noise["within"] and p.passed for p in early)
    assert not d.pair.noise["within"] and d.pair.noise["ratio"] > 1e3
    # the estimate grows with depth
    fl = analyzer.noise_floor(r.a)
    outs = {p.a.module: p.a for p in fwd if p.role == "output"}
    assert fl.relative(outs["layers.11"].seq) > 2 * fl.relative(outs["layers.0"].seq) > 0


def test_referee_must_be_float64(tmp_path: Path, eps_bug: dict[str, Path]) -> None:
    proc = _cli("compare", str(eps_bug["a"]), str(eps_bug["b"]), "--reference", str(eps_bug["b"]), ok=(2,))
    line = proc.stderr.strip().splitlines()[-1]
    assert "must be a float64 recording" in line and str(eps_bug["b"]) in line


# ------------------------------------------------------------------ (c) single-step replay
@pytest.mark.parametrize(
    "a_fw,bug,phase,module",
    [
        ("paddle", "eps", "forward", "layers.5.norm1"),
        ("torch", "eps", "forward", "layers.5.norm1"),
        ("paddle", "grad", "backward", "layers.5.linear2"),
        ("torch", "grad", "backward", "layers.5.linear2"),
    ],
)
def test_single_step_localizes_planted_bug(tmp_path: Path, a_fw: str, bug: str, phase: str, module: str) -> None:
    b_fw = "torch" if a_fw == "paddle" else "paddle"
    env = {"REFEREE_BUG": bug, "REFEREE_BUG_SIDE": b_fw, "REFEREE_LOSS": "weighted"}
    out = tmp_path / "run"
    _cli("run", str(MODELS / f"encoder_{a_fw}.py"), str(MODELS / f"encoder_{b_fw}.py"), "--out", str(out),
         "--single-step", env=env, ok=(1,))
    rows = json.loads((out / "report" / "single_step.json").read_text())["rows"]
    # ranked within the bug's phase: a forward LayerNorm-epsilon bug is also a backward bug
    # of that LayerNorm, whose gradient lands on the modules feeding it (equally large)
    top = next(r for r in rows if r["phase"] == phase)
    assert top is rows[0] or rows[0]["local_rel_l2"] < 1.01 * top["local_rel_l2"]
    assert top["module"] == module and top["phase"] == phase, rows[:3]
    # in the bug's phase nothing else has a local error beyond rounding (in backward, an eps
    # bug also shows where the LayerNorm's own backward sends its gradient)
    assert {r["module"] for r in rows if r["phase"] == phase and r["local_rel_l2"] > 1e-4} == {module}, rows[:5]
    # in the normal run the error spreads: several other modules fail there
    doc = json.loads((out / "report" / "report.json").read_text())
    role = "output" if phase == "forward" else "grad_output"
    failed = {p["a"]["module"] for p in doc["pairs"] if p["role"] == role and not p["passed"]}
    assert len(failed - {module}) >= 3, sorted(failed)
    accumulated = [r for r in rows if r["phase"] == phase and r["module"] != module and r["accumulated_rel_l2"] > 1e-5]
    assert len(accumulated) >= 3 and all(r["local_rel_l2"] < 1e-5 for r in accumulated)


def test_single_step_names_code_between_modules_first(tmp_path: Path) -> None:
    """The demo's planted bug is a function between two modules (GELU's tanh form inside
    ``layers.2``): single-step used to record the replayed inputs, so it never showed, and
    ranked by relative L2 alone the rounding of tiny gradients came first. The input a module
    gets from its parent's own code is now recorded as computed and ranks first, failing."""
    examples = Path(__file__).resolve().parents[1] / "examples"
    out = tmp_path / "run"
    _cli("run", str(examples / "transformer_paddle.py"), str(examples / "transformer_torch.py"), "--out", str(out),
         "--single-step", ok=(1,))
    rows = json.loads((out / "report" / "single_step.json").read_text())["rows"]
    assert (rows[0]["phase"], rows[0]["module"], rows[0]["local_failed"]) == ("input", "layers.2.dropout", True), rows[:3]
    assert not any(r["local_failed"] for r in rows if r["phase"] == "backward"), [r for r in rows if r["local_failed"]]


# ------------------------------------------------------------------ (d) a model that cannot run in float64
def test_a_model_fixing_float32_cannot_be_refereed_and_says_what_to_do(tmp_path: Path) -> None:
    """B's softmax fixes float32 in the model's code: its float64 recording fails. ``run --referee``
    exits 2 with one last line that names the model's line and says to run without ``--referee``,
    and writes no report; the same pair without the referee aligns."""
    a, b = str(MODELS / "fixed32_paddle.py"), str(MODELS / "fixed32_torch.py")
    proc = _cli("run", a, b, "--referee", "--out", str(tmp_path / "ref"), ok=(2,))
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("padiff-trace: error: float64 recording of") and "fixed32_torch.py" in line, proc.stderr[-2000:]
    assert "run without --referee" in line  # (the model's traceback above it is kept, to debug its code)
    assert not (tmp_path / "ref" / "report").exists()
    _cli("run", a, b, "--out", str(tmp_path / "plain"))
    assert json.loads((tmp_path / "plain" / "report" / "report.json").read_text())["verdict"] == "aligned"

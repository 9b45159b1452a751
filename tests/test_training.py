"""Training as users train: dropout on, optimizers, schedules, several steps.

``tests/training_models/`` holds one small MLP in both frameworks with an ``nn.Dropout``
module and a functional dropout, trained with the optimizer PADIFF_OPT names; PADIFF_BUG
plants one porter's bug on the paddle side. Everything runs through ``padiff-trace run`` as
a user types it: A (torch) records its dropout masks, B (paddle) replays them.
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

pytestmark = pytest.mark.slow

MODELS = Path(__file__).parent / "training_models"


def run(out: Path, *, opt: str = "adamw", bug: str = "", steps: int = 3, swap: bool = False,
        env: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
    specs = [MODELS / "train_torch.py", MODELS / "train_paddle.py"]
    if swap:
        specs.reverse()
    e = dict(os.environ, PADIFF_OPT=opt, PADIFF_BUG=bug, **(env or {}))
    proc = subprocess.run([sys.executable, "-m", "padiff_trace", "run", *specs, "--out", out, "--force",
                           "--steps", str(steps)], capture_output=True, text=True, env=e, timeout=600)
    report = out / "report" / "report.json"
    doc = json.loads(report.read_text()) if report.exists() else {}
    return proc.returncode, doc, proc.stdout + proc.stderr


def first_pair(doc: dict[str, Any]) -> dict[str, Any]:
    i = doc["first_divergence"]["index"]
    (p,) = [p for key in ("pairs", "weights", "param_grads") for p in doc[key] if p["index"] == i]
    return p


def codes(doc: dict[str, Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in doc.get("diagnosis", []):
        out.setdefault(f["code"], []).append(f["text"])
    return out


@pytest.mark.parametrize("swap", [False, True], ids=["torch-A", "paddle-A"])
def test_dropout_twin_aligned_over_three_steps(tmp_path: Path, swap: bool) -> None:
    rc, doc, out = run(tmp_path, swap=swap)
    assert rc == 0, out
    assert doc["verdict"] == "aligned"
    replayed = codes(doc)["random_replayed"][0]
    assert "6 random draw(s)" in replayed and "3 step(s)" in replayed, replayed


def test_dropout_p_difference_located_at_that_module(tmp_path: Path) -> None:
    rc, doc, out = run(tmp_path, bug="drop_p")
    assert rc == 1, out
    fd, p = doc["first_divergence"], first_pair(doc)
    assert p["step"] == 0 and p["a"]["module"] == "drop" and p["b"]["module"] == "drop", p
    assert fd["located"]["a"]["module"] == "drop" and fd["located"]["b"]["module"] == "drop"
    assert "update_differs" not in codes(doc)


def test_without_replay_the_independent_masks_are_named(tmp_path: Path) -> None:
    """Two recordings made apart (no --random-from) draw their own masks: the report says so."""
    env = dict(os.environ, PADIFF_OPT="sgd")
    for spec, name in (("train_torch.py", "a"), ("train_paddle.py", "b")):
        subprocess.run([sys.executable, "-m", "padiff_trace", "record", MODELS / spec, "--out", tmp_path / name],
                       check=True, capture_output=True, env=env, timeout=300)
    proc = subprocess.run([sys.executable, "-m", "padiff_trace", "compare", tmp_path / "a", tmp_path / "b",
                           "--report", tmp_path / "rep"], capture_output=True, text=True, timeout=300)
    doc = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert proc.returncode == 1 and "random_independent" in codes(doc), proc.stdout


# bug -> (optimizer, words the named difference must contain)
OPTIMIZER_BUGS = {
    "eps": ("adamw", ["epsilon", "1e-08", "1e-06"]),
    "decay_all": ("adamw", ["weight decay", "3 tensor(s) in A and 8 in B", "biases", "norm scales"]),
    "betas": ("adamw", ["beta2", "0.999", "0.99"]),
    "sched": ("steplr", ["learning rate at step 1", "0.01", "0.005"]),
    "momentum": ("momentum", ["momentum", "0.9", "0.8"]),
    "nesterov": ("nesterov", ["nesterov", "True", "False"]),
    "clip_value": ("clip", ["gradient clipping at step 0", "global_norm", "value"]),
    "lr": ("sgd", ["learning rate at step 0", "0.01", "0.02"]),
}


@pytest.mark.parametrize("bug", list(OPTIMIZER_BUGS))
def test_optimizer_difference_named_at_the_update(tmp_path: Path, bug: str) -> None:
    opt, words = OPTIMIZER_BUGS[bug]
    rc, doc, out = run(tmp_path, opt=opt, bug=bug, steps=4)
    assert rc == 1, out
    c = codes(doc)
    fd = first_pair(doc)
    assert fd["role"] == "param" and fd["step"] >= 1, fd
    assert c.get("update_differs"), c
    cause = " ".join(c.get("optimizer_cause", []))
    for w in words:
        assert w in cause, (w, cause)
    assert "the error is made in" not in json.dumps(doc["diagnosis"])
    for name in ("report.txt", "report.html"):
        text = (tmp_path / "report" / name).read_text()
        assert "optimizer update differs" in text and words[0] in text, name


@pytest.mark.parametrize("opt", ["adamw", "adam", "sgd", "momentum", "nesterov", "adamax", "adagrad", "rmsprop"])
def test_correct_optimizer_twins_over_five_steps(tmp_path: Path, opt: str) -> None:
    rc, doc, out = run(tmp_path, opt=opt, steps=5)
    c = codes(doc)
    if opt == "rmsprop":  # the frameworks define RMSProp differently: named, not blamed on the model
        assert "optimizer_convention" in c or "convention" in c, c
        assert "epsilon inside the square root" in json.dumps(doc["diagnosis"])
        return
    assert rc == 0, out
    assert doc["verdict"] == "aligned"
    assert not c.get("optimizer_setting") and not c.get("optimizer_step"), c


def test_replay_changes_only_the_replayed_randomness(tmp_path: Path) -> None:
    """A torch model replaying the masks of its own earlier recording (another seed) computes
    exactly that recording's numbers; in eval mode replay changes nothing."""
    env = dict(os.environ, PADIFF_OPT="sgd")
    spec = MODELS / "train_torch.py"

    def record(name: str, *flags: str) -> Path:
        subprocess.run([sys.executable, "-m", "padiff_trace", "record", spec, "--out", tmp_path / name, *flags],
                       check=True, capture_output=True, env=env, timeout=300)
        return tmp_path / name

    from padiff_trace import Kind, open_trace

    a = record("a", "--seed", "1")
    b = record("b", "--seed", "2", "--random-from", str(a))
    c = record("c", "--seed", "2")
    with open_trace(a) as ta, open_trace(b) as tb, open_trace(c) as tc:
        def out(t: Any) -> np.ndarray:
            (r,) = [r for r in t.select(kind=Kind.MODULE_OUTPUT, module="head", step=0)]
            return np.asarray(r.read())
        assert np.array_equal(out(ta), out(tb))  # replayed masks: A's numbers exactly
        assert not np.array_equal(out(ta), out(tc))  # its own masks: different numbers
        assert {r.position for r in tb.select(kind=Kind.RANDOM)} == {"replayed"}

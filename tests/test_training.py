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
from browser import HOW_TO_GET, chromium

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
    return proc.returncode, doc, proc.stderr + proc.stdout  # the verdict (stdout) last: an assertion shows its tail


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
    "lr/rmsprop": ("rmsprop", ["learning rate at step 0", "0.01", "0.02"]),  # a real bug beside a convention
    # the decay in paddle's scheduler, in torch's Adagrad (lr_decay): compared as the rates the updates used
    "inv_decay": ("adagrad_decay", ["learning rate at step 1", "0.00833333", "0.00909091"]),
    # L1 decay of the weights in paddle's optimizer, in torch's loss; the bug decays biases and the norm too
    "l1_all": ("l1loss", ["L1 decay", "0.005"]),
}


@pytest.mark.parametrize("bug", list(OPTIMIZER_BUGS))
def test_optimizer_difference_named_at_the_update(tmp_path: Path, bug: str) -> None:
    opt, words = OPTIMIZER_BUGS[bug]
    rc, doc, out = run(tmp_path, opt=opt, bug=bug.split("/", maxsplit=1)[0], steps=4)
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


@pytest.mark.parametrize("opt", ["adamw", "adam", "sgd", "momentum", "nesterov", "adamax", "adagrad", "rmsprop",
                                 "paramdecay",  # paddle's decay on the weights (ParamAttr), torch's in a group
                                 "adagrad_decay",  # paddle's inverse-time decay in a scheduler, torch's inside Adagrad
                                 "l1loss"])  # paddle's L1Decay inside the optimizer step, torch's penalty in the loss
def test_correct_optimizer_twins_over_five_steps(tmp_path: Path, opt: str) -> None:
    rc, doc, out = run(tmp_path, opt=opt, steps=5)
    c = codes(doc)
    assert rc == 0, out
    if opt == "rmsprop":  # the frameworks define RMSProp differently: checked on the numbers and named
        (text,) = c["convention"]
        assert "epsilon inside the square root" in text and "reproduces its recorded weights" in text, text
        assert "shown, not judged" in text
        assert "not judged" in (tmp_path / "report" / "report.txt").read_text()
    if opt == "l1loss":  # the gradients differ by the decay term, checked on the weights, and said
        (text,) = [c for c in c["convention"] if "l1 decay" in c]
        assert "on 3 parameter(s) in B's optimizer" in text and "c x sign(w)" in text, text
    if opt == "adagrad_decay":  # where the decay lives is said, as a convention the rates were checked on
        (text,) = c["optimizer_convention"]
        assert "lr_decay 0.1 in A vs 0 in B" in text and "agree at every recorded step (5)" in text, text
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
            (r,) = list(t.select(kind=Kind.MODULE_OUTPUT, module="head", step=0))
            return np.asarray(r.read())
        assert np.array_equal(out(ta), out(tb))  # replayed masks: A's numbers exactly
        assert not np.array_equal(out(ta), out(tc))  # its own masks: different numbers
        assert {r.position for r in tb.select(kind=Kind.RANDOM)} == {"replayed"}


def test_two_hundred_steps_per_step_view(tmp_path: Path) -> None:
    """A subtle optimizer difference (AdamW weight decay 0.0102 vs 0.01) over 200 steps: the
    per-step view names the first step off the noise floor in the terminal, report.json and
    the HTML plot (rendered by a real browser); the cause is the optimizer, not the model."""
    rc, doc, out = run(tmp_path, opt="adamw", bug="wd", steps=200)
    assert rc == 1, out
    steps = doc["steps"]
    assert len(steps) >= 200 and [s["step"] for s in steps[:3]] == [0, 1, 2]
    off = doc["first_step_off"]
    first = min(v for v in off.values() if v is not None)
    assert first >= 1 and all(s["weight_failed"] == 0 and s["param_grad_failed"] == 0 for s in steps if s["step"] < first)
    assert steps[first]["param_grad_failed"] or steps[first]["weight_failed"] or steps[first]["output_failed"]
    assert "first off the noise floor" in out and "<- first off" in out
    c = codes(doc)
    assert c.get("update_differs") and "weight decay 0.01 vs 0.0102" in " ".join(c["optimizer_cause"]), c
    # amplifiers rank calls within their step, with a call's own weights counted as inputs
    assert all(a["ratio"] < 100 for a in doc["amplifiers"]), doc["amplifiers"]
    ranked = [s["amplifier"] for s in steps if s["amplifier"]]  # each step's strongest
    assert ranked and all(a["ratio"] > 1 for a in ranked)
    assert all(a["ratio"] <= doc["amplifiers"][0]["ratio"] for a in ranked) and "step" in doc["amplifiers"][0]
    browser = chromium()
    if browser is None:
        pytest.skip(HOW_TO_GET)
    page = tmp_path / "report" / "report.html"
    dom = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=8000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=180,
    ).stdout
    assert dom.count('<svg class="plot steps"') == 2, dom[:500]
    assert 'data-series="loss A"' in dom and 'data-series="loss B"' in dom and 'data-series="weights"' in dom
    assert f"first step off the noise floor: {first}" in dom


def test_fused_randomness_is_named(tmp_path: Path) -> None:
    """torch's sdpa with dropout_p (a builtin: no signature, keywords only) is recorded as a
    random draw that cannot be replayed."""
    from padiff_trace import Kind, open_trace

    subprocess.run([sys.executable, "-m", "padiff_trace", "record", MODELS / "sdpa_torch.py", "--out", tmp_path / "a"],
                   check=True, capture_output=True, timeout=300)
    with open_trace(tmp_path / "a") as t:
        recs = t.select(kind=Kind.RANDOM)
        assert [(r.position, r.module_type) for r in recs] == [("fused", "scaled_dot_product_attention")]


def test_noise_gradient_through_adam_is_rounding(tmp_path: Path) -> None:
    """A packed q|k|v (torch) against separate projections (paddle) under AdamW: the key bias's
    gradient is zero in exact arithmetic, Adam scales each side's rounding noise to +-lr, and
    the weights differ by 1e-3 — rounding through the update, checked share by share."""
    e = dict(os.environ)
    proc = subprocess.run([sys.executable, "-m", "padiff_trace", "run", MODELS / "attn_torch.py", MODELS / "attn_paddle.py",
                           "--out", tmp_path, "--force", "--steps", "3"], capture_output=True, text=True, env=e, timeout=600)
    doc = json.loads((tmp_path / "report" / "report.json").read_text())
    assert proc.returncode == 0 and doc["verdict"] == "aligned", proc.stdout + proc.stderr
    noisy = [w for w in doc["weights"] if "rounding noise" in (w["reason"] or "")]
    assert noisy and all(w["a"]["position"] == "bias[8:16]" for w in noisy), noisy  # the key bias, A's share of qkv


@pytest.mark.parametrize("bug,kind", [("", None), ("order", "A's batch of step 1 is B's batch of step 2"),
                                      ("shuffle", "the same 4 samples in another order")],
                         ids=["same-order", "batch-order", "shuffled-batch"])
def test_data_order_is_said_first(tmp_path: Path, bug: str, kind: str | None) -> None:
    """inputs(step) feeds each side its own loader: a twin on the same data is ALIGNED; a port
    whose loader visits the batches in another order, or shuffles one batch, is told apart
    from a model bug before anything else is said."""
    rc, doc, out = run(tmp_path, opt="sgd", bug=bug, steps=4, env={"PADIFF_DATA": "1"})
    if kind is None:
        assert rc == 0 and doc["verdict"] == "aligned", out
        return
    assert rc == 1, out
    first = doc["diagnosis"][0]
    assert first["code"] == "data_differs" and kind in first["text"] and "first at step 1" in first["text"], first
    assert first_pair(doc)["role"] == "model_input" and first_pair(doc)["step"] == 1
    assert "model_inputs_differ" in codes(doc) and "the error is made in" not in json.dumps(doc["diagnosis"])
    assert "the data differs, not the model" in (tmp_path / "report" / "report.txt").read_text()


@pytest.mark.parametrize(("bug", "rate"), [("keep_prob", "0.9"), ("drop_unset", "0")])
def test_a_dropout_rate_set_wrong_is_named_by_the_rates_recorded(tmp_path: Path, bug: str, rate: str) -> None:
    """Paddle's tower calls ``F.dropout`` inline; torch's tower is a Sequential with a Dropout
    module. The masks are replayed, so only the rates differ: each dropout call records its
    rate, and the first pair of dropout calls whose rates differ is named on each side, the
    rates said (a keep probability passed as the drop rate; a rate left at 0, where paddle
    drew nothing and torch drew its own mask)."""
    e = dict(os.environ, PADIFF_BUG=bug)
    proc = subprocess.run([sys.executable, "-m", "padiff_trace", "run", MODELS / "tower_paddle.py", MODELS / "tower_torch.py",
                           "--out", tmp_path, "--force", "--steps", "2"], capture_output=True, text=True, env=e, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    loc = json.loads((tmp_path / "report" / "report.json").read_text())["first_divergence"]["located"]
    assert (loc["a"]["module"], loc["b"]["module"]) == ("", "2"), loc
    assert loc["a"]["why"] == loc["b"]["why"] == "rate", loc
    assert (loc["a"]["detail"], loc["b"]["detail"]) == (f"rate {rate}", "rate 0.1"), loc
    from padiff_trace import Kind, open_trace

    with open_trace(tmp_path / "tower_paddle.trace") as ta:
        got = {(r.position, r.module_type) for r in ta.select(kind=Kind.RANDOM, step=0)}
    assert got == {("off" if rate == "0" else "drawn", f"dropout p={rate}")}, got

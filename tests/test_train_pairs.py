"""Training-mode twins, no configuration: a sample of tests/train_pairs/.

Dropout on (B replays A's masks), AdamW or momentum SGD on both sides, several steps, as a
user types ``padiff-trace run PADDLE_SPEC TORCH_SPEC --out DIR --steps 3``. The families were
written by someone who never ran the tool on them and measured last (docs/real-pairs.md); the
whole set runs with ``python tests/real_pairs/table.py bert_train gpt_train llama_train t5_train
mobilenet_v2_train``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers")
pytest.importorskip("paddlenlp")

pytestmark = pytest.mark.slow

PAIRS = Path(__file__).parent / "train_pairs"


def truth(family: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((PAIRS / f"{family}_truth.json").read_text())
    return data


def run(out: Path, family: str, bug: str = "", *more: str) -> tuple[int, dict[str, Any], str]:
    proc = subprocess.run(
        [sys.executable, "-m", "padiff_trace", "run", PAIRS / f"{family}_paddle.py", PAIRS / f"{family}_torch.py",
         "--out", out, "--force", *truth(family)["flags"], *more],
        capture_output=True, text=True, env=dict(os.environ, PADIFF_BUG=bug), timeout=900,
    )
    report = out / "report" / "report.json"
    return proc.returncode, json.loads(report.read_text()) if report.exists() else {}, proc.stderr + proc.stdout  # the verdict (stdout) last: an assertion shows its tail


def _first_step(doc: dict[str, Any]) -> int:
    index = doc["first_divergence"]["index"]
    pair = next(p for p in doc["pairs"] + doc["weights"] + doc["param_grads"] if p["index"] == index)
    return int(pair["step"])


def test_clean_training_twin_is_aligned_over_three_steps(tmp_path: Path) -> None:
    rc, doc, text = run(tmp_path, "bert_train")
    assert rc == 0, text[-4000:]
    assert {p["step"] for p in doc["weights"]} == {0, 1, 2, 3}  # three updates compared
    assert "randomness replayed" in text  # dropout on: B drew A's masks


@pytest.mark.parametrize(("family", "bug"), [("t5_train", "enc_eval"), ("gpt_train", "label_smoothing"),
                                           ("gpt_train", "attn_dropout"), ("llama_train", "attn_dropout"),
                                           ("bart_train", "paddle_act_dropout")])
def test_training_bug_is_named_at_its_module(tmp_path: Path, family: str, bug: str) -> None:
    """A submodule left in eval mode (its dropout off) is named at that dropout; a loss that
    smooths its labels on one side is named at the loss: the model's outputs agree; a dropout
    probability that differs in a dropout module only one side has (HF's ``attn_dropout``,
    paddle drops inline) is named at that module: nothing on the other side compares its
    output, and everything compared before it agrees; a dropout written inline on one side only
    (llama's ``attention_dropout``) is named at the attention, not at the rotary table only the
    other side builds there, which the first side's trace holds as an input; paddlenlp BART's
    activation dropout left at 0.1 (a module after a functional GELU; HF drops inline after a
    GELU module) is named at that module and at HF's layer (set 9, held out)."""
    spec = truth(family)["bugs"][bug]
    rc, doc, text = run(tmp_path, family, bug)
    assert rc == 1, text[-4000:]
    loc = doc["first_divergence"]["located"]
    if loc is None:  # the loss: no module call made it
        index = doc["first_divergence"]["index"]
        pair = next(p for p in doc["pairs"] if p["index"] == index)
        assert pair["role"] == "loss" and spec["paddle_module"] == spec["torch_module"] == "<root>", text[-4000:]
    else:
        assert (loc["a"]["module"], loc["b"]["module"]) == (spec["paddle_module"], spec["torch_module"]), text[-4000:]
    assert _first_step(doc) == spec["first_step"]


def test_labels_each_library_shifts_its_own_way_train_aligned(tmp_path: Path) -> None:
    """Mixtral trained with each library's own loss (set 9, held out): paddlenlp's criterion takes
    labels the caller shifted, HF shifts ``labels = input_ids`` itself, and both add the router's
    auxiliary loss. B keeps its own labels (replaying A's would shift them twice): aligned."""
    rc, doc, text = run(tmp_path, "mixtral_train")
    assert rc == 0, text[-4000:]
    assert 'kwargs["labels"]' in text and "shifted by one position" in text
    assert {p["step"] for p in doc["pairs"] if p["role"] == "loss"} == {0, 1, 2}


def test_optimizer_bug_is_named_as_the_optimizer(tmp_path: Path) -> None:
    """beta2 0.99 against 0.999: Adam's first update ignores the betas, so it shows at step 2,
    and the report says the optimizer update differs, with the setting."""
    rc, doc, text = run(tmp_path, "llama_train", "beta2")
    assert rc == 1, text[-4000:]
    codes = {f["code"]: f["text"] for f in doc["diagnosis"]}
    assert "update_differs" in codes and "beta2 0.99 vs 0.999" in codes.get("optimizer_cause", ""), codes
    assert _first_step(doc) == truth("llama_train")["bugs"]["beta2"]["first_step"]



def test_clipping_an_adaptive_optimizer_hides_is_named_at_its_first_update(tmp_path: Path) -> None:
    """ELECTRA (set 9, held out): paddle clips each gradient by value, torch by the global norm,
    under Adam. Adam's first update is about +-lr per element whatever the gradient's scale, so
    the step-1 weights agree to their own tolerance; the updates of a few tensors differ by
    1e-3..1e-2 while their gradients agree to 1e-6. The difference is named at step 1 (where the
    truth has it), with the clipping as its cause, not at step 2 where the forward shows it."""
    spec = truth("electra_train")["bugs"]["paddle_clip_by_value"]
    rc, doc, text = run(tmp_path, "electra_train", "paddle_clip_by_value")
    assert rc == 1, text[-4000:]
    codes = {f["code"]: f["text"] for f in doc["diagnosis"]}
    assert "update_differs" in codes and "gradient clipping at step 0" in codes.get("optimizer_cause", ""), codes
    assert _first_step(doc) == spec["first_step"] == 1

SITE = Path(__file__).resolve().parents[1] / ".vision-site" / "torchvision"


@pytest.mark.skipif(not SITE.exists(), reason="torchvision for the vision pairs is not installed (make installs it)")
def test_gradient_differences_a_relu6_drops_do_not_propagate(tmp_path: Path) -> None:
    """MobileNetV2 in train mode, one step: the dropout mask read off A's output cannot tell a
    dropped element from a kept one where the pooled input is 0, so B passes a gradient back
    there and A none; the ReLU6 in front passes nothing back for those elements either, and
    every gradient after it agrees. The clean twin is aligned, and the report says why.
    (Three steps of this small-batch model are chaotic in fp32: docs/real-pairs.md.)"""
    proc = subprocess.run(
        [sys.executable, "-m", "padiff_trace", "run", PAIRS / "mobilenet_v2_train_paddle.py",
         PAIRS / "mobilenet_v2_train_torch.py", "--out", tmp_path, "--force", "--steps", "1"],
        capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    doc = json.loads((tmp_path / "report" / "report.json").read_text())
    quiet = [p for p in doc["pairs"] if "does not propagate" in (p["reason"] or "")]
    assert quiet and all(p["role"] == "grad_output" for p in quiet)
    assert any(p["metrics"]["rel_l2"] > 1e-2 for p in quiet)  # far past rounding, where it is dropped


@pytest.mark.skipif(not SITE.exists(), reason="torchvision for the vision pairs is not installed (make installs it)")
def test_training_that_amplifies_rounding_is_aligned_and_says_so(tmp_path: Path) -> None:
    """MobileNetV2, three steps: the twin agrees at step 0, but its gradients are mostly rounding
    (batch 4, BatchNorm) and the weights after the first update already differ within their
    floor; from there outputs and gradients differ by percents, as torch differs from itself with
    weights moved by one ulp (float64 agrees). Values computed from drifted weights pass as
    rounding carried by training, and the report says how far they went (a BatchNorm's running
    variance under its convention too); a Nesterov update on
    one side still fails at the weights after the first update."""
    rc, doc, text = run(tmp_path / "clean", "mobilenet_v2_train")
    assert rc == 0, text[-4000:]
    codes = {f["code"]: f["text"] for f in doc["diagnosis"]}
    assert "from step 1 on" in codes.get("training_drift", ""), codes
    # a small-batch BatchNorm's running variance (16 values per channel) once drift moved the batch
    # statistics apart: passed as rounding carried through the running update, under the Bessel
    # convention where the drift alone does not cover the difference (session 40's code failed it
    # at step 2). Which of the two a layer needs depends on how far this machine's rounding
    # carried it (session 49's machine needs the convention for none at step 2 or later).
    small = {w["a"]["module"] for w in doc["weights"] if w["a"]["position"] == "_variance" and "16/15" in w["reason"]}
    drifted = [w for w in doc["weights"] if w["a"]["position"] == "_variance" and w["a"]["module"] in small
               and w["step"] >= 2 and w["reason"]]
    assert small and drifted, [w["reason"] for w in doc["weights"] if w["a"]["position"] == "_variance"][:20]
    assert all(w["passed"] and (w["reason"].startswith("rounding through the running update")
                                or w["reason"].startswith("convention:")) for w in drifted), drifted
    assert all("16/15" in w["reason"] for w in drifted if "under the convention" in w["reason"]), drifted
    rc, doc, text = run(tmp_path / "bug", "mobilenet_v2_train", "nesterov")
    assert rc == 1, text[-4000:]
    assert _first_step(doc) == truth("mobilenet_v2_train")["bugs"]["nesterov"]["first_step"]
    assert "update_differs" in {f["code"] for f in doc["diagnosis"]}, text[-4000:]


def test_a_gpt2_port_with_its_own_conv1d_copy_trains_aligned(tmp_path: Path) -> None:
    """port_gpt2conv_train (set 12, held out): torch's side copies transformers' ``Conv1D`` into
    its own file (a Linear stored [in, out], fused ``c_attn`` = q|k|v) against paddle's separate
    Linear q, k, v; tied embeddings, dropout on, AdamW, clipping, 3 steps. The bare class name
    says the layout, so c_fc and c_proj are not paired by their transposed shapes, and q|k|v pack
    into c_attn: aligned."""
    rc, _, text = run(tmp_path, "port_gpt2conv_train")
    assert rc == 0, text[-4000:]
    wm = json.loads((tmp_path / "port_gpt2conv_train_torch.trace" / "weightmap.json").read_text())
    to = {e.get("paddle"): e.get("torch") for e in wm["weights"] if "paddle_part" not in e}
    assert to["layers.0.ffn.fc1.weight"] == "transformer.h.0.mlp.c_fc.weight"
    packed = [e["paddle"] for e in wm["weights"] if e.get("torch") == "transformer.h.0.attn.c_attn.weight"]
    assert packed == [f"layers.0.attn.{n}.weight" for n in ("q_proj", "k_proj", "v_proj")], packed


# ------------------------------------------------------------------ set 13 (session 23), held out
@pytest.mark.parametrize("bug", ["", "text_mlp_drop"])
def test_a_dual_encoder_with_towers_registered_in_another_order_trains_aligned(tmp_path: Path, bug: str) -> None:
    """port_clip_train: paddle registers the image tower first, torch the text tower first, with
    packed attention projections; a 0-d logit scale against a [1] one. On first contact the
    LayerNorms of each block were paired crosswise, the logit scales not at all: exit 1, clean."""
    rc, doc, text = run(tmp_path, "port_clip_train", bug)
    if not bug:
        assert rc == 0, text[-4000:]
        return
    assert rc == 1, text[-4000:]
    loc = doc["first_divergence"]["located"]
    assert (loc["a"]["module"], loc["b"]["module"]) == ("text.block.drop2", "transformer.resblocks.0.mlp.drop")


def test_a_two_layer_lstm_against_two_one_layer_lstms_trains_aligned(tmp_path: Path) -> None:
    """port_rnnlm_train: paddle's nn.LSTM(num_layers=2) against two one-layer torch LSTMs. On first
    contact no weight was transferred (exit 2: weight_ih_l1 against rnns.1.weight_ih_l0)."""
    rc, doc, text = run(tmp_path, "port_rnnlm_train")
    assert rc == 0, text[-4000:]
    # the two-layer LSTM is the call partner of neither one-layer LSTM
    assert {"rnns.0#0 (LSTM)", "rnns.1#0 (LSTM)"} <= set(doc["unpaired"]["calls_b"])
    assert "lstm#0 (LSTM)" in doc["unpaired"]["calls_a"]


# set 17 and 18 (session 27), measured once on first contact: cell vectors packed into one, a
# gradient penalty (hooks see another backward on each side), a shared dropout module of the
# wrong rate on the other side (its first call is the divergence, not its second)
@pytest.mark.parametrize(("family", "bug"), [("port_sru_train", ""), ("port_wgan_gp_train", ""),
                                             ("port_lora_train", "lora_drop_default")])
def test_set17_training_cases_are_as_their_truth_says(tmp_path: Path, family: str, bug: str) -> None:
    _as_truth_says(tmp_path, family, bug)


# set 24 (session 31), measured once on first contact: MoCo's queue of negatives and its pointer,
# buffers under names that say nothing of each other, pair as the only state left
@pytest.mark.parametrize(("family", "bug"), [("port_moco_train", ""), ("port_moco_train", "paddle_ema_stats")])
def test_set24_training_cases_are_as_their_truth_says(tmp_path: Path, family: str, bug: str) -> None:
    _as_truth_says(tmp_path, family, bug)


# set 25 (session 32), measured once on first contact: DIN's PReLU (paddle's ``_weight``), and a
# teacher's dropout module off on one side only, named by the draws
@pytest.mark.parametrize(("family", "bug"), [("port_din_train", ""), ("port_mean_teacher_train", "paddle_teacher_eval")])
def test_set25_training_cases_are_as_their_truth_says(tmp_path: Path, family: str, bug: str) -> None:
    _as_truth_says(tmp_path, family, bug)


# set 26 (session 33), passed on first contact: SAM's two passes per step, ArcFace's margin loss
@pytest.mark.parametrize(("family", "bug"), [("port_sam_train", "torch_no_zero_grad"), ("port_arcface_train", "")])
def test_set26_training_cases_are_as_their_truth_says(tmp_path: Path, family: str, bug: str) -> None:
    _as_truth_says(tmp_path, family, bug)


# set 27 (session 34), passed on first contact: DPO's frozen reference, uncertainty weights
@pytest.mark.parametrize(("family", "bug"), [("port_dpo_train", "torch_ref_unfrozen"), ("port_uncertainty_mtl_train", "")])
def test_set27_training_cases_are_as_their_truth_says(tmp_path: Path, family: str, bug: str) -> None:
    _as_truth_says(tmp_path, family, bug)


# set 28 (session 35): paddle hands its layers the additive mask [B, 1, 1, S], torch a boolean
# ``key_padding_mask`` [B, S] (True = masked out); once the attention dropout of the wrong rate
# makes the layer's output differ, the mask must not be what is named
@pytest.mark.parametrize(("family", "bug"), [("port_paramgroups_train", "paddle_attn_p_slip")])
def test_set28_training_cases_are_as_their_truth_says(tmp_path: Path, family: str, bug: str) -> None:
    _as_truth_says(tmp_path, family, bug)


# set 29 (session 36): torch pools in an ``EmbeddingBag`` ([B, d]) where paddle's ``Embedding``
# returns every token ([B, S, d]) and pools after it: outputs of other shapes, a boundary that the
# agreeing records after it decide; a dropout of the default rate is found where it is one
@pytest.mark.parametrize(("family", "bug"), [("port_bce_adagrad_train", ""),
                                             ("port_bce_adagrad_train", "paddle_dropout_default")])
def test_set29_training_cases_are_as_their_truth_says(tmp_path: Path, family: str, bug: str) -> None:
    _as_truth_says(tmp_path, family, bug)


def test_fp32_runs_that_agree_where_their_float64_runs_part_are_rounding_under_the_referee(tmp_path: Path) -> None:
    """DPO's clean twin under ``--referee``: the key share of the packed q|k|v bias gets a
    gradient that is rounding noise in fp32 and zero in float64, so AdamW moves it in both fp32
    runs alike and in neither float64 run the same way. Paddle and torch agree with each other
    far better than either agrees with its float64 run: rounding, not one side deviating.

    ``--seed 0``: paddle draws the dropout masks afresh in every run (torch replays them). Under
    one draw in a session-48 CI run, torch's fp32 noise on that bias took another sign than
    paddle's and AdamW's full step on it left torch's later weights 1.5e-5 from float64 against
    paddle's 1e-6 ("B deviates" at the LM head, step 1): the case this test describes is the
    usual draw, pinned here; that rare draw is a known limit of the referee."""
    rc, doc, text = run(tmp_path, "port_dpo_train", "", "--referee", "--seed", "0")
    assert rc == 0, text[-4000:]
    assert doc.get("first_divergence") is None, text[-4000:]


def _as_truth_says(tmp_path: Path, family: str, bug: str) -> None:
    """A clean twin exits 0; a planted bug exits 1, named at its truth's modules on both sides."""
    rc, doc, text = run(tmp_path, family, bug)
    if not bug:
        assert rc == 0, text[-4000:]
        return
    want = truth(family)["bugs"][bug]
    assert rc == 1, text[-4000:]
    loc = doc["first_divergence"]["located"]
    assert (loc["a"]["module"], loc["b"]["module"]) == (want["paddle_module"], want["torch_module"]), text[-4000:]

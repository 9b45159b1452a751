"""paddle.vision against torchvision, no configuration: a sample of tests/vision_pairs/.

The names of the two libraries differ almost everywhere (paddle ``blocks.3.expand_conv`` vs
torchvision ``features.4.block.0``) and many BatchNorm tensors share a shape: the weights
pair by type, role and registration order. The whole vision corpus runs with
``python tests/real_pairs/table.py`` (docs/real-pairs.md). torchvision lives outside the venv
in ``.vision-site`` (``make`` installs it; see tests/vision_pairs/_tv.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

PAIRS = Path(__file__).parent / "vision_pairs"
SITE = Path(__file__).resolve().parents[1] / ".vision-site" / "torchvision"

if not SITE.exists():
    pytest.skip(f"torchvision for the vision pairs is not installed in {SITE.parent} (make installs it)",
                allow_module_level=True)


def run(out: Path, family: str, bug: str = "", **env: str) -> tuple[int, dict[str, Any], str]:
    flags = json.loads((PAIRS / f"{family}_truth.json").read_text()).get("flags", [])  # a training twin: --steps 3
    proc = subprocess.run(
        [sys.executable, "-m", "padiff_trace", "run", PAIRS / f"{family}_paddle.py", PAIRS / f"{family}_torch.py",
         "--out", out, "--force", *flags], capture_output=True, text=True, env=dict(os.environ, PADIFF_BUG=bug, **env),
        timeout=900,
    )
    report = out / "report" / "report.json"
    return proc.returncode, json.loads(report.read_text()) if report.exists() else {}, proc.stderr + proc.stdout  # the verdict (stdout) last: an assertion shows its tail


def truth(family: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((PAIRS / f"{family}_truth.json").read_text())
    return data


def test_mobilenet_v3_clean_twin_is_aligned_with_the_truths_pairs(tmp_path: Path) -> None:
    rc, _, text = run(tmp_path, "mobilenet_v3_small")
    assert rc == 0, text[-4000:]
    wm = json.loads(next(tmp_path.glob("*_torch.trace/weightmap.json")).read_text())
    got = {(e["paddle"], e["torch"]) for e in wm["weights"] if "paddle" in e and "torch" in e}
    want = {(p["paddle"], p["torch"]) for p in truth("mobilenet_v3_small")["pairs"]}
    assert want <= got, sorted(want - got)[:5]


@pytest.mark.parametrize("bug", ["bn_eps", "no_residual"])
def test_mobilenet_v3_planted_bug_is_located(tmp_path: Path, bug: str) -> None:
    spec = truth("mobilenet_v3_small")["bugs"][bug]
    rc, doc, text = run(tmp_path, "mobilenet_v3_small", bug)
    assert rc == 1, text[-4000:]
    loc = doc["first_divergence"]["located"]
    assert (loc["a"]["module"], loc["b"]["module"]) == (spec["paddle_module"], spec["torch_module"]), text[-4000:]


# ResNeXt-50's clean twin differs at `layer4` by rel-L2 7e-5 while `layer4.2`, the very same
# values, passes as carried rounding: since session 45 the Sequential shares its block's verdict
# (a known failure on some machines before).
@pytest.mark.parametrize("family", ["densenet121", "resnext50_32x4d"])
def test_deep_clean_twins_are_aligned(tmp_path: Path, family: str) -> None:
    """DenseNet fuses ReLU into BatchNorm and concatenates inside its dense layer on the paddle
    side (boundary differences); ResNeXt-50's gradients cross ReLU kinks that fp32 rounding
    flips (measured flips). Both clean twins align."""
    rc, doc, text = run(tmp_path, family)
    assert rc == 0, text[-4000:]
    if family == "resnext50_32x4d":  # gradients beyond the 1e-3 that rounding reached before kinks were measured
        grads = [p["metrics"]["rel_l2"] for p in doc["pairs"] + doc["param_grads"]
                 if p["role"] in ("grad_output", "param_grad") and p["metrics"]]
        assert max(grads) > 1e-3, max(grads)


def test_a_relu_fused_into_batchnorm_whose_kink_rounding_flips_is_carried(tmp_path: Path) -> None:
    """DenseNet-121 on one thread (session 56's machine; two threads round otherwise): in
    ``denseblock4.denselayer9`` one element before the second ReLU is 1.0e-5 on the paddle side
    and -7.0e-6 on torch's. paddle fuses that ReLU into its BatchNorm, so the kink is inside one
    side's module: the gradient there passes back on one side only (6% of the layer's), and every
    gradient before it differs by 1e-2. The flip is measured across the boundary (the fused
    side's output says on which side of 0 its value lay) and the clean twin aligns; the session-
    start code exits 1 here."""
    rc, doc, text = run(tmp_path, "densenet121", OMP_NUM_THREADS="1")
    assert rc == 0, text[-4000:]
    fused = [p for p in doc["pairs"] if "relu fused into" in p.get("reason", "")]
    if not fused:
        # whether an element before the fused ReLU rounds to opposite sides of 0 depends on the
        # machine's kernels (session 58's machine rounds DenseNet-121 alike on both sides there)
        pytest.skip("no kink fused into a module flips on this machine: the aligned run is all it shows")


def test_a_trained_resnet_whose_bias_gradients_cancel_is_aligned(tmp_path: Path) -> None:
    """ResNet-18 trained three steps: a residual block's BatchNorm bias receives its output
    gradient summed over the batch and the map, a sum that cancels, so the ReLU flips rounding
    makes in that gradient reach 1e-2 in the bias's (session 55's machine; the session-start
    code exits 1 there). Where each side's bias gradient is that sum of its own output gradient,
    which passed, the difference is carried; the clean twin aligns."""
    rc, doc, text = run(tmp_path, "resnet18_train")
    assert rc == 0, text[-4000:]
    assert any(p["a"]["module"] == "layer1.0.bn2" for p in doc["param_grads"]), text[-4000:]


def test_a_pooling_whose_output_shape_differs_is_named(tmp_path: Path) -> None:
    """torchvision's stem pool with ceil_mode: 17x17 against 16x16. The two pools pair as a
    shape difference (the only pooling in their slot, same input shapes) and are named; the
    BatchNorm before them, which fuses the ReLU on the paddle side, is a boundary difference."""
    spec = truth("densenet121")["bugs"]["stem_ceil"]
    rc, doc, text = run(tmp_path, "densenet121", "stem_ceil")
    assert rc == 1, text[-4000:]
    loc = doc["first_divergence"]["located"]
    assert (loc["a"]["module"], loc["b"]["module"]) == (spec["paddle_module"], spec["torch_module"]), text[-4000:]
    assert any(c["how"] == "shape" for c in doc["alignment"]), doc["alignment"][:5]


def test_a_shared_activation_called_once_less_names_the_block_on_both_sides(tmp_path: Path) -> None:
    """ResNet-50 (set 10, held out): torch's ``layer3.1`` returns the residual sum without its
    ReLU, so the block's shared ``relu`` runs twice there and three times on the paddle side.
    The third call is no module of paddle's only (its other calls are paired): the two sides
    call it a different number of times, which the block's code decides, and the block is
    named on both sides."""
    spec = truth("resnet50")["bugs"]["no_post_add_relu"]
    rc, doc, text = run(tmp_path, "resnet50", "no_post_add_relu")
    assert rc == 1, text[-4000:]
    loc = doc["first_divergence"]["located"]
    assert (loc["a"]["module"], loc["b"]["module"]) == (spec["paddle_module"], spec["torch_module"]) == \
        ("layer3.1", "layer3.1"), text[-4000:]

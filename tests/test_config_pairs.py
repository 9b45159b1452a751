"""Library configurations the corpus twins do not use (tests/config_pairs/): real paddlenlp
models against HF transformers, recorded with ``padiff-trace run`` as a user types it, no flag
and no mapping.

* ``llama``: paddlenlp LLaMA with ``fuse_attention_qkv`` (one ``qkv_proj`` packed head group by
  head group, grouped-query attention: 4 heads, 2 key/value heads) and ``fuse_attention_ffn``
  (``gate_up_fused_proj``) against HF's q/k/v and gate/up projections, two training steps;
* ``gpt``: paddlenlp GPT's fused ``qkv_proj`` (head by head) against GPT-2's ``c_attn`` (all q,
  then all k, then all v): the same shape packed another way;
* ``llama_scaled``: linearly scaled rotary positions, which paddlenlp implements by dividing the
  positions and HF by dividing the frequencies: another ``inv_freq`` buffer, the same tables.

Before session 19 each clean pair was reported diverged (at the first attention, or at the
rotary buffer).
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

PAIRS = Path(__file__).parent / "config_pairs"


def run(out: Path, paddle_spec: str, torch_spec: str, *flags: str, bug: str = "") -> tuple[int, dict[str, Any], str]:
    proc = subprocess.run(
        [sys.executable, "-m", "padiff_trace", "run", PAIRS / paddle_spec, PAIRS / torch_spec, "--out", out, "--force", *flags],
        capture_output=True, text=True, env=dict(os.environ, PADIFF_BUG=bug), timeout=600,
    )
    report = out / "report" / "report.json"
    return proc.returncode, json.loads(report.read_text()) if report.exists() else {}, proc.stderr + proc.stdout  # the verdict (stdout) last: an assertion shows its tail


def located(doc: dict[str, Any]) -> tuple[str, str]:
    loc = doc["first_divergence"]["located"]
    return loc["a"]["module"], loc["b"]["module"]


def weightmap(out: Path, torch_spec: str) -> list[dict[str, Any]]:
    return json.loads((out / f"{Path(torch_spec).stem}.trace" / "weightmap.json").read_text())["weights"]


def test_llama_fused_qkv_gqa_and_fused_ffn_train_clean(tmp_path: Path) -> None:
    code, _doc, out = run(tmp_path / "run", "llama_fused_paddle.py", "llama_torch.py", "--steps", "2")
    assert code == 0, out[-3000:]
    entries = weightmap(tmp_path / "run", "llama_torch.py")
    qkv = {e["torch"]: (e["paddle_part"], e.get("paddle_groups")) for e in entries
           if e["paddle"] == "llama.layers.1.self_attn.qkv_proj.weight"}
    # 2 groups of [q of 2 heads (32 rows) | k (16) | v (16)]
    assert qkv == {"model.layers.1.self_attn.q_proj.weight": ([0, 32], 2),
                   "model.layers.1.self_attn.k_proj.weight": ([32, 48], 2),
                   "model.layers.1.self_attn.v_proj.weight": ([48, 64], 2)}
    ffn = {e["torch"]: e["paddle_part"] for e in entries if e["paddle"] == "llama.layers.0.mlp.gate_up_fused_proj.weight"}
    assert ffn == {"model.layers.0.mlp.gate_proj.weight": [0, 128], "model.layers.0.mlp.up_proj.weight": [128, 256]}
    # the shares' gradients and updated values were compared too (two steps, AdamW), and agree
    rows = (tmp_path / "run" / "report" / "pairs.csv").read_text().splitlines()
    shares = [r for r in rows if "qkv_proj#0:weight.T[32:48] of 2 groups" in r]
    assert {r.split(",")[2] for r in shares} >= {"param", "param_grad"} and all(r.split(",")[3] == "1" for r in shares)


def test_gpt_qkv_packed_head_by_head_against_gpt2_c_attn(tmp_path: Path) -> None:
    code, doc, out = run(tmp_path / "clean", "gpt_fused_paddle.py", "gpt2_torch.py")
    assert code == 0, out[-3000:]
    parts = [(e["paddle_part"], e["paddle_groups"], e["torch_part"]) for e in weightmap(tmp_path / "clean", "gpt2_torch.py")
             if e["torch"] == "transformer.h.0.attn.c_attn.weight"]
    assert parts == [([0, 16], 4, [0, 64]), ([16, 32], 4, [64, 128]), ([32, 48], 4, [128, 192])]
    # the projection's output is compared in GPT-2's order, and agrees
    rows = (tmp_path / "clean" / "report" / "pairs.csv").read_text().splitlines()
    out_rows = [r for r in rows if "qkv_proj#0:out (regrouped)" in r and ",output," in r]
    assert len(out_rows) == 2 and all(r.split(",")[3] == "1" for r in out_rows)
    code, doc, out = run(tmp_path / "bug", "gpt_fused_paddle.py", "gpt2_torch.py", bug="scale")
    assert code == 1, out[-3000:]
    assert located(doc) == ("gpt.decoder.layers.1.self_attn", "transformer.h.1.attn")


def test_rotary_scaling_by_positions_or_by_frequencies_is_the_same_table(tmp_path: Path) -> None:
    code, doc, out = run(tmp_path / "clean", "llama_scaled_paddle.py", "llama_scaled_torch.py")
    assert code == 0, out[-3000:]
    inv = [w for w in doc["weights"] if w["a"]["module"].endswith("rotary_emb") and w["a"].get("position") == "inv_freq"]
    assert inv and all(w["passed"] and "derived state computed another way" in w["reason"] for w in inv)
    code, doc, out = run(tmp_path / "bug", "llama_scaled_paddle.py", "llama_scaled_torch.py", bug="factor")
    assert code == 1, out[-3000:]
    assert located(doc) == ("llama.layers.0.self_attn.rotary_emb", "model.rotary_emb")

"""LLaMA, torch side: HF LlamaForCausalLM, separate q/k/v and gate/up projections, 4 heads and
2 key/value heads, eager attention. Twin: llama_fused_paddle.py.

PADIFF_BUG: scale -> layer 1's attention scales its scores by 1/head_dim instead of 1/sqrt(head_dim)
"""
import os

import torch
from _common import VOCAB, token_ids

HIDDEN, LAYERS, HEADS, KV_HEADS, FFN, MAX_POS = 64, 2, 4, 2, 128, 64


def model():
    from transformers import LlamaConfig, LlamaForCausalLM

    bug = os.environ.get("PADIFF_BUG", "")
    if bug not in ("", "scale"):
        raise ValueError(f"unknown PADIFF_BUG={bug!r}")
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=FFN, num_hidden_layers=LAYERS,
        num_attention_heads=HEADS, num_key_value_heads=KV_HEADS, max_position_embeddings=MAX_POS,
        rms_norm_eps=1e-6, rope_theta=10000.0, hidden_act="silu", attention_bias=False, mlp_bias=False,
        tie_word_embeddings=False, use_cache=False, attn_implementation="eager",
    )
    m = LlamaForCausalLM(cfg).eval()
    if bug == "scale":
        attn = m.model.layers[1].self_attn
        attn.scaling = 1.0 / attn.head_dim  # read by eager_attention_forward
    return m


def inputs():
    return (), {"input_ids": torch.from_numpy(token_ids())}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]
    return (logits**2).mean()


def optimizer(model):
    return torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)

"""LLaMA with linearly scaled rotary positions, torch side: HF LlamaForCausalLM with
rope_scaling {"rope_type": "linear", "factor": 2} (HF divides inv_freq by the factor), eager
attention. Twin: llama_scaled_paddle.py.

PADIFF_BUG: factor -> the scaling factor is 4 (a real difference: every rotary table moves)
"""
import os

import torch
from _common import VOCAB, token_ids

HIDDEN, LAYERS, HEADS, FFN, MAX_POS = 64, 2, 4, 128, 64


def model():
    from transformers import LlamaConfig, LlamaForCausalLM

    bug = os.environ.get("PADIFF_BUG", "")
    if bug not in ("", "factor"):
        raise ValueError(f"unknown PADIFF_BUG={bug!r}")
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=FFN, num_hidden_layers=LAYERS,
        num_attention_heads=HEADS, num_key_value_heads=HEADS, max_position_embeddings=MAX_POS,
        rms_norm_eps=1e-6, rope_theta=10000.0, rope_scaling={"rope_type": "linear", "factor": 4.0 if bug else 2.0},
        hidden_act="silu", attention_bias=False, mlp_bias=False, tie_word_embeddings=False,
        use_cache=False, attn_implementation="eager",
    )
    return LlamaForCausalLM(cfg).eval()


def inputs():
    return (), {"input_ids": torch.from_numpy(token_ids())}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]
    return (logits**2).mean()

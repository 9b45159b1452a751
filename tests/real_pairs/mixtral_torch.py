"""Mixtral pair, torch side: HF transformers MixtralForCausalLM (tiny random config, fp32, eager attention).

Twin of mixtral_paddle.py (paddlenlp MixtralForCausalLM). Ground truth: mixtral_truth.json.
PADIFF_BUG (torch side):
  top_k   -> layer 1 MoE routes every token to 1 expert instead of num_experts_per_tok=2
  rms_eps -> layer 0 input RMSNorm eps 1e-3 instead of 1e-5
"""
import os

import numpy as np
import torch

CONFIG = dict(
    vocab_size=1000, hidden_size=32, intermediate_size=64, max_position_embeddings=64,
    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, hidden_act="silu",
    initializer_range=0.1, rms_norm_eps=1e-5, rope_theta=10000.0, num_local_experts=4,
    num_experts_per_tok=2, tie_word_embeddings=False, attention_dropout=0.0, use_cache=False,
    router_jitter_noise=0.0, sliding_window=None, pad_token_id=0, bos_token_id=1, eos_token_id=2,
)


def model():
    from transformers import MixtralConfig, MixtralForCausalLM

    torch.manual_seed(0)
    m = MixtralForCausalLM(MixtralConfig(**CONFIG, attn_implementation="eager")).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "top_k":
        m.model.layers[1].block_sparse_moe.top_k = 1
    elif bug == "rms_eps":
        m.model.layers[0].input_layernorm.variance_epsilon = 1e-3
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(4, 1000, size=(2, 12)).astype("int64")  # no pad/bos/eos ids
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample right-padded after 9 tokens
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (), {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask),
                "use_cache": False}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]
    return (logits**2).mean()

"""GPT-2, torch side: HF GPT2LMHeadModel (c_attn packs [q | k | v] of all heads, a Conv1D
stored [in, out]), eager attention. Twin: gpt_fused_paddle.py.

PADIFF_BUG: scale -> layer 1's attention drops the 1/sqrt(head_dim) score scale
"""
import os

import torch
from _common import VOCAB, token_ids

HIDDEN, LAYERS, HEADS, FFN, MAX_POS = 64, 2, 4, 128, 64


def model():
    from transformers import GPT2Config, GPT2LMHeadModel

    bug = os.environ.get("PADIFF_BUG", "")
    if bug not in ("", "scale"):
        raise ValueError(f"unknown PADIFF_BUG={bug!r}")
    torch.manual_seed(0)
    cfg = GPT2Config(
        vocab_size=VOCAB, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, n_inner=FFN, n_positions=MAX_POS,
        activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
        layer_norm_epsilon=1e-5, use_cache=False, attn_implementation="eager",
    )
    m = GPT2LMHeadModel(cfg).eval()
    if bug == "scale":
        m.transformer.h[1].attn.scale_attn_weights = False  # read by eager_attention_forward
    return m


def inputs():
    return (), {"input_ids": torch.from_numpy(token_ids())}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]
    return (logits**2).mean()

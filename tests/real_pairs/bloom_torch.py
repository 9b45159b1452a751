"""BLOOM pair, torch side: HF transformers BloomForCausalLM (tiny random config, fp32).

Twin of bloom_paddle.py (paddlenlp BloomForCausalLM). Ground truth: bloom_truth.json.
PADIFF_BUG: alibi -> layer 1 attention ignores the ALiBi position bias (baddbmm beta=0)
            scale -> layer 1 attention drops the 1/sqrt(head_dim) score scale
            residual_post_ln -> layer 1 has apply_residual_connection_post_layernorm=True (the
                        residuals are the LayerNorm outputs instead of the un-normalised inputs)
"""
import os

import torch
from _decoders_common import token_ids

VOCAB, HIDDEN, LAYERS, HEADS = 1000, 64, 2, 4


def model():
    from transformers import BloomConfig, BloomForCausalLM

    bug = os.environ.get("PADIFF_BUG", "")
    torch.manual_seed(0)
    cfg = BloomConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, n_layer=LAYERS, n_head=HEADS, layer_norm_epsilon=1e-5,
        hidden_dropout=0.0, attention_dropout=0.0, use_cache=False,
    )
    m = BloomForCausalLM(cfg)  # lm_head.weight is tied to transformer.word_embeddings.weight
    attn = m.transformer.h[1].self_attention
    if bug == "alibi":
        attn.beta = 0.0  # scores = beta * alibi + inv_norm_factor * q @ k^T
    elif bug == "scale":
        attn.inv_norm_factor = 1.0
    elif bug == "residual_post_ln":  # read inline by BloomBlock.forward
        m.transformer.h[1].apply_residual_connection_post_layernorm = True
    elif bug and bug != "paddle_gelu_erf":  # paddle_gelu_erf is planted on the paddle side
        raise ValueError(f"unknown PADIFF_BUG={bug!r} for bloom")
    return m.eval()


def inputs():
    return (), {"input_ids": torch.from_numpy(token_ids(VOCAB))}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]
    return (logits**2).mean()

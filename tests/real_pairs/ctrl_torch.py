"""CTRL pair, torch side: HF transformers CTRLLMHeadModel (tiny random config, fp32).

Twin of ctrl_paddle.py (paddlenlp CTRLLMHeadModel). Ground truth: ctrl_truth.json.
PADIFF_BUG (torch side):
  causal_mask -> layer 1 attention adds the causal mask with -1 instead of -1e4 (future tokens leak)
  act         -> layer 0 feed-forward uses GELU instead of ReLU
"""
import os

import numpy as np
import torch

CONFIG = dict(
    vocab_size=1000, n_positions=64, n_embd=32, dff=64, n_layer=2, n_head=4,
    resid_pdrop=0.0, embd_pdrop=0.0, layer_norm_epsilon=1e-6, initializer_range=0.1,
    use_cache=False, pad_token_id=0,
)


def model():
    from transformers import CTRLConfig, CTRLLMHeadModel

    torch.manual_seed(0)
    m = CTRLLMHeadModel(CTRLConfig(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "causal_mask":
        attn = m.transformer.h[1].multi_head_attention
        orig = attn.forward

        def forward(v, k, q, mask, *args, **kwargs):
            # scaled_dot_product_attention adds mask * -1e4; scaling the 0/1 triu mask by 1e-4 here
            # makes the constant -1 (the hooks on the module still see the original mask)
            return orig(v, k, q, None if mask is None else mask * 1e-4, *args, **kwargs)

        attn.forward = forward
    elif bug == "act":
        m.transformer.h[0].ffn[1] = torch.nn.GELU()
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(4, 1000, size=(2, 12)).astype("int64")  # no pad id
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

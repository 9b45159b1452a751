"""LayoutLM, HF transformers side: LayoutLMModel with bbox inputs, tiny random config, no download.

Twin: layoutlm_paddle.py. Eager attention.
PADIFF_BUG (this side only):
  mask_drop -> layer 1's self-attention (attention.self) is called without the attention mask,
               so the padded sample attends to its padding tokens
"""
import os

import numpy as np
import torch
from transformers import LayoutLMConfig, LayoutLMModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, max_2d_position_embeddings=128,
    type_vocab_size=2, initializer_range=0.1, layer_norm_eps=1e-12, pad_token_id=0,
)


def model():
    torch.manual_seed(0)
    m = LayoutLMModel(LayoutLMConfig(**CONFIG), ).eval()
    m.config._attn_implementation = "eager"
    if os.environ.get("PADIFF_BUG", "") == "mask_drop":
        sa = m.encoder.layer[1].attention.self
        orig = sa.forward

        def forward(hidden_states, attention_mask=None, *args, **kwargs):
            return orig(hidden_states, None, *args, **kwargs)  # the bug: mask not passed on

        sa.forward = forward
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 12)).astype("int64")  # no pad id (0)
    x0 = rng.integers(0, 60, size=(2, 12))
    y0 = rng.integers(0, 60, size=(2, 12))
    w = rng.integers(1, 60, size=(2, 12))
    h = rng.integers(1, 40, size=(2, 12))
    bbox = np.stack([x0, y0, x0 + w, y0 + h], axis=-1).astype("int64")  # [B, S, 4], all < 128
    types = np.zeros((2, 12), "int64")
    types[:, 6:] = 1
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample padded after 9 tokens
    return ids, bbox, types, mask


def inputs():
    ids, bbox, types, mask = _arrays()
    return (), {
        "input_ids": torch.from_numpy(ids),
        "bbox": torch.from_numpy(bbox),
        "token_type_ids": torch.from_numpy(types),
        "attention_mask": torch.from_numpy(mask),
    }


def loss(output):
    # HF returns BaseModelOutputWithPoolingAndCrossAttentions
    seq, pooled = output.last_hidden_state, output.pooler_output
    # seq ends in a LayerNorm: the mean of ALL its squared features is ~constant (zero
    # gradient), so take half of the features
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()

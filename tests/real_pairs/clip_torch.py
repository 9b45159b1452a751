"""CLIP (text + ViT vision towers), HF transformers side: tiny random config, no download.

Planted bugs (PADIFF_BUG): see clip_truth.json.
  torch_causal_offby1 -> text layer 0's self-attention builds its causal mask with
                         torch.triu(..., diagonal=2) instead of diagonal=1: every token also
                         sees the next one (the padding mask is still applied)
"""
import os

import numpy as np
import torch
from transformers import CLIPConfig, CLIPModel

TEXT = dict(
    vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
    max_position_embeddings=16, hidden_act="quick_gelu", layer_norm_eps=1e-5, dropout=0.0,
    attention_dropout=0.0, pad_token_id=1, bos_token_id=98, eos_token_id=99,
)
VISION = dict(
    hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_channels=3,
    image_size=32, patch_size=8, hidden_act="quick_gelu", layer_norm_eps=1e-5, dropout=0.0,
    attention_dropout=0.0,
)


def model():
    torch.manual_seed(0)
    cfg = CLIPConfig(text_config=dict(TEXT), vision_config=dict(VISION), projection_dim=16)
    m = CLIPModel._from_config(cfg, attn_implementation="eager").eval()
    # HF's logit_scale is 0-d, paddlenlp's has shape [1]; verify_truth.py's transfer cannot copy
    # into a 0-d tensor (np.ascontiguousarray makes it 1-d), so hold it as [1] here: the forward
    # only uses logit_scale.exp() as a broadcast factor, the value is unchanged
    m.logit_scale = torch.nn.Parameter(m.logit_scale.detach().reshape(1))
    if os.environ.get("PADIFF_BUG", "") == "act":  # quick_gelu ported as gelu in text layer 1's MLP
        m.text_model.encoder.layers[1].mlp.activation_fn = torch.nn.GELU()
    elif os.environ.get("PADIFF_BUG", "") == "torch_causal_offby1":
        sa = m.text_model.encoder.layers[0].self_attn
        sa.forward = _attention_causal_off_by_one(sa)
    return m


def _attention_causal_off_by_one(sa):
    """CLIPAttention.forward that rebuilds the causal mask itself, with the diagonal off by one."""
    orig = sa.forward

    def forward(hidden_states, attention_mask=None, causal_attention_mask=None, output_attentions=False):
        if causal_attention_mask is not None:
            n = hidden_states.shape[1]
            neg = torch.finfo(hidden_states.dtype).min
            mask = torch.triu(torch.full((n, n), neg, dtype=hidden_states.dtype), diagonal=2)  # the bug: 1
            causal_attention_mask = mask[None, None].expand_as(causal_attention_mask)
        return orig(hidden_states, attention_mask=attention_mask, causal_attention_mask=causal_attention_mask,
                    output_attentions=output_attentions)
    return forward


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(2, 98, size=(2, 12)).astype("int64")  # no pad (1), bos (98) or eos (99) in the body
    ids[:, 0] = 98  # bos
    ids[0, 11] = 99  # eos closes sample 0
    ids[1, 8] = 99  # sample 1: eos after 8 tokens, then 3 masked positions (ordinary ids, not the pad id)
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0
    pixels = rng.standard_normal((2, 3, 32, 32)).astype("float32")
    return ids, mask, pixels


def inputs():
    ids, mask, pixels = _arrays()
    return (), {
        "input_ids": torch.from_numpy(ids),
        "pixel_values": torch.from_numpy(pixels),
        "attention_mask": torch.from_numpy(mask),
    }


def loss(output):
    # CLIPOutput: logits_per_image [2, 2] (scaled cosine similarities)
    return (output.logits_per_image**2).mean()

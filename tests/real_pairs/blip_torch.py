"""BLIP (BlipModel: BERT-style text tower + ViT vision tower with a fused qkv), HF transformers
side: tiny random config, no download.

Planted bugs (PADIFF_BUG): see blip_truth.json.
"""
import os

import numpy as np
import torch
from transformers import BlipConfig, BlipModel

TEXT = dict(
    vocab_size=100, hidden_size=32, encoder_hidden_size=32, intermediate_size=64, num_hidden_layers=2,
    num_attention_heads=4, max_position_embeddings=16, hidden_act="gelu", layer_norm_eps=1e-12,
    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, pad_token_id=0, bos_token_id=98,
    eos_token_id=2, sep_token_id=99,
)
# layer_norm_eps pinned: its default differs (paddlenlp BlipVisionConfig 1e-6, HF 1e-5)
VISION = dict(
    hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, image_size=32,
    patch_size=8, hidden_act="gelu", layer_norm_eps=1e-5, attention_dropout=0.0,
)


def model():
    torch.manual_seed(0)
    cfg = BlipConfig(text_config=dict(TEXT), vision_config=dict(VISION), projection_dim=16)
    m = BlipModel._from_config(cfg, attn_implementation="eager").eval()
    # HF's logit_scale is 0-d, paddlenlp's has shape [1]; verify_truth.py's transfer cannot copy
    # into a 0-d tensor (np.ascontiguousarray makes it 1-d), so hold it as [1] here: the forward
    # only uses logit_scale.exp() as a broadcast factor, the value is unchanged
    m.logit_scale = torch.nn.Parameter(m.logit_scale.detach().reshape(1))
    if os.environ.get("PADIFF_BUG", "") == "ln_unbiased":
        # precision-level: vision layer 1's layer_norm2 rewritten by hand with torch.var's default
        # (unbiased, divides by N-1) instead of the biased variance LayerNorm uses
        ln = m.vision_model.encoder.layers[1].layer_norm2
        ln.forward = lambda x: (x - x.mean(-1, keepdim=True)) / (x.var(-1, keepdim=True) + ln.eps).sqrt() * ln.weight + ln.bias
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(3, 98, size=(2, 12)).astype("int64")  # no pad (0), eos (2), bos (98), sep (99)
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample padded after 9 tokens (ordinary ids there, not the pad id)
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
    # BlipOutput: logits_per_image [2, 2] (scaled cosine similarities)
    return (output.logits_per_image**2).mean()

"""Chinese-CLIP (BERT text tower + CLIP ViT vision tower), HF transformers side: tiny random
config, no download.

Planted bugs (PADIFF_BUG): see chinese_clip_truth.json.
"""
import os

import numpy as np
import torch
from transformers import ChineseCLIPConfig, ChineseCLIPModel

TEXT = dict(
    vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
    hidden_act="gelu", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
    max_position_embeddings=32, type_vocab_size=2, layer_norm_eps=1e-12, pad_token_id=0,
)
VISION = dict(
    hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_channels=3,
    image_size=32, patch_size=8, hidden_act="quick_gelu", layer_norm_eps=1e-5, dropout=0.0,
    attention_dropout=0.0,
)


def model():
    torch.manual_seed(0)
    cfg = ChineseCLIPConfig(text_config=dict(TEXT), vision_config=dict(VISION), projection_dim=16)
    m = ChineseCLIPModel._from_config(cfg, attn_implementation="eager").eval()
    # HF's logit_scale is 0-d, paddlenlp's has shape [1]; verify_truth.py's transfer cannot copy
    # into a 0-d tensor (np.ascontiguousarray makes it 1-d), so hold it as [1] here: the forward
    # only uses logit_scale.exp() as a broadcast factor, the value is unchanged
    m.logit_scale = torch.nn.Parameter(m.logit_scale.detach().reshape(1))
    if os.environ.get("PADIFF_BUG", "") == "ln_half":  # text embeddings LayerNorm computed in float16 and cast back
        ln = m.text_model.embeddings.LayerNorm
        ln.forward = lambda x: torch.nn.functional.layer_norm(
            x.half(), ln.normalized_shape, ln.weight.half(), ln.bias.half(), ln.eps
        ).to(x.dtype)
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 100, size=(2, 12)).astype("int64")  # no pad id (0)
    types = np.zeros((2, 12), "int64")
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample padded after 9 tokens
    pixels = rng.standard_normal((2, 3, 32, 32)).astype("float32")
    return ids, types, mask, pixels


def inputs():
    ids, types, mask, pixels = _arrays()
    return (), {
        "input_ids": torch.from_numpy(ids),
        "pixel_values": torch.from_numpy(pixels),
        "attention_mask": torch.from_numpy(mask),
        "token_type_ids": torch.from_numpy(types),
    }


def loss(output):
    # ChineseCLIPOutput: logits_per_image [2, 2] (scaled cosine similarities)
    return (output.logits_per_image**2).mean()

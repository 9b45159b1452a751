"""Chinese-CLIP (BERT text tower + CLIP ViT vision tower), paddlenlp side: tiny random config,
no download.

PADIFF_BUG=paddle_heads plants this side's bug (see chinese_clip_truth.json).
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import ChineseCLIPConfig, ChineseCLIPModel

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
    paddle.seed(0)
    m = ChineseCLIPModel(ChineseCLIPConfig(text_config=dict(TEXT), vision_config=dict(VISION), projection_dim=16))
    m.eval()
    _perturb(m)
    if os.environ.get("PADIFF_BUG", "") == "paddle_heads":
        # vision layer 1's attention split into 2 heads of 16 instead of 4 heads of 8
        # (num_attention_heads ported wrongly for this one layer)
        attn = m.vision_model.transformer.layers[1].self_attn
        attn.num_heads, attn.head_dim = 2, attn.embed_dim // 2
    return m


def _perturb(m):
    """paddlenlp's init leaves every bias 0 and every LayerNorm at (1, 0): give them random
    values (fixed numpy rng) so that a bias or norm parameter ported wrongly shows."""
    rng = np.random.default_rng(1)
    for name, p in m.named_parameters():
        if name.endswith(".bias"):
            p.set_value(rng.normal(0.0, 0.05, p.shape).astype("float32"))
        elif (".norm" in name or ".ln_" in name or "layer_norm" in name) and name.endswith(".weight"):
            p.set_value((1.0 + rng.normal(0.0, 0.1, p.shape)).astype("float32"))


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
        "input_ids": paddle.to_tensor(ids),
        "pixel_values": paddle.to_tensor(pixels),
        "attention_mask": paddle.to_tensor(mask),
        "token_type_ids": paddle.to_tensor(types),
    }


def loss(output):
    # ChineseCLIPOutput: logits_per_image [2, 2] (scaled cosine similarities)
    return (output.logits_per_image**2).mean()

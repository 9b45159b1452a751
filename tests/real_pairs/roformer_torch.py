"""RoFormer masked LM, HF transformers side: tiny random config, no download. Twin: roformer_paddle.py.

HF computes one sinusoidal table (encoder.embed_positions, a frozen nn.Embedding weight
[max_pos, head_dim], sin half then cos half) and applies the rotary inline in every
RoFormerSelfAttention (no rotary module).
PADIFF_BUG (this side only):
  rotary_value -> layer 0 also rotates the values (rotary_value=True on one layer)
  rope_base    -> the sinusoidal table (encoder.embed_positions.weight) is built with base 1000
                  instead of 10000 (a wrong rotary theta; the table is derived, never copied)
"""
import os

import numpy as np
import torch
from transformers import RoFormerConfig, RoFormerForMaskedLM

CONFIG = dict(
    vocab_size=1000, embedding_size=32, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=4, intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=2,
    initializer_range=0.1, pad_token_id=0, layer_norm_eps=1e-12, rotary_value=False,
    is_decoder=False, tie_word_embeddings=True,
)


def model():
    torch.manual_seed(0)
    m = RoFormerForMaskedLM(RoFormerConfig(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "rotary_value":
        m.roformer.encoder.layer[0].attention.self.rotary_value = True
    elif bug == "rope_base":
        emb = m.roformer.encoder.embed_positions
        n_pos, dim = emb.weight.shape
        pos = np.arange(n_pos)[:, None] / np.power(1000.0, 2 * (np.arange(dim) // 2) / dim)[None, :]
        with torch.no_grad():  # same layout as RoFormerSinusoidalPositionalEmbedding._init_weight
            emb.weight[:, : dim // 2] = torch.from_numpy(np.sin(pos[:, 0::2])).float()
            emb.weight[:, dim // 2 :] = torch.from_numpy(np.cos(pos[:, 1::2])).float()
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 12)).astype("int64")  # no pad id (0)
    types = np.zeros((2, 12), "int64")
    types[:, 6:] = 1
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample padded after 9 tokens
    return ids, types, mask


def inputs():
    ids, types, mask = _arrays()
    return (), {
        "input_ids": torch.from_numpy(ids),
        "token_type_ids": torch.from_numpy(types),
        "attention_mask": torch.from_numpy(mask),
    }


def loss(output):
    # HF returns MaskedLMOutput
    return (output.logits**2).mean()

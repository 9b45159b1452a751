"""DistilBERT, HF transformers side: tiny random config, no download. Twin: distilbert_paddle.py.

PADIFF_BUG (this side only):
  pos_offset -> the position_ids buffer starts at 1 instead of 0 (off-by-one positions)
  act        -> layer 0's FFN activation is x*sigmoid(1.702x) ("quick_gelu") instead of erf GELU
"""
import os

import numpy as np
import torch
from transformers import DistilBertConfig, DistilBertModel
from transformers.activations import ACT2FN

# HF names: dim = hidden_size, hidden_dim = intermediate_size, n_layers, n_heads, activation,
# dropout = hidden_dropout_prob, attention_dropout = attention_probs_dropout_prob
CONFIG = dict(
    vocab_size=1000, dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=64,
    activation="gelu", dropout=0.0, attention_dropout=0.0, initializer_range=0.1,
    pad_token_id=0, sinusoidal_pos_embds=False,
)


def model():
    torch.manual_seed(0)
    m = DistilBertModel(DistilBertConfig(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "pos_offset":
        m.embeddings.position_ids += 1  # positions 1..L instead of 0..L-1
    elif bug == "act":
        m.transformer.layer[0].ffn.activation = ACT2FN["quick_gelu"]
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 12)).astype("int64")  # no pad id (0)
    mask = np.ones((2, 12), "int64")
    mask[1, 8:] = 0  # second sample padded after 8 tokens
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (), {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask)}


def loss(output):
    # HF returns BaseModelOutput; last_hidden_state ends in a LayerNorm: use half of the features
    return (output.last_hidden_state[..., :16] ** 2).mean()

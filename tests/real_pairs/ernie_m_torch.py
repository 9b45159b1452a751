"""ERNIE-M, HF transformers side: ErnieMModel (transformers.models.deprecated.ernie_m), tiny random
config, no download. Twin: ernie_m_paddle.py.

PADIFF_BUG (this side only):
  gelu_tanh -> layer 0's feed-forward activation is the tanh approximation of GELU instead of the
               exact erf GELU (precision-level)
"""
import os

import numpy as np
import torch
from transformers import ErnieMConfig, ErnieMModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=128, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, act_dropout=0.0, max_position_embeddings=64,
    initializer_range=0.1, pad_token_id=1, layer_norm_eps=1e-5,
)


def model():
    torch.manual_seed(0)
    m = ErnieMModel(ErnieMConfig(**CONFIG)).eval()
    if os.environ.get("PADIFF_BUG", "") == "gelu_tanh":
        m.encoder.layers[0].activation = torch.nn.GELU(approximate="tanh")
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(2, 1000, size=(2, 12)).astype("int64")  # no pad id (1), no 0
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample padded after 9 tokens
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (), {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask)}


def loss(output):
    # HF returns BaseModelOutputWithPoolingAndCrossAttentions
    seq, pooled = output.last_hidden_state, output.pooler_output
    # seq ends in a LayerNorm: the mean of ALL its squared features is ~constant (zero
    # gradient), so take half of the features
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()

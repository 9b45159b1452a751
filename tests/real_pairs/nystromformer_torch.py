"""Nystromformer, HF transformers side: tiny random config, no download.
Twin: nystromformer_paddle.py (see its docstring for the config).

PADIFF_BUG (this side only):
  landmarks -> layer 1's self-attention uses num_landmarks 3 (3 segments of 4 tokens) instead
               of the config's 4 (4 segments of 3 tokens): a config value ported wrongly into one
               module
"""
import os

import numpy as np
import torch
from transformers import NystromformerConfig, NystromformerModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, hidden_act="gelu_new", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=2,
    segment_means_seq_len=12, num_landmarks=4, conv_kernel_size=3, inv_coeff_init_option=False,
    initializer_range=0.1, layer_norm_eps=1e-5, pad_token_id=0,
)


def model():
    torch.manual_seed(0)
    m = NystromformerModel(NystromformerConfig(**CONFIG)).eval()
    if os.environ.get("PADIFF_BUG", "") == "landmarks":
        m.encoder.layer[1].attention.self.num_landmarks = 3
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 12)).astype("int64")  # no pad id (0)
    types_ = np.zeros((2, 12), "int64")
    types_[:, 6:] = 1
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample padded after 9 tokens
    return ids, types_, mask


def inputs():
    ids, types_, mask = _arrays()
    return (), {
        "input_ids": torch.from_numpy(ids),
        "token_type_ids": torch.from_numpy(types_),
        "attention_mask": torch.from_numpy(mask),
    }


def loss(output):
    # HF returns BaseModelOutputWithPastAndCrossAttentions
    h = output.last_hidden_state
    # ends in a LayerNorm: take half of the features
    return (h[..., :16] ** 2).mean()

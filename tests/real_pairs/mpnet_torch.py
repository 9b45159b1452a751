"""MPNet, HF transformers side: tiny random config, no download. Twin: mpnet_paddle.py.

PADIFF_BUG (this side only):
  act        -> layer 0 intermediate activation relu instead of gelu
  pos_offset -> embeddings count positions from 1 (padding_idx 0) instead of 2 (padding_idx 1)
"""
import os

import numpy as np
import torch
from transformers import MPNetConfig, MPNetModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, initializer_range=0.1,
    layer_norm_eps=1e-5, relative_attention_num_buckets=32, pad_token_id=1, bos_token_id=0,
    eos_token_id=2,
)


def model():
    torch.manual_seed(0)
    m = MPNetModel(MPNetConfig(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "act":
        m.encoder.layer[0].intermediate.intermediate_act_fn = torch.nn.ReLU()
    elif bug == "pos_offset":
        m.embeddings.padding_idx = 0
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(3, 1000, size=(2, 12)).astype("int64")  # no bos/pad/eos (0, 1, 2)
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample padded after 9 tokens
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (), {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask)}


def loss(output):
    # HF returns BaseModelOutputWithPooling
    seq, pooled = output.last_hidden_state, output.pooler_output
    # seq ends in a LayerNorm: take half of the features
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()

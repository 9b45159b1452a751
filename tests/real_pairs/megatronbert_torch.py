"""Megatron-BERT, HF transformers side: tiny random config, no download. Twin: megatronbert_paddle.py.

PADIFF_BUG (this side only):
  gelu_tanh -> layer 0's intermediate activation is the tanh approximation of GELU instead of
               the exact erf GELU (precision-level)
"""
import os

import numpy as np
import torch
from transformers import MegatronBertConfig, MegatronBertModel
from transformers.activations import GELUTanh

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=2,
    initializer_range=0.1, layer_norm_eps=1e-12, pad_token_id=0,
    position_embedding_type="absolute", use_cache=False,
)


def model():
    torch.manual_seed(0)
    m = MegatronBertModel(MegatronBertConfig(**CONFIG), add_pooling_layer=True).eval()
    if os.environ.get("PADIFF_BUG", "") == "gelu_tanh":
        m.encoder.layer[0].intermediate.intermediate_act_fn = GELUTanh()
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
    # HF returns BaseModelOutputWithPoolingAndCrossAttentions
    seq, pooled = output.last_hidden_state, output.pooler_output
    # seq ends in a LayerNorm (encoder.ln): take half of the features
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()

"""NeZha, HF transformers side (transformers.models.deprecated.nezha): tiny random config, no
download. Twin: nezha_paddle.py.

PADIFF_BUG (this side only):
  rel_clip -> layer 1's self-attention builds its relative-position encoding with
              max_relative_position 4 instead of 64 (distances clipped to +-4; a config value
              ported wrongly into one module)
  out_bias_dropped -> layer 0's attention output projection (attention.output.dense) is applied
                      without its bias (F.linear(x, weight): the port declared it bias=False;
                      the bias tensor still exists and is copied, it is just never added)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from transformers import NezhaConfig, NezhaModel
from transformers.models.deprecated.nezha.modeling_nezha import NezhaRelativePositionsEncoding

CONFIG = dict(
    vocab_size=1000, embedding_size=32, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=4, intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, max_relative_position=64,
    type_vocab_size=2, initializer_range=0.1, layer_norm_eps=1e-12, pad_token_id=0,
    use_cache=False,
)


def model():
    torch.manual_seed(0)
    m = NezhaModel(NezhaConfig(**CONFIG)).eval()
    if os.environ.get("PADIFF_BUG", "") == "rel_clip":
        sa = m.encoder.layer[1].attention.self
        sa.relative_positions_encoding = NezhaRelativePositionsEncoding(
            length=CONFIG["max_position_embeddings"], depth=sa.attention_head_size,
            max_relative_position=4)
    elif os.environ.get("PADIFF_BUG", "") == "out_bias_dropped":
        dense = m.encoder.layer[0].attention.output.dense
        dense.forward = lambda x: F.linear(x, dense.weight)  # BUG: bias never added
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
    # seq ends in a LayerNorm: take half of the features
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()

"""ALBERT, HF transformers side: tiny random config, no download. Twin: albert_paddle.py.

HF's AlbertConfig defaults to hidden_act="gelu_new", paddlenlp's to "gelu": pinned here.
PADIFF_BUG:
  act    -> relu instead of gelu in the shared layer's feed-forward (so in every repetition)
  ln_eps -> eps 1e-3 instead of 1e-12 in the embeddings LayerNorm (width embedding_size)
  mask_axis -> the shared layer's attention broadcasts the padding mask along the QUERY axis
               ([B, 1, S, 1]) instead of the key axis ([B, 1, 1, S]): padded keys stay visible and
               the padded queries' rows are masked out instead (so in every repetition)
"""
import os

import numpy as np
import torch
from transformers import AlbertConfig, AlbertModel

CONFIG = dict(
    vocab_size=1000, embedding_size=16, hidden_size=32, num_hidden_layers=2,
    num_hidden_groups=1, inner_group_num=1, num_attention_heads=4, intermediate_size=64,
    max_position_embeddings=64, type_vocab_size=2, hidden_act="gelu",
    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, layer_norm_eps=1e-12,
    initializer_range=0.1, pad_token_id=0,
)


def model():
    torch.manual_seed(0)
    m = AlbertModel(AlbertConfig(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    shared = m.encoder.albert_layer_groups[0].albert_layers[0]
    if bug == "act":
        shared.activation = torch.nn.ReLU()
    elif bug == "ln_eps":
        m.embeddings.LayerNorm.eps = 1e-3
    elif bug == "mask_axis":
        shared.attention.forward = _mask_on_query_axis(shared.attention)
    return m


def _mask_on_query_axis(att):
    """The shared attention's forward with the key-padding mask laid out on the query axis."""
    orig = att.forward

    def forward(hidden_states, attention_mask=None, head_mask=None, output_attentions=False):
        if attention_mask is not None:
            # [B, 1, 1 or S, S]: one key-padding row -> [B, 1, S, 1] (the porter's unsqueeze(-1))
            attention_mask = attention_mask[:, :, :1, :].transpose(-1, -2)
        return orig(hidden_states, attention_mask, head_mask, output_attentions)

    return forward


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
    # HF returns BaseModelOutputWithPooling
    seq, pooled = output.last_hidden_state, output.pooler_output
    # seq ends in a LayerNorm: the mean of ALL its squared features is ~constant (zero
    # gradient), so take half of the features
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()

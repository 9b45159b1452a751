"""MobileBERT, HF transformers side: tiny random config, no download. Twin: mobilebert_paddle.py.

PADIFF_BUG:
  trigram   -> the trigram input concatenates [previous, current, next] token embeddings instead
               of [next, current, previous] (embeddings.forward replaced)
  norm_type -> layer 0's attention output norm is a real LayerNorm (eps 1e-12) instead of NoNorm
               (a normalization_type mix-up); it keeps the weight/bias names
  bottleneck_swap -> layer 1's input bottleneck hands out its two projections the wrong way round:
               the shared query/key input comes from `bottleneck.input` and the attention-output
               residual from `bottleneck.attention` (Bottleneck.forward replaced)
"""
import os
import types

import numpy as np
import torch
from torch import nn
from transformers import MobileBertConfig, MobileBertModel

CONFIG = dict(
    vocab_size=1000, embedding_size=16, hidden_size=32, true_hidden_size=16,
    intra_bottleneck_size=16, num_hidden_layers=2, num_attention_heads=4, intermediate_size=32,
    hidden_act="relu", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
    max_position_embeddings=64, type_vocab_size=2, initializer_range=0.1, layer_norm_eps=1e-12,
    pad_token_id=0, trigram_input=True, use_bottleneck=True, use_bottleneck_attention=False,
    key_query_shared_bottleneck=True, num_feedforward_networks=2, normalization_type="no_norm",
    classifier_activation=True,
)


def _trigram_swapped_forward(self, input_ids=None, token_type_ids=None, position_ids=None, inputs_embeds=None):
    seq_length = input_ids.shape[1]
    position_ids = self.position_ids[:, :seq_length] if position_ids is None else position_ids
    if token_type_ids is None:
        token_type_ids = torch.zeros(input_ids.shape, dtype=torch.long)
    inputs_embeds = self.word_embeddings(input_ids)
    inputs_embeds = torch.cat(  # BUG: previous and next token slots swapped
        [
            nn.functional.pad(inputs_embeds[:, :-1], [0, 0, 1, 0, 0, 0], value=0.0),
            inputs_embeds,
            nn.functional.pad(inputs_embeds[:, 1:], [0, 0, 0, 1, 0, 0], value=0.0),
        ],
        dim=2,
    )
    inputs_embeds = self.embedding_transformation(inputs_embeds)
    embeddings = inputs_embeds + self.position_embeddings(position_ids) + self.token_type_embeddings(token_type_ids)
    embeddings = self.LayerNorm(embeddings)
    return self.dropout(embeddings)


def _bottleneck_swapped_forward(self, hidden_states):
    """Bottleneck.forward (key_query_shared_bottleneck, no bottleneck attention) with its outputs swapped."""
    bottlenecked_hidden_states = self.input(hidden_states)
    shared_attention_input = self.attention(hidden_states)
    # BUG: should be (shared, shared, hidden_states, bottlenecked)
    return (bottlenecked_hidden_states, bottlenecked_hidden_states, hidden_states, shared_attention_input)


def model():
    torch.manual_seed(0)
    m = MobileBertModel(MobileBertConfig(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "trigram":
        emb = m.embeddings
        emb.forward = types.MethodType(_trigram_swapped_forward, emb)
    elif bug == "norm_type":
        m.encoder.layer[0].attention.output.LayerNorm = nn.LayerNorm(CONFIG["true_hidden_size"], eps=1e-12)
    elif bug == "bottleneck_swap":
        bn = m.encoder.layer[1].bottleneck
        bn.forward = types.MethodType(_bottleneck_swapped_forward, bn)
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
    # HF returns BaseModelOutputWithPooling
    seq, pooled = output.last_hidden_state, output.pooler_output
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()

"""ALBERT, paddlenlp side: tiny random config, no download. Twin: albert_torch.py.

One layer group with one layer: the same weights run num_hidden_layers=2 times.
embedding_size (16) != hidden_size (32): encoder.embedding_hidden_mapping_in projects.
PADIFF_BUG (this side only; torch-side names are ignored here):
  paddle_token_type -> the embeddings forward leaves out the token-type embedding term
                       (word + position only), although token_type_ids are passed
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import AlbertConfig, AlbertModel

CONFIG = dict(
    vocab_size=1000, embedding_size=16, hidden_size=32, num_hidden_layers=2,
    num_hidden_groups=1, inner_group_num=1, num_attention_heads=4, intermediate_size=64,
    max_position_embeddings=64, type_vocab_size=2, hidden_act="gelu",
    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, layer_norm_eps=1e-12,
    initializer_range=0.1, pad_token_id=0,
)


def model():
    paddle.seed(0)
    m = AlbertModel(AlbertConfig(**CONFIG))
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_token_type":
        emb = m.embeddings
        emb.forward = _embeddings_without_token_type(emb)
    return m


def _embeddings_without_token_type(emb):
    """AlbertEmbeddings.forward as a porter wrote it: the token-type embedding is never added."""
    def forward(input_ids, token_type_ids=None, position_ids=None, inputs_embeds=None,
                past_key_values_length=0):
        seq_length = input_ids.shape[1]
        if position_ids is None:
            position_ids = emb.position_ids[:, past_key_values_length:seq_length + past_key_values_length]
        embeddings = emb.word_embeddings(input_ids)
        embeddings += emb.position_embeddings(position_ids)
        embeddings = emb.layer_norm(embeddings)
        return emb.dropout(embeddings)
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
        "input_ids": paddle.to_tensor(ids),
        "token_type_ids": paddle.to_tensor(types),
        "attention_mask": paddle.to_tensor(mask),
    }


def loss(output):
    # paddlenlp returns a tuple (sequence_output, pooled_output)
    seq, pooled = output[0], output[1]
    # seq ends in a LayerNorm: the mean of ALL its squared features is ~constant (zero
    # gradient), so take half of the features
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()

"""BERT, paddlenlp side: tiny random config, no download.

PADIFF_BUG=paddle_act plants a bug on this side (relu instead of gelu in
encoder layer 1's feed-forward).
PADIFF_BUG=paddle_kv_swap (this side): encoder layer 0's self-attention uses the key projection
as values and the value projection as keys (k and v swapped after compute_kv).
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddlenlp.transformers import BertConfig, BertModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, max_position_embeddings=64, type_vocab_size=2,
    hidden_act="gelu", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
    layer_norm_eps=1e-12, initializer_range=0.1, pad_token_id=0,
)


def model():
    paddle.seed(0)
    m = BertModel(BertConfig(**CONFIG))
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_act":
        m.encoder.layers[1].activation = F.relu
    elif os.environ.get("PADIFF_BUG", "") == "paddle_kv_swap":
        sa = m.encoder.layers[0].self_attn
        prepare = sa._prepare_qkv

        def _prepare_qkv(query, key, value, cache=None):
            q, k, v = prepare(query, key, value, cache)
            return q, v, k  # the bug: k and v returned in the wrong order

        sa._prepare_qkv = _prepare_qkv
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

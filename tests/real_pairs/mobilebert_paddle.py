"""MobileBERT, paddlenlp side: tiny random config, no download. Twin: mobilebert_torch.py.

Trigram input (embedding_size 16 -> 3*16 -> hidden 32), bottlenecks (intra_bottleneck_size 16,
shared key/query bottleneck), 2 stacked feed-forward networks per layer, NoNorm (x*w + b)
instead of LayerNorm, relu. Defaults that differ from HF and are pinned here:
classifier_activation (paddlenlp False, HF True: the pooler's dense+tanh).

PADIFF_BUG=paddle_act plants a bug on this side: gelu instead of relu in the first stacked
feed-forward network of layer 1 (`encoder.layers.1.ffn.0.intermediate.intermediate_act_fn`).
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import MobileBertConfig, MobileBertModel
from paddlenlp.transformers.activations import ACT2FN

CONFIG = dict(
    vocab_size=1000, embedding_size=16, hidden_size=32, true_hidden_size=16,
    intra_bottleneck_size=16, num_hidden_layers=2, num_attention_heads=4, intermediate_size=32,
    hidden_act="relu", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
    max_position_embeddings=64, type_vocab_size=2, initializer_range=0.1, layer_norm_eps=1e-12,
    pad_token_id=0, trigram_input=True, use_bottleneck=True, use_bottleneck_attention=False,
    key_query_shared_bottleneck=True, num_feedforward_networks=2, normalization_type="no_norm",
    classifier_activation=True,
)


def model():
    paddle.seed(0)
    m = MobileBertModel(MobileBertConfig(**CONFIG))
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_act":
        m.encoder.layers[1].ffn[0].intermediate.intermediate_act_fn = ACT2FN["gelu"]
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
    # paddlenlp returns a tuple (sequence_output, pooled_output); NoNorm output, no LayerNorm
    seq, pooled = output[0], output[1]
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()

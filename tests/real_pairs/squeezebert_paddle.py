"""SqueezeBERT, paddlenlp side: tiny random config, no download. Twin: squeezebert_torch.py.

Grouped 1x1 Conv1D projections (q/k/v groups 4, post-attention 1, intermediate 4, output 4);
the encoder runs in [N, C, W] layout.
PADIFF_BUG=paddle_act plants a bug on this side: relu instead of gelu in encoder layer 1's
intermediate ConvActivation (`encoder.layers.1.intermediate.act`).
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import SqueezeBertConfig, SqueezeBertModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, embedding_size=32, num_hidden_layers=2,
    num_attention_heads=4, intermediate_size=64, max_position_embeddings=64, type_vocab_size=2,
    hidden_act="gelu", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
    layer_norm_eps=1e-12, initializer_range=0.1, pad_token_id=0,
    q_groups=4, k_groups=4, v_groups=4, post_attention_groups=1, intermediate_groups=4,
    output_groups=4,
)


def model():
    paddle.seed(0)
    m = SqueezeBertModel(SqueezeBertConfig(**CONFIG))
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_act":
        m.encoder.layers[1].intermediate.act = paddle.nn.ReLU()
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
    # seq ends in a LayerNorm: take half of the features (see NOTES-encoders.md)
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()

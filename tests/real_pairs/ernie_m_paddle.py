"""ERNIE-M, paddlenlp side: ErnieMModel, tiny random config, no download.

Twin: ernie_m_torch.py (HF ErnieMModel, transformers.models.deprecated.ernie_m). paddlenlp builds
the encoder from paddle.nn.TransformerEncoderLayer with dim_feedforward = 4 * hidden_size (it
ignores intermediate_size) and LayerNorm eps 1e-5 everywhere; HF is configured to match
(intermediate_size=128, layer_norm_eps=1e-5). The 0/1 attention mask is passed on both sides
(paddle turns it into (1 - m) * -1e4, HF into (1 - m) * float32 min).
PADIFF_BUG (this side only):
  paddle_pre_ln -> layer 1 has normalize_before=True (pre-LayerNorm), a flag ported wrongly:
                   ERNIE-M is a post-LN model
Other ernie_m bugs are planted on the torch side.
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import ErnieMConfig, ErnieMModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=128, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=2,
    initializer_range=0.1, pad_token_id=1,
)


def model():
    paddle.seed(0)
    m = ErnieMModel(ErnieMConfig(**CONFIG))
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_pre_ln":
        m.encoder.layers[1].normalize_before = True
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(2, 1000, size=(2, 12)).astype("int64")  # no pad id (1), no 0
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample padded after 9 tokens
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (), {"input_ids": paddle.to_tensor(ids), "attention_mask": paddle.to_tensor(mask)}


def loss(output):
    # paddlenlp returns a tuple (sequence_output, pooled_output)
    seq, pooled = output[0], output[1]
    # seq ends in a LayerNorm: the mean of ALL its squared features is ~constant (zero
    # gradient), so take half of the features
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()

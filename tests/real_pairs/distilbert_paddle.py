"""DistilBERT, paddlenlp side: tiny random config, no download. Twin: distilbert_torch.py.

paddlenlp builds DistilBERT on paddle.nn.TransformerEncoder (post-norm, like HF).
PADIFF_BUG (this side only):
  paddle_ln_eps -> the embeddings LayerNorm uses eps 1e-3 instead of 1e-12
  paddle_prenorm -> encoder layer 1 runs pre-norm (normalize_before=True) instead of post-norm
  paddle_head_split -> layer 0's attention splits q/k/v into heads with the reshape in the wrong
                       order ([B, S, head_dim, heads] permuted to [B, heads, S, head_dim]): each
                       "head" gets every 4th feature instead of a contiguous slice
Other distilbert bugs are planted on the torch side.
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import DistilBertConfig, DistilBertModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, max_position_embeddings=64, hidden_act="gelu",
    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, initializer_range=0.1,
    pad_token_id=0,
)


def model():
    paddle.seed(0)
    m = DistilBertModel(DistilBertConfig(**CONFIG))
    m.eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "paddle_ln_eps":
        m.embeddings.layer_norm._epsilon = 1e-3
    elif bug == "paddle_prenorm":  # TransformerEncoderLayer reads this flag in forward
        m.encoder.layers[1].normalize_before = True
    elif bug == "paddle_head_split":
        att = m.encoder.layers[0].self_attn
        att._prepare_qkv = _prepare_qkv_strided_heads(att)
    return m


def _prepare_qkv_strided_heads(att):
    """MultiHeadAttention._prepare_qkv (no cache) with the head split reshaped in the wrong order."""

    def split(x):  # should be reshape [0, 0, heads, head_dim] + transpose [0, 2, 1, 3]
        x = paddle.reshape(x, [0, 0, att.head_dim, att.num_heads])
        return paddle.transpose(x, [0, 3, 1, 2])

    def _prepare_qkv(query, key, value, cache=None):
        return split(att.q_proj(query)), split(att.k_proj(key)), split(att.v_proj(value))

    return _prepare_qkv


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 12)).astype("int64")  # no pad id (0)
    mask = np.ones((2, 12), "int64")
    mask[1, 8:] = 0  # second sample padded after 8 tokens
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (), {"input_ids": paddle.to_tensor(ids), "attention_mask": paddle.to_tensor(mask)}


def loss(output):
    # paddlenlp DistilBertModel returns the bare encoder output (ends in a LayerNorm: use half
    # of the features, the mean of all squared features is ~constant)
    h = output if isinstance(output, paddle.Tensor) else output[0]
    return (h[..., :16] ** 2).mean()

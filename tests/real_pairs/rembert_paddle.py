"""RemBERT, paddlenlp side: tiny random config, no download. Twin: rembert_torch.py.

Two paddlenlp 2.8.1 quirks handled here:
- RemBertAttention.forward passes the whole `(context, attention_probs)` tuple that
  RemBertSelfAttention returns into RemBertSelfOutput's Linear, which fails on paddle 3.3.1
  ("linear(): argument 'X' must be Tensor, but got tuple"). `_attention_forward` below, bound to
  each layer's `attention`, passes `self_outputs[0]` (what HF does). Only that one line differs.
- RemBertModel does NOT convert a 0/1 attention_mask: a 2-D mask is only unsqueezed to
  [B, 1, 1, S] and ADDED to the scores (keep +1, pad +0). So the paddle spec passes the additive
  mask (1 - mask) * -1e4 as [B, 1, 1, S] float32, built from the same numpy 0/1 array that the
  torch spec passes as is. (Without any mask, paddlenlp masks ids == pad_token_id; HF masks nothing.)

PADIFF_BUG=paddle_scale plants a bug on this side: layer 1's self-attention
(`encoder.layer.1.attention.self`) skips the 1/sqrt(head_dim) score scale.
"""
import os
import types

import numpy as np
import paddle
import paddle.nn.functional as F
from paddlenlp.transformers import RemBertConfig, RemBertModel

CONFIG = dict(
    vocab_size=1000, input_embedding_size=16, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=4, intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=2,
    initializer_range=0.1, pad_token_id=0, layer_norm_eps=1e-12,
)


def _attention_forward(self, hidden_states, attention_mask=None):
    self_outputs = self.self(hidden_states, attention_mask)
    return self.output(self_outputs[0], hidden_states)  # paddlenlp passes the whole tuple


def _unscaled_self_attention(self, hidden_states, attention_mask=None):
    q = self.transpose_for_scores(self.query(hidden_states))
    k = self.transpose_for_scores(self.key(hidden_states))
    v = self.transpose_for_scores(self.value(hidden_states))
    scores = paddle.matmul(q, k.transpose((0, 1, 3, 2)))  # BUG: no / sqrt(head_dim)
    if attention_mask is not None:
        scores = scores + attention_mask.astype(scores.dtype)
    probs = self.dropout(F.softmax(scores, axis=-1))
    ctx = paddle.matmul(probs, v).transpose((0, 2, 1, 3))
    ctx = ctx.reshape(ctx.shape[:-2] + [self.all_head_size])
    return ctx, probs


def model():
    paddle.seed(0)
    m = RemBertModel(RemBertConfig(**CONFIG))
    m.eval()
    for layer in m.encoder.layer:
        layer.attention.forward = types.MethodType(_attention_forward, layer.attention)
    if os.environ.get("PADIFF_BUG", "") == "paddle_scale":
        sa = m.encoder.layer[1].attention.self
        sa.forward = types.MethodType(_unscaled_self_attention, sa)
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
    additive = ((1.0 - mask[:, None, None, :]) * -1e4).astype("float32")  # see module docstring
    return (), {
        "input_ids": paddle.to_tensor(ids),
        "token_type_ids": paddle.to_tensor(types_),
        "attention_mask": paddle.to_tensor(additive),
    }


def loss(output):
    # paddlenlp returns a tuple (sequence_output, pooled_output)
    seq, pooled = output[0], output[1]
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()

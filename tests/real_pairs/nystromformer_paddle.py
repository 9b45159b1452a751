"""Nystromformer, paddlenlp side: tiny random config, no download. Twin: nystromformer_torch.py.

Config: 12 tokens = segment_means_seq_len (the landmark reshape needs seq_len == this), 4
landmarks of 3 consecutive tokens each (so the Nystrom path runs, not the exact softmax path),
depthwise conv skip on the values (conv_kernel_size 3), gelu_new.

Notes:
- NystromformerModel converts the 0/1 attention_mask itself ((1 - m) * -1e4; HF finfo.min);
  the mask only enters kernel_3 (landmark queries against all keys).
- iterative_inv ("original" init) scales by 1 / max over the WHOLE batch and all heads, so the
  two samples interact (same on both sides).
- `_init_weights` draws only Linear/Embedding/Conv2D weights (biases 0, LayerNorms 1/0);
  `_perturb_1d` redraws the 1-D tensors so that every tensor matters.
- position_ids start at 2 (RoBERTa style) on both sides; paddle's buffer is persistent.

PADIFF_BUG (this side only):
  paddle_landmark_stride -> layer 0's self-attention forms its landmarks from strided tokens
                            (reshape [.., seq/L, L, d].mean(-3): tokens i, i+4, i+8) instead of
                            L segments of consecutive tokens (reshape [.., L, seq/L, d].mean(-2))
"""
import math
import os
import types

import numpy as np
import paddle
from paddle import nn
from paddlenlp.transformers import NystromformerConfig, NystromformerModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, hidden_act="gelu_new", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=2,
    segment_means_seq_len=12, num_landmarks=4, conv_kernel_size=3, inv_coeff_init_option=False,
    initializer_range=0.1, layer_norm_eps=1e-5, pad_token_id=0,
)


def _perturb_1d(m):
    """Norm scales start at 1, biases at 0: redraw 1-D tensors so that every tensor matters."""
    for name, p in m.named_parameters():
        if p.ndim == 1:
            base = 1.0 if name.endswith("LayerNorm.weight") else 0.0
            p.set_value((base + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))


def _self_attention_strided(self, hidden_states, attention_mask=None, output_attentions=False):
    q = self.transpose_for_scores(self.query(hidden_states))
    k = self.transpose_for_scores(self.key(hidden_states))
    v = self.transpose_for_scores(self.value(hidden_states))
    q = q / math.sqrt(math.sqrt(self.attention_head_size))
    k = k / math.sqrt(math.sqrt(self.attention_head_size))
    shape = [-1, self.num_attention_heads, self.seq_len // self.num_landmarks, self.num_landmarks,
             self.attention_head_size]
    q_landmarks = q.reshape(shape).mean(axis=-3)  # BUG: strided tokens, not consecutive segments
    k_landmarks = k.reshape(shape).mean(axis=-3)
    kernel_1 = nn.functional.softmax(paddle.matmul(q, k_landmarks, transpose_y=True), axis=-1)
    kernel_2 = nn.functional.softmax(paddle.matmul(q_landmarks, k_landmarks, transpose_y=True), axis=-1)
    scores = paddle.matmul(q_landmarks, k, transpose_y=True)
    if attention_mask is not None:
        scores = scores + attention_mask
    kernel_3 = nn.functional.softmax(scores, axis=-1)
    probs = paddle.matmul(kernel_1, self.iterative_inv(kernel_2))
    ctx = paddle.matmul(probs, paddle.matmul(kernel_3, v))
    ctx += self.conv(v)
    ctx = ctx.transpose([0, 2, 1, 3])
    ctx = ctx.reshape(ctx.shape[:-2] + [self.all_head_size])
    return (ctx, probs) if output_attentions else (ctx,)


def model():
    paddle.seed(0)
    m = NystromformerModel(NystromformerConfig(**CONFIG))
    _perturb_1d(m)
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_landmark_stride":
        sa = m.encoder.layer[0].attention.self
        object.__setattr__(sa, "forward", types.MethodType(_self_attention_strided, sa))
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
        "input_ids": paddle.to_tensor(ids),
        "token_type_ids": paddle.to_tensor(types_),
        "attention_mask": paddle.to_tensor(mask),
    }


def loss(output):
    # paddlenlp returns a tuple (sequence_output,) (return_dict False)
    h = output[0]
    # ends in a LayerNorm: take half of the features
    return (h[..., :16] ** 2).mean()

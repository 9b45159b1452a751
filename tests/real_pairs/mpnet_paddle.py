"""MPNet, paddlenlp side: tiny random config, no download. Twin: mpnet_torch.py.

PADIFF_BUG (this side only):
  paddle_scale  -> layer 1 attention scores not scaled by head_dim**-0.5
  paddle_bucket -> relative positions bucketed with the opposite sign (T5's convention,
                   bucket(k - q), instead of MPNet's bucket(-(k - q))): the left/right halves
                   of the relative-attention table are swapped, in every layer
  paddle_softmax_axis -> layer 0 attention normalizes its scores over the query axis (-2)
                         instead of the key axis (-1)
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import MPNetConfig, MPNetModel
from paddlenlp.transformers.mpnet.modeling import MPNetEncoder

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, initializer_range=0.1,
    layer_norm_eps=1e-5, relative_attention_num_buckets=32, pad_token_id=1, bos_token_id=0,
    eos_token_id=2,
)


def _perturb_1d(m):
    """Norm scales start at 1, biases at 0: redraw 1-D tensors so that every tensor matters."""
    for name, p in m.named_parameters():
        if p.ndim == 1:
            base = 1.0 if "layer_norm.weight" in name else 0.0
            p.set_value((base + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))


def _flipped_bucket(relative_position, num_buckets=32, max_distance=128):
    return MPNetEncoder.relative_position_bucket(-relative_position, num_buckets, max_distance)


def model():
    paddle.seed(0)
    m = MPNetModel(MPNetConfig(**CONFIG))
    _perturb_1d(m)
    m.eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "paddle_scale":
        m.encoder.layer[1].attention.scale = 1.0
    elif bug == "paddle_bucket":
        m.encoder.relative_position_bucket = _flipped_bucket
    elif bug == "paddle_softmax_axis":
        _softmax_over_queries(m.encoder.layer[0].attention)
    return m


def _softmax_over_queries(att):
    """MPNetAttention.forward with the softmax taken over axis -2 (queries) instead of -1 (keys)."""

    def forward(hidden_states, attention_mask=None, position_bias=None):
        q = att.transpose_for_scores(att.q(hidden_states))
        k = att.transpose_for_scores(att.k(hidden_states))
        v = att.transpose_for_scores(att.v(hidden_states))
        scores = paddle.matmul(q, k, transpose_y=True) * att.scale
        if position_bias is not None:
            scores += position_bias
        if attention_mask is not None:
            scores = scores + attention_mask
        probs = paddle.nn.functional.softmax(scores, axis=-2)  # should be axis=-1
        probs = att.attention_dropout(probs)
        context = paddle.matmul(probs, v).transpose(perm=(0, 2, 1, 3))
        context = context.reshape(context.shape[:-2] + [att.all_head_size])
        projected = att.output_dropout(att.o(context))
        return att.layer_norm(hidden_states + projected), scores

    att.forward = forward


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(3, 1000, size=(2, 12)).astype("int64")  # no bos/pad/eos (0, 1, 2)
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample padded after 9 tokens
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (), {"input_ids": paddle.to_tensor(ids), "attention_mask": paddle.to_tensor(mask)}


def loss(output):
    # paddlenlp returns a tuple (sequence_output, pooled_output)
    seq, pooled = output[0], output[1]
    # seq ends in a LayerNorm: take half of the features
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()

"""MobileBERT, paddlenlp side: tiny random config, no download. Twin: mobilebert_torch.py.

Trigram input (embedding_size 16 -> 3*16 -> hidden 32), bottlenecks (intra_bottleneck_size 16,
shared key/query bottleneck), 2 stacked feed-forward networks per layer, NoNorm (x*w + b)
instead of LayerNorm, relu. Defaults that differ from HF and are pinned here:
classifier_activation (paddlenlp False, HF True: the pooler's dense+tanh).

PADIFF_BUG (this side only):
  paddle_act        -> gelu instead of relu in the first stacked feed-forward network of layer 1
                       (`encoder.layers.1.ffn.0.intermediate.intermediate_act_fn`)
  paddle_head_merge -> layer 1's attention merges its heads without the transpose: context
                       [B, heads, S, d] reshaped straight to [B, S, heads*d]
"""
import math
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
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "paddle_act":
        m.encoder.layers[1].ffn[0].intermediate.intermediate_act_fn = ACT2FN["gelu"]
    elif bug == "paddle_head_merge":
        _merge_heads_untransposed(m.encoder.layers[1].attention)
    return m


def _merge_heads_untransposed(att):
    """MobileBertAttention.forward with the heads merged by a bare reshape (no transpose)."""

    def forward(query_tensor, key_tensor, value_tensor, hidden_states, attention_mask=None,
                head_mask=None, output_attentions=None):
        q = att.transpose_for_scores(att.query(query_tensor))
        k = att.transpose_for_scores(att.key(key_tensor))
        v = att.transpose_for_scores(att.value(value_tensor))
        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(att.attention_head_size)
        if attention_mask is not None:
            scores = scores + attention_mask
        probs = att.attention_dropout(paddle.nn.functional.softmax(scores, axis=-1))
        if head_mask is not None:
            probs = probs * head_mask
        context = paddle.matmul(probs, v)  # [B, heads, S, d]
        b, _, s, _ = context.shape
        context = context.reshape([b, s, att.all_head_size])  # transpose(0, 2, 1, 3) forgotten
        projected = att.dense(context)
        if not att.use_bottleneck:
            projected = att.output_dropout(projected)
        out = att.layer_norm(hidden_states + projected)
        return (out, probs) if output_attentions else (out,)

    att.forward = forward


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

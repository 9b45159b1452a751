"""Reformer, paddlenlp side: tiny random config, no download. Twin: reformer_torch.py.

ReformerModel with one local-attention layer and one LSH-attention layer (attn_layers
["local", "lsh"]), causal (is_decoder=True), axial position embeddings (4 x 4 = seq 16,
dims 16 + 16), reversible residual layers: the output is the two streams concatenated,
[B, S, 2*hidden], through the final LayerNorm.

TRAIN MODE with every dropout 0: the reversible layers' backward asserts model.training in both
libraries; in training the sequence length must equal prod(axial_pos_shape) (16) and be a
multiple of the chunk lengths (4).

LSH hashing draws random rotations with `paddle.randn` on every forward (torch.randn in HF;
hash_seed seeds each framework's own generator, so the two never match). `_fixed_hash_vectors`
below, bound to the LSH layer, runs the library's `_hash_vectors` with `paddle.randn` swapped for
a fixed numpy table (ROTATIONS, the same array the torch spec uses) for the duration of that call.

paddlenlp 2.8.1's ReverseSort.backward (the PyLayer that undoes the LSH bucket sort) returns
`sorted_bucket_idx` -- the integer indices -- as the gradient of `logits` instead of the sorted
`grad_logits`. The forward is unaffected but every gradient upstream of the LSH attention is wrong
(query_key.weight: paddle -1.1e3 vs torch 2.5e-3, which a float64 finite difference confirms).
`_FixedReverseSort` (installed into paddlenlp's reformer module by `model()`) returns grad_logits,
exactly like HF's ReverseSort; with it every parameter gradient agrees to ~1e-6 relative.
Without an attention_mask, paddlenlp's reversible backward also fails ("The number of outputs of
`PyLayer.backward` should be 1, but received 2"): the spec always passes one.

paddlenlp initialises its Linears with std axial_norm_std (HF: initializer_range); both are 0.1
here. paddlenlp ignores len(attn_layers) for the depth: num_hidden_layers=2 is set explicitly.

PADIFF_BUG=paddle_chunks plants a bug on this side: layer 0's local attention looks at 0
previous chunks instead of 1 (`encoder.layers.0.attention.self_attention.num_chunks_before = 0`).
"""
import os
import types

import numpy as np
import paddle
from paddlenlp.transformers import ReformerConfig, ReformerModel
from paddlenlp.transformers.reformer import modeling as _reformer_modeling

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_attention_heads=4, attention_head_size=8,
    attn_layers=["local", "lsh"], num_hidden_layers=2, axial_pos_embds=True,
    axial_pos_shape=[4, 4], axial_pos_embds_dim=[16, 16], max_position_embeddings=16,
    local_attn_chunk_length=4, lsh_attn_chunk_length=4, local_num_chunks_before=1,
    local_num_chunks_after=0, lsh_num_chunks_before=1, lsh_num_chunks_after=0, num_hashes=2,
    num_buckets=4, hash_seed=None, is_decoder=True, feed_forward_size=64, hidden_act="relu",
    hidden_dropout_prob=0.0, lsh_attention_probs_dropout_prob=0.0,
    local_attention_probs_dropout_prob=0.0, layer_norm_eps=1e-12, chunk_size_feed_forward=0,
    initializer_range=0.1, axial_norm_std=0.1, tie_word_embeddings=False, use_cache=False,
    pad_token_id=0,
)

# [heads, head_dim, num_hashes, num_buckets // 2]
ROTATIONS = np.random.default_rng(1).standard_normal((4, 8, 2, 2)).astype("float32")


def _fixed_hash_vectors(self, *args, **kwargs):
    real = paddle.randn

    def fixed(shape, dtype=None, name=None):
        assert tuple(shape) == ROTATIONS.shape, shape
        return paddle.to_tensor(ROTATIONS, dtype=dtype)

    paddle.randn = fixed
    try:
        return type(self)._hash_vectors(self, *args, **kwargs)
    finally:
        paddle.randn = real


class _FixedReverseSort(_reformer_modeling.ReverseSort):
    """paddlenlp's ReverseSort with its backward returning grad_logits (see the module docstring)."""

    @staticmethod
    def backward(ctx, grad_out_vectors, grad_logits):
        sorted_bucket_idx = ctx.sorted_bucket_idx
        raw_shape = grad_out_vectors.shape
        grad_out_vectors = grad_out_vectors.transpose(perm=[0, 1, 3, 2])
        expanded_sorted_bucket_idx = sorted_bucket_idx.unsqueeze(-2).expand_as(grad_out_vectors)
        grad_out_vectors = (
            paddle.index_sample(
                grad_out_vectors.reshape([-1, raw_shape[2]]),
                expanded_sorted_bucket_idx.reshape([-1, raw_shape[2]]),
            )
            .reshape(grad_out_vectors.shape)
            .transpose(perm=[0, 1, 3, 2])
        )
        grad_logits = paddle.index_sample(
            grad_logits.reshape([-1, raw_shape[2]]),
            sorted_bucket_idx.reshape([-1, raw_shape[2]]),
        ).reshape(raw_shape[:3])
        return grad_out_vectors, grad_logits, None, None  # paddlenlp returns sorted_bucket_idx here


def model():
    _reformer_modeling.ReverseSort = _FixedReverseSort  # used by LSHSelfAttention.forward
    paddle.seed(0)
    m = ReformerModel(ReformerConfig(**CONFIG))
    m.train()  # reversible layers; all dropout is 0
    lsh = m.encoder.layers[1].attention.self_attention
    lsh._hash_vectors = types.MethodType(_fixed_hash_vectors, lsh)
    if os.environ.get("PADIFF_BUG", "") == "paddle_chunks":
        m.encoder.layers[0].attention.self_attention.num_chunks_before = 0
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 16)).astype("int64")  # no pad id (0)
    mask = np.ones((2, 16), "int64")
    mask[1, 12:] = 0  # second sample padded after 12 tokens
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (), {
        "input_ids": paddle.to_tensor(ids),
        "attention_mask": paddle.to_tensor(mask),
        "use_cache": False,
    }


def loss(output):
    # paddlenlp returns a 1-tuple (sequence_output,), [B, S, 2*hidden] after a LayerNorm
    h = output[0]
    return (h[..., :16] ** 2).mean()

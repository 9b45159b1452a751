"""Reformer, HF transformers side: tiny random config, no download. Twin: reformer_paddle.py.

Train mode, every dropout 0 (see reformer_paddle.py). LSH rotations come from the fixed
ROTATIONS table (torch.randn swapped for the duration of the LSH layer's `_hash_vectors`).
Defaults that differ from paddlenlp and are pinned here: is_decoder (HF False, paddlenlp True),
num_hashes (1 / 4), num_buckets (None / 512), dropouts, vocab, the axial shapes.

PADIFF_BUG:
  act            -> layer 1's feed-forward activation is GELU instead of ReLU
                    (`encoder.layers.1.feed_forward.dense.act_fn`)
  lsh_self_mask  -> layer 1's LSH attention no longer penalises a token attending to itself:
                    its `self_mask_value_float32` buffer is 0 instead of -1e5
"""
import os
import types

import numpy as np
import torch
from transformers import ReformerConfig, ReformerModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_attention_heads=4, attention_head_size=8,
    attn_layers=["local", "lsh"], axial_pos_embds=True,
    axial_pos_shape=[4, 4], axial_pos_embds_dim=[16, 16], max_position_embeddings=16,
    local_attn_chunk_length=4, lsh_attn_chunk_length=4, local_num_chunks_before=1,
    local_num_chunks_after=0, lsh_num_chunks_before=1, lsh_num_chunks_after=0, num_hashes=2,
    num_buckets=4, hash_seed=None, is_decoder=True, feed_forward_size=64, hidden_act="relu",
    hidden_dropout_prob=0.0, lsh_attention_probs_dropout_prob=0.0,
    local_attention_probs_dropout_prob=0.0, layer_norm_eps=1e-12, chunk_size_feed_forward=0,
    initializer_range=0.1, axial_norm_std=0.1, tie_word_embeddings=False, use_cache=False,
    pad_token_id=0,
)

# [heads, head_dim, num_hashes, num_buckets // 2]; the same table as reformer_paddle.py
ROTATIONS = np.random.default_rng(1).standard_normal((4, 8, 2, 2)).astype("float32")


def _fixed_hash_vectors(self, *args, **kwargs):
    real = torch.randn

    def fixed(shape, device=None, dtype=None, **_):
        assert tuple(shape) == ROTATIONS.shape, shape
        return torch.from_numpy(ROTATIONS).to(device=device, dtype=dtype)

    torch.randn = fixed
    try:
        return type(self)._hash_vectors(self, *args, **kwargs)
    finally:
        torch.randn = real


def model():
    torch.manual_seed(0)
    m = ReformerModel(ReformerConfig(**CONFIG))
    m.train()  # reversible layers; all dropout is 0
    lsh = m.encoder.layers[1].attention.self_attention
    lsh._hash_vectors = types.MethodType(_fixed_hash_vectors, lsh)
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "act":
        m.encoder.layers[1].feed_forward.dense.act_fn = torch.nn.GELU()
    elif bug == "lsh_self_mask":
        with torch.no_grad():
            lsh.self_mask_value_float32.fill_(0.0)
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
        "input_ids": torch.from_numpy(ids),
        "attention_mask": torch.from_numpy(mask),
        "use_cache": False,
    }


def loss(output):
    # HF ReformerModelOutput; last_hidden_state [B, S, 2*hidden] after a LayerNorm
    h = output.last_hidden_state
    return (h[..., :16] ** 2).mean()

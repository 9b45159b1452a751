"""Megatron-BERT, HF transformers side: tiny random config, no download. Twin: megatronbert_paddle.py.

PADIFF_BUG (this side only):
  gelu_tanh -> layer 0's intermediate activation is the tanh approximation of GELU instead of
               the exact erf GELU (precision-level)
  qk_head_interleave -> layer 1's self-attention splits the query and key projections into heads
               in the wrong order (view(b, s, head_size, num_heads) then permute, so head h gets
               features h, h+H, h+2H, ... instead of the contiguous block h*D..(h+1)*D); the value
               projection and the context are split/merged correctly (inline in attention.self)
"""
import math
import os

import numpy as np
import torch
from transformers import MegatronBertConfig, MegatronBertModel
from transformers.activations import GELUTanh

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=2,
    initializer_range=0.1, layer_norm_eps=1e-12, pad_token_id=0,
    position_embedding_type="absolute", use_cache=False,
)


def model():
    torch.manual_seed(0)
    m = MegatronBertModel(MegatronBertConfig(**CONFIG), add_pooling_layer=True).eval()
    if os.environ.get("PADIFF_BUG", "") == "gelu_tanh":
        m.encoder.layer[0].intermediate.intermediate_act_fn = GELUTanh()
    elif os.environ.get("PADIFF_BUG", "") == "qk_head_interleave":
        sa = m.encoder.layer[1].attention.self
        sa.forward = _self_attention_qk_interleaved(sa)
    return m


def _self_attention_qk_interleaved(sa):
    """MegatronBertSelfAttention (absolute positions, no cache) with q/k heads split in the wrong order."""
    def forward(hidden_states, attention_mask=None, head_mask=None, encoder_hidden_states=None,
                past_key_values=None, output_attentions=False, cache_position=None, **kwargs):
        b, s, _ = hidden_states.shape
        h, d = sa.num_attention_heads, sa.attention_head_size

        def heads_wrong(x):  # BUG: [b, s, d, h] -> [b, h, s, d]
            return x.view(b, s, d, h).permute(0, 3, 1, 2)

        q, k = heads_wrong(sa.query(hidden_states)), heads_wrong(sa.key(hidden_states))
        v = sa.value(hidden_states).view(b, s, h, d).transpose(1, 2)
        scores = q @ k.transpose(-1, -2) / math.sqrt(d)
        if attention_mask is not None:
            scores = scores + attention_mask
        probs = sa.dropout(torch.softmax(scores, dim=-1))
        if head_mask is not None:
            probs = probs * head_mask
        ctx = (probs @ v).permute(0, 2, 1, 3).reshape(b, s, sa.all_head_size)
        return ctx, probs
    return forward


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
        "input_ids": torch.from_numpy(ids),
        "token_type_ids": torch.from_numpy(types_),
        "attention_mask": torch.from_numpy(mask),
    }


def loss(output):
    # HF returns BaseModelOutputWithPoolingAndCrossAttentions
    seq, pooled = output.last_hidden_state, output.pooler_output
    # seq ends in a LayerNorm (encoder.ln): take half of the features
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()

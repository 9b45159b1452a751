"""BERT, HF transformers side: tiny random config, no download.

Planted bugs (PADIFF_BUG): ln_eps, act, softmax_half -- see bert_truth.json.
(paddle_act and paddle_kv_swap are planted on the paddle side; this side stays clean for them.)
  softmax_half -> every layer's self-attention (attention.self) takes the softmax of its scores
                  in bfloat16 and casts the probabilities back to float32 (no float32 upcast)
"""
import math
import os

import numpy as np
import torch
from transformers import BertConfig, BertModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, max_position_embeddings=64, type_vocab_size=2,
    hidden_act="gelu", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
    layer_norm_eps=1e-12, initializer_range=0.1, pad_token_id=0,
)


def model():
    torch.manual_seed(0)
    m = BertModel(BertConfig(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "ln_eps":  # eps 1e-3 instead of 1e-12 in the embeddings LayerNorm
        m.embeddings.LayerNorm.eps = 1e-3
    elif bug == "act":  # relu instead of gelu in layer 0's intermediate
        m.encoder.layer[0].intermediate.intermediate_act_fn = torch.nn.ReLU()
    elif bug == "softmax_half":
        for layer in m.encoder.layer:
            layer.attention.self.forward = _self_attention_half_softmax(layer.attention.self)
    return m


def _self_attention_half_softmax(sa):
    """BertSelfAttention (eager, no cache) with the softmax computed in bfloat16."""
    def forward(hidden_states, attention_mask=None, head_mask=None, encoder_hidden_states=None,
                past_key_values=None, output_attentions=False, cache_position=None, **kwargs):
        b, n, _ = hidden_states.shape

        def heads(x):
            return x.view(b, n, sa.num_attention_heads, sa.attention_head_size).transpose(1, 2)

        q, k, v = heads(sa.query(hidden_states)), heads(sa.key(hidden_states)), heads(sa.value(hidden_states))
        scores = q @ k.transpose(-1, -2) / math.sqrt(sa.attention_head_size)
        if attention_mask is not None:
            if attention_mask.dtype == torch.bool:
                scores = scores.masked_fill(~attention_mask, torch.finfo(scores.dtype).min)
            else:
                scores = scores + attention_mask
        probs = torch.softmax(scores.to(torch.bfloat16), dim=-1).to(scores.dtype)  # the bug: no fp32 upcast
        ctx = (probs @ v).transpose(1, 2).reshape(b, n, sa.all_head_size)
        return ctx, None
    return forward


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
        "input_ids": torch.from_numpy(ids),
        "token_type_ids": torch.from_numpy(types),
        "attention_mask": torch.from_numpy(mask),
    }


def loss(output):
    # HF returns BaseModelOutputWithPoolingAndCrossAttentions
    seq, pooled = output.last_hidden_state, output.pooler_output
    # seq ends in a LayerNorm: the mean of ALL its squared features is ~constant (zero
    # gradient), so take half of the features
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()

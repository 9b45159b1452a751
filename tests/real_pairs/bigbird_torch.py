"""BigBird, HF transformers side: BigBirdModel, tiny random config, no download.

Twin: bigbird_paddle.py. Full attention on both sides (HF attention_type="original_full",
paddlenlp "default_attention"); no attention mask (the inputs hold no pad id, and paddlenlp
derives its mask from input_ids == pad_token_id).
PADIFF_BUG (this side only):
  softmax_half -> layer 0's self-attention (attention.self) takes the softmax of its scores in
                  float16 and casts the probabilities back to float32 (precision-level)
"""
import math
import os

import numpy as np
import torch
from transformers import BigBirdConfig, BigBirdModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=2,
    initializer_range=0.1, pad_token_id=0, layer_norm_eps=1e-12, attention_type="original_full",
    use_bias=True, rescale_embeddings=False, is_decoder=False, use_cache=False,
)


def model():
    torch.manual_seed(0)
    m = BigBirdModel(BigBirdConfig(**CONFIG)).eval()
    if os.environ.get("PADIFF_BUG", "") == "softmax_half":
        sa = m.encoder.layer[0].attention.self
        sa.forward = _half_softmax(sa)
    return m


def _half_softmax(sa):
    """BigBirdSelfAttention.forward (no cache, no cross-attention) with a float16 softmax."""

    def forward(hidden_states, attention_mask=None, head_mask=None, encoder_hidden_states=None,
                encoder_attention_mask=None, past_key_values=None, output_attentions=False,
                cache_position=None, **kwargs):
        b, n, _ = hidden_states.shape

        def heads(x):
            return x.view(b, n, sa.num_attention_heads, sa.attention_head_size).transpose(1, 2)

        q, k, v = heads(sa.query(hidden_states)), heads(sa.key(hidden_states)), heads(sa.value(hidden_states))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(sa.attention_head_size)
        if attention_mask is not None:
            scores = scores + attention_mask
        probs = torch.softmax(scores.to(torch.float16), dim=-1).to(scores.dtype)  # the bug
        probs = sa.dropout(probs)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).reshape(b, n, sa.all_head_size)
        return ctx, probs

    return forward


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 12)).astype("int64")  # no pad id (0): nothing is masked
    types = np.zeros((2, 12), "int64")
    types[:, 6:] = 1
    return ids, types


def inputs():
    ids, types = _arrays()
    return (), {"input_ids": torch.from_numpy(ids), "token_type_ids": torch.from_numpy(types)}


def loss(output):
    # HF returns BaseModelOutputWithPoolingAndCrossAttentions
    seq, pooled = output.last_hidden_state, output.pooler_output
    # seq ends in a LayerNorm: the mean of ALL its squared features is ~constant (zero
    # gradient), so take half of the features
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()

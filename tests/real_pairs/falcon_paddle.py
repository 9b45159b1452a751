"""Falcon (RefinedWeb), paddlenlp side: paddlenlp.transformers.RWModel, tiny random config, no download.

Twin: falcon_torch.py (HF FalconModel). Falcon-7B-style layout: rotary positions, no biases, one
fused query_key_value per layer with the per-head interleaved [q, k, v] layout, sequential
(not parallel) attention and MLP, full multi-head attention (multi_query=False).
The 0/1 attention mask is passed on both sides (paddle builds a bool causal|padding mask and
fills with float32 min; HF builds an additive float32-min mask).
PADIFF_BUG (this side only):
  paddle_rope_base -> layer 0's rotary embedding uses base 500000 instead of 10000 (a rope_theta
                      ported wrongly: RotaryEmbedding(head_dim) hard-codes base=10000 in
                      paddlenlp; the porter rebuilds it with another model's theta)
  paddle_gelu_tanh -> layer 1's MLP activation is the tanh approximation of GELU
                      (nn.GELU(approximate=True), i.e. gelu_new / gelu_pytorch_tanh) instead of the
                      exact erf GELU (precision-level; h.1.mlp.act replaced)
Other falcon bugs are planted on the torch side.
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import RWConfig, RWModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, n_layer=2, num_hidden_layers=2, n_head=4,
    layer_norm_epsilon=1e-5, initializer_range=0.1, hidden_dropout=0.0, attention_dropout=0.0,
    multi_query=False, bias=False, alibi=False, parallel_attn=False,
    apply_residual_connection_post_layernorm=False, use_cache=False,
)


def model():
    paddle.seed(0)
    m = RWModel(RWConfig(**CONFIG))
    m.eval()
    _prime_rotary_caches(m)
    if os.environ.get("PADIFF_BUG", "") == "paddle_rope_base":
        from paddlenlp.transformers.rw.modeling import RotaryEmbedding

        attn = m.h[0].self_attention
        attn.maybe_rotary = RotaryEmbedding(attn.head_dim, base=500000)
        _prime_rotary_caches(m)
    elif os.environ.get("PADIFF_BUG", "") == "paddle_gelu_tanh":
        m.h[1].mlp.act = paddle.nn.GELU(approximate=True)  # should be the exact (erf) GELU
    return m


def _prime_rotary_caches(m):
    """paddlenlp's RotaryEmbedding stores cos_cached / sin_cached as tensor attributes on first use,
    and paddle registers such attributes as buffers: the model's buffer set would change during the
    first forward. Fill the caches now (same values the forward computes for seq 12, float32)."""
    for layer in m.h:
        layer.self_attention.maybe_rotary.cos_sin(SEQ, paddle.float32)


SEQ = 12


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, SEQ)).astype("int64")
    mask = np.ones((2, SEQ), "int64")
    mask[1, 9:] = 0  # second sample padded (right) after 9 tokens
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (), {"input_ids": paddle.to_tensor(ids), "attention_mask": paddle.to_tensor(mask),
                "use_cache": False}


def loss(output):
    # paddlenlp returns BaseModelOutputWithPastAndCrossAttentions (or a tuple)
    seq = output[0]
    # seq ends in a LayerNorm (ln_f): the mean of ALL its squared features is ~constant (zero
    # gradient), so take half of the features
    return (seq[..., :16] ** 2).mean()

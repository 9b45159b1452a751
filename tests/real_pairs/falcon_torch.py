"""Falcon, HF transformers side: FalconModel, tiny random config, no download. Twin: falcon_paddle.py.

HF FalconConfig defaults differ from paddlenlp RWConfig: multi_query=True and parallel_attn=True
in HF, False in paddlenlp. Both pinned to False (falcon-7b-like sequential blocks, full MHA).
Eager attention.
PADIFF_BUG (this side only):
  qkv_layout -> layer 1's attention splits the fused query_key_value output as three blocks
                [q_all | k_all | v_all] instead of Falcon's per-head interleaved [q_h, k_h, v_h]
                layout (self_attention._split_heads replaced; the split runs inline in
                FalconAttention.forward)
  torch_residual_post_ln -> layer 0 takes both residuals from the LayerNorm outputs instead of the
                layer inputs (the apply_residual_connection_post_layernorm=True semantics of
                BLOOM / falcon-rw ported into a falcon-7b-style block; h.0.forward replaced, the
                residual adds are inline in FalconDecoderLayer.forward)
"""
import os

import numpy as np
import torch
from transformers import FalconConfig, FalconModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    layer_norm_epsilon=1e-5, initializer_range=0.1, hidden_dropout=0.0, attention_dropout=0.0,
    multi_query=False, new_decoder_architecture=False, parallel_attn=False, bias=False,
    alibi=False, rope_theta=10000.0, max_position_embeddings=64, activation="gelu",
    use_cache=False,
)


def model():
    torch.manual_seed(0)
    m = FalconModel(FalconConfig(**CONFIG, attn_implementation="eager")).eval()
    if os.environ.get("PADIFF_BUG", "") == "qkv_layout":
        attn = m.h[1].self_attention

        def _split_heads(fused_qkv):
            b, s, _ = fused_qkv.shape
            fused_qkv = fused_qkv.view(b, s, 3, attn.num_heads, attn.head_dim)  # should be (heads, 3, dim)
            return fused_qkv[:, :, 0], fused_qkv[:, :, 1], fused_qkv[:, :, 2]

        attn._split_heads = _split_heads
    elif os.environ.get("PADIFF_BUG", "") == "torch_residual_post_ln":
        m.h[0].forward = _residual_post_ln_forward(m.h[0])
    return m


def _residual_post_ln_forward(layer):
    """FalconDecoderLayer.forward (sequential attention, no parallel_attn) with the residuals taken
    from the LayerNorm outputs."""
    def forward(hidden_states, alibi=None, attention_mask=None, position_ids=None, layer_past=None,
                head_mask=None, use_cache=False, output_attentions=False, cache_position=None,
                position_embeddings=None, **kwargs):
        ln_out = layer.input_layernorm(hidden_states)
        attention_output, attn_weights = layer.self_attention(
            ln_out, layer_past=layer_past, attention_mask=attention_mask, position_ids=position_ids,
            alibi=alibi, head_mask=head_mask, use_cache=use_cache, output_attentions=output_attentions,
            cache_position=cache_position, position_embeddings=position_embeddings,
        )
        residual = ln_out  # the bug: should be hidden_states (the layer input)
        residual = attention_output + residual
        mlp_in = layer.post_attention_layernorm(residual)
        residual = mlp_in  # the bug again: should stay the attention residual sum
        return layer.mlp(mlp_in) + residual, attn_weights
    return forward


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 12)).astype("int64")
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample padded (right) after 9 tokens
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (), {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask),
                "use_cache": False}


def loss(output):
    # HF returns BaseModelOutputWithPastAndCrossAttentions
    seq = output.last_hidden_state
    # seq ends in a LayerNorm (ln_f): the mean of ALL its squared features is ~constant (zero
    # gradient), so take half of the features
    return (seq[..., :16] ** 2).mean()

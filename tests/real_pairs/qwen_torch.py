"""Qwen pair, torch side: HF transformers Qwen2Model (tiny random config, fp32, eager attention).

Twin of qwen_paddle.py (paddlenlp QWenModel, Qwen v1). Ground truth: qwen_truth.json.
HF intermediate_size 64 = paddlenlp intermediate_size 128 // 2. No sliding window.

PADIFF_BUG (this side only):
  softmax_half -> layer 1's attention computes its softmax in float16 (the float32 softmax
                  dtype of eager_attention_forward dropped, scores cast to half) and casts the
                  probabilities back to float32 (precision-level; inline in Qwen2Attention.forward)
  torch_rmsnorm_one_plus -> layer 1's input RMSNorm scales by (1 + weight) instead of weight (the
                  Gemma RMSNorm convention copied into a Qwen2 port; layers.1.input_layernorm.forward
                  replaced)
The paddle_* bugs are planted on the paddle side.
"""
import os

import numpy as np
import torch

VOCAB, HIDDEN, LAYERS, HEADS, FFN, SEQ_LENGTH = 1000, 32, 2, 4, 64, 2048


def _half_softmax_attention(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    """eager_attention_forward of Qwen2 (no GQA here) with the softmax computed in float16."""
    attn_weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        attn_weights = attn_weights + attention_mask[:, :, :, : key.shape[-2]]
    attn_weights = torch.nn.functional.softmax(attn_weights.to(torch.float16), dim=-1).to(query.dtype)
    attn_output = torch.matmul(attn_weights, value)
    return attn_output.transpose(1, 2).contiguous(), attn_weights


def _attention_forward_half_softmax(attn):
    from transformers.models.qwen2.modeling_qwen2 import apply_rotary_pos_emb

    def forward(hidden_states, position_embeddings, attention_mask, past_key_values=None, cache_position=None, **kwargs):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, attn.head_dim)
        q = attn.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        k = attn.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        v = attn.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        cos, sin = position_embeddings
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        out, w = _half_softmax_attention(attn, q, k, v, attention_mask, attn.scaling)
        out = out.reshape(*input_shape, -1).contiguous()
        return attn.o_proj(out), w
    return forward


def model():
    from transformers import Qwen2Config, Qwen2Model

    torch.manual_seed(0)
    cfg = Qwen2Config(
        vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=FFN, num_hidden_layers=LAYERS,
        num_attention_heads=HEADS, num_key_value_heads=HEADS, hidden_act="silu",
        max_position_embeddings=SEQ_LENGTH, rms_norm_eps=1e-6, rope_theta=10000.0,
        use_sliding_window=False, attention_dropout=0.0, use_cache=False, tie_word_embeddings=False,
        attn_implementation="eager",
    )
    m = Qwen2Model(cfg).eval()
    if os.environ.get("PADIFF_BUG", "") == "softmax_half":
        attn = m.layers[1].self_attn
        attn.forward = _attention_forward_half_softmax(attn)
    elif os.environ.get("PADIFF_BUG", "") == "torch_rmsnorm_one_plus":
        norm = m.layers[1].input_layernorm
        norm.forward = _one_plus_rmsnorm(norm)
    return m


def _one_plus_rmsnorm(norm):
    def forward(hidden_states):
        h = hidden_states.to(torch.float32)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + norm.variance_epsilon)
        return (1.0 + norm.weight) * h.to(hidden_states.dtype)  # the bug: should be norm.weight * h
    return forward


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(4, VOCAB, size=(2, 12)).astype("int64")  # pad id 0 kept out
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sequence right-padded after 9 tokens
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (), {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask)}


_W = np.random.default_rng(1).normal(size=(HIDDEN,)).astype("float32")


def loss(output):
    h = output.last_hidden_state if hasattr(output, "last_hidden_state") else output[0]
    # the output ends in an RMS norm (mean of squares ~ weight**2): weighted sum of the features
    return (h * torch.from_numpy(_W)).mean()

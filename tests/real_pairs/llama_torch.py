"""LLaMA pair, torch side: HF transformers LlamaForCausalLM (tiny random config, fp32, eager attention).

Twin of llama_paddle.py (paddlenlp LlamaForCausalLM). Ground truth: llama_truth.json.
PADIFF_BUG: rope_base -> rotary base (rope_theta) 500000 instead of 10000 (HF computes the table once, model.rotary_emb)
            rms_eps   -> RMSNorm eps 1e-5 (LLaMA-2) instead of 1e-6 (LLaMA-1) in every norm
            rms_half  -> layer 1's post_attention_layernorm computes in float16 (no float32 upcast
                         of the variance / normalisation) and casts the result back to float32
"""
import os

import torch
from _decoders_common import token_ids

VOCAB, HIDDEN, LAYERS, HEADS, FFN, MAX_POS = 1000, 64, 2, 4, 128, 64


def model():
    from transformers import LlamaConfig, LlamaForCausalLM

    bug = os.environ.get("PADIFF_BUG", "")
    if bug not in ("", "rope_base", "rms_eps", "rms_half", "paddle_rope_layer1", "paddle_residual_normed"):  # paddle_* are planted on the paddle side
        raise ValueError(f"unknown PADIFF_BUG={bug!r} for llama")
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=FFN, num_hidden_layers=LAYERS,
        num_attention_heads=HEADS, num_key_value_heads=HEADS, max_position_embeddings=MAX_POS,
        rms_norm_eps=1e-5 if bug == "rms_eps" else 1e-6,
        rope_theta=500000.0 if bug == "rope_base" else 10000.0,
        hidden_act="silu", attention_bias=False, mlp_bias=False, attention_dropout=0.0,
        tie_word_embeddings=False, use_cache=False, attn_implementation="eager",
    )
    m = LlamaForCausalLM(cfg).eval()
    if bug == "rms_half":
        norm = m.model.layers[1].post_attention_layernorm
        norm.forward = _rms_norm_half(norm)
    return m


def _rms_norm_half(norm, dtype=torch.float16):
    """LlamaRMSNorm.forward without the float32 upcast: everything runs in half precision."""
    def forward(hidden_states):
        input_dtype = hidden_states.dtype
        h = hidden_states.to(dtype)
        variance = h.pow(2).mean(-1, keepdim=True)
        h = h * torch.rsqrt(variance + norm.variance_epsilon)
        return (norm.weight.to(dtype) * h).to(input_dtype)
    return forward


def inputs():
    return (), {"input_ids": torch.from_numpy(token_ids(VOCAB))}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]
    return (logits**2).mean()

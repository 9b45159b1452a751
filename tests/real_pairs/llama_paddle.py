"""LLaMA pair, paddle side: paddlenlp LlamaForCausalLM (tiny random config, fp32, no downloads).

Twin of llama_torch.py (HF LlamaForCausalLM). Ground truth: llama_truth.json.
PADIFF_BUG: paddle_rope_layer1 -> layer 1's own rotary table uses base 500000 instead of 10000
            (paddlenlp keeps inv_freq/cos_cached/sin_cached per attention layer; HF has one table)
            paddle_residual_normed -> layer 1's MLP residual is taken AFTER post_attention_layernorm
                                      (h = norm(h); residual = h; h = residual + mlp(h)) instead of before it
Other llama bugs (rope_base, rms_eps, rms_half) are planted on the torch side.
"""
import os

import paddle
from _decoders_common import randomize_paddle, token_ids

VOCAB, HIDDEN, LAYERS, HEADS, FFN, MAX_POS = 1000, 64, 2, 4, 128, 64


def model():
    from paddlenlp.transformers import LlamaConfig, LlamaForCausalLM

    paddle.seed(0)
    cfg = LlamaConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=FFN, num_hidden_layers=LAYERS,
        num_attention_heads=HEADS, num_key_value_heads=HEADS, max_position_embeddings=MAX_POS, seq_length=MAX_POS,
        rms_norm_eps=1e-6, rope_theta=10000.0, tie_word_embeddings=False, use_cache=False, dtype="float32",
    )
    m = LlamaForCausalLM(cfg)
    if os.environ.get("PADIFF_BUG", "") == "paddle_residual_normed":
        layer = m.llama.layers[1]
        layer.forward = _decoder_layer_residual_after_norm(layer)
    if os.environ.get("PADIFF_BUG", "") == "paddle_rope_layer1":
        rot = m.llama.layers[1].self_attn.rotary_emb
        rot.base = 500000.0
        rot.inv_freq = 1.0 / (rot.base ** (paddle.arange(0, rot.dim, 2, dtype="float32") / rot.dim))
        rot._set_cos_sin_cache(seq_len=MAX_POS)  # rebuilds cos_cached / sin_cached from inv_freq
    # small embeddings (as in real LLaMA checkpoints) so that the RMSNorm eps matters in layer 0
    randomize_paddle(m, embed_std=0.02)
    m.eval()
    return m


def _decoder_layer_residual_after_norm(layer):
    """LlamaDecoderLayer.forward (no cache, no recompute) as a porter wrote it: the second residual
    is read after post_attention_layernorm, so the MLP branch is added to the normed hidden states."""
    def forward(hidden_states, position_ids=None, attention_mask=None, output_attentions=False,
                past_key_value=None, use_cache=False, alibi=None, npu_is_casual=False):
        residual = hidden_states
        hidden_states = layer.input_layernorm(hidden_states)
        outputs = layer.self_attn(hidden_states, position_ids, past_key_value, attention_mask,
                                  output_attentions, use_cache, alibi, npu_is_casual=npu_is_casual)
        hidden_states = outputs[0] if type(outputs) is tuple else outputs
        hidden_states = residual + hidden_states
        hidden_states = layer.post_attention_layernorm(hidden_states)
        residual = hidden_states  # BUG: should be taken before the norm
        hidden_states = layer.mlp(hidden_states)
        return residual + hidden_states
    return forward


def inputs():
    return (), {"input_ids": paddle.to_tensor(token_ids(VOCAB))}


def loss(output):
    logits = output if isinstance(output, paddle.Tensor) else output[0]
    return (logits**2).mean()

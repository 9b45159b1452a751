"""GPT pair, torch side: HF transformers GPT2LMHeadModel (tiny random config, fp32, eager attention).

Twin of gpt_paddle.py (paddlenlp GPTForCausalLM). Ground truth: gpt_truth.json.
PADIFF_BUG: act   -> layer 1 MLP uses sigmoid GELU ("quick_gelu") instead of tanh GELU ("gelu_new")
            scale -> layer 1 attention drops the 1/sqrt(head_dim) score scale
            mlp_residual -> layer 0 block drops the residual around its MLP (h = mlp(ln_2(h)))
paddle_gelu_erf is planted on the paddle side (this side stays clean for it).
"""
import os

import torch
from _decoders_common import token_ids

VOCAB, HIDDEN, LAYERS, HEADS, FFN, MAX_POS = 1000, 64, 2, 4, 128, 64


def model():
    from transformers import GPT2Config, GPT2LMHeadModel
    from transformers.activations import ACT2FN

    bug = os.environ.get("PADIFF_BUG", "")
    torch.manual_seed(0)
    cfg = GPT2Config(
        vocab_size=VOCAB, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, n_inner=FFN, n_positions=MAX_POS,
        activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
        layer_norm_epsilon=1e-5, use_cache=False, attn_implementation="eager",
    )
    m = GPT2LMHeadModel(cfg)
    if bug == "act":
        # sigmoid GELU x*sigmoid(1.702x); paddle uses tanh GELU. (Exact erf GELU instead of tanh
        # changes the logits by only ~1e-4 relative here: too close to noise for a fixture.)
        m.transformer.h[1].mlp.act = ACT2FN["quick_gelu"]
    elif bug == "scale":
        m.transformer.h[1].attn.scale_attn_weights = False  # read by eager_attention_forward
    elif bug == "mlp_residual":
        block = m.transformer.h[0]
        block.forward = _block_without_mlp_residual(block)
    elif bug and bug != "paddle_gelu_erf":  # paddle_gelu_erf: paddle side
        raise ValueError(f"unknown PADIFF_BUG={bug!r} for gpt")
    return m.eval()


def _block_without_mlp_residual(block):
    """GPT2Block.forward (self-attention only, no cache) as ported with the MLP residual left out."""
    def forward(hidden_states, past_key_values=None, cache_position=None, attention_mask=None,
                head_mask=None, encoder_hidden_states=None, encoder_attention_mask=None,
                use_cache=False, output_attentions=False, **kwargs):
        residual = hidden_states
        attn_output, _ = block.attn(
            block.ln_1(hidden_states), past_key_values=past_key_values, cache_position=cache_position,
            attention_mask=attention_mask, head_mask=head_mask, use_cache=use_cache,
            output_attentions=output_attentions, **kwargs,
        )
        hidden_states = attn_output + residual
        hidden_states = block.mlp(block.ln_2(hidden_states))  # the bug: `residual + ...` dropped
        return (hidden_states,)
    return forward


def inputs():
    return (), {"input_ids": torch.from_numpy(token_ids(VOCAB))}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]
    return (logits**2).mean()

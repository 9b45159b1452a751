"""GPT pair, torch side: HF transformers GPT2LMHeadModel (tiny random config, fp32, eager attention).

Twin of gpt_paddle.py (paddlenlp GPTForCausalLM). Ground truth: gpt_truth.json.
PADIFF_BUG: act   -> layer 1 MLP uses sigmoid GELU ("quick_gelu") instead of tanh GELU ("gelu_new")
            scale -> layer 1 attention drops the 1/sqrt(head_dim) score scale
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
    elif bug and bug != "paddle_gelu_erf":  # paddle_gelu_erf: paddle side
        raise ValueError(f"unknown PADIFF_BUG={bug!r} for gpt")
    return m.eval()


def inputs():
    return (), {"input_ids": torch.from_numpy(token_ids(VOCAB))}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]
    return (logits**2).mean()

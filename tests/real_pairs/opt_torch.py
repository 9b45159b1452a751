"""OPT pair, torch side: HF transformers OPTForCausalLM (tiny random config, fp32, eager attention).

Twin of opt_paddle.py (paddlenlp OPTForCausalLM). Ground truth: opt_truth.json.
PADIFF_BUG: norm_order -> layer 1 is post-LN (do_layer_norm_before=False, like OPT-350m) instead of pre-LN
            scale      -> layer 1 attention drops the 1/sqrt(head_dim) query scale
            no_causal  -> layer 1 self-attention ignores the causal attention mask it is given
                          (every position attends to the future tokens too)
paddle_fc1_bias is planted on the paddle side (this side stays clean for it).
"""
import os

import torch
from _decoders_common import token_ids

VOCAB, HIDDEN, LAYERS, HEADS, FFN, MAX_POS = 1000, 64, 2, 4, 128, 64


def model():
    from transformers import OPTConfig, OPTForCausalLM

    bug = os.environ.get("PADIFF_BUG", "")
    torch.manual_seed(0)
    cfg = OPTConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
        ffn_dim=FFN, word_embed_proj_dim=HIDDEN, max_position_embeddings=MAX_POS, activation_function="relu",
        do_layer_norm_before=True, dropout=0.0, attention_dropout=0.0, layerdrop=0.0,
        tie_word_embeddings=False,  # paddlenlp's OPT lm_head has its own weight
        use_cache=False, attn_implementation="eager",
    )
    m = OPTForCausalLM(cfg)
    if bug == "norm_order":
        m.model.decoder.layers[1].do_layer_norm_before = False
    elif bug == "scale":
        m.model.decoder.layers[1].self_attn.scaling = 1.0
    elif bug == "no_causal":
        attn = m.model.decoder.layers[1].self_attn
        attn_forward = attn.forward

        def forward(*args, **kwargs):
            kwargs["attention_mask"] = None  # the bug: the causal mask is dropped
            return attn_forward(*args, **kwargs)

        attn.forward = forward
    elif bug and bug != "paddle_fc1_bias":  # paddle_fc1_bias: paddle side
        raise ValueError(f"unknown PADIFF_BUG={bug!r} for opt")
    return m.eval()


def inputs():
    return (), {"input_ids": torch.from_numpy(token_ids(VOCAB))}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]
    return (logits**2).mean()

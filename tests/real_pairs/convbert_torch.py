"""ConvBERT masked LM, HF transformers side: tiny random config, no download. Twin: convbert_paddle.py.

PADIFF_BUG (this side only):
  concat_order -> layer 1's mixed attention joins [conv_out, context] per head instead of
                  [context, conv_out] (torch.cat in the wrong order)
  gen_act      -> generator head activation SiLU (x*sigmoid(x)) instead of erf GELU
  mask_sign    -> layer 1's self-attention adds the extended attention mask with the wrong
                  sign (padded keys get +large instead of -large)
"""
import os

import numpy as np
import torch
from transformers import ConvBertConfig, ConvBertForMaskedLM
from transformers.activations import ACT2FN

CONFIG = dict(
    vocab_size=1000, embedding_size=16, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=4, intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=2,
    initializer_range=0.1, layer_norm_eps=1e-12, pad_token_id=0, conv_kernel_size=3,
    head_ratio=2, num_groups=2, tie_word_embeddings=True,
)


def model():
    torch.manual_seed(0)
    m = ConvBertForMaskedLM(ConvBertConfig(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "concat_order":
        att = m.convbert.encoder.layer[1].attention.self
        orig = att.forward

        def forward(*args, **kwargs):
            out = orig(*args, **kwargs)
            ctx = out[0]  # [B, S, heads * 2 * head] = per head [context | conv_out]
            b, s, _ = ctx.shape
            h, d = att.num_attention_heads, att.attention_head_size
            ctx = ctx.view(b, s, h, 2, d).flip(3).reshape(b, s, h * 2 * d)  # -> [conv_out | context]
            return (ctx,) + tuple(out[1:])

        att.forward = forward
    elif bug == "gen_act":
        m.generator_predictions.activation = ACT2FN["silu"]
    elif bug == "mask_sign":
        att = m.convbert.encoder.layer[1].attention.self
        orig_att = att.forward

        def att_forward(hidden_states, attention_mask=None, *args, **kwargs):
            if attention_mask is not None:
                attention_mask = -attention_mask  # sign flipped: padded keys now win the softmax
            return orig_att(hidden_states, attention_mask, *args, **kwargs)

        att.forward = att_forward
    return m


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
    # HF returns MaskedLMOutput
    return (output.logits**2).mean()

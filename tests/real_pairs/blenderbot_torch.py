"""Blenderbot (pre-norm encoder-decoder), HF transformers side: tiny random config, no download.
Twin: blenderbot_paddle.py.

HF ties shared / encoder.embed_tokens / decoder.embed_tokens to one module that scales by
sqrt(d_model) inside its forward (paddlenlp scales inline in the encoder/decoder forward).
scale_embedding defaults differ (HF False, paddlenlp True): pinned to True.

PADIFF_BUG (this side only):
  attn_scale -> decoder layer 1 self-attention scores scaled by d_model**-0.5 instead of
                head_dim**-0.5 (self_attn.scaling)
  torch_cross_attn_self -> decoder layer 0's cross-attention projects its keys and values from the
                decoder's own (normed) hidden states instead of the encoder output (hidden_states
                passed where key_value_states belongs; encoder_attn.forward wrapped)
Other blenderbot bugs are planted on the paddle side.
"""
import os

import numpy as np
import torch
from transformers import BlenderbotConfig, BlenderbotModel

CONFIG = dict(
    vocab_size=1000, d_model=32, encoder_layers=2, decoder_layers=2,
    encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
    decoder_ffn_dim=64, max_position_embeddings=64, activation_function="gelu",
    dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, init_std=0.1,
    pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1,
    scale_embedding=True, use_cache=False, attn_implementation="eager",
)


def model():
    torch.manual_seed(0)
    m = BlenderbotModel(BlenderbotConfig(**CONFIG)).eval()
    if os.environ.get("PADIFF_BUG", "") == "attn_scale":
        m.decoder.layers[1].self_attn.scaling = CONFIG["d_model"] ** -0.5
    elif os.environ.get("PADIFF_BUG", "") == "torch_cross_attn_self":
        attn = m.decoder.layers[0].encoder_attn
        attn.forward = _cross_attn_reads_self(attn)
    return m


def _cross_attn_reads_self(attn):
    orig = attn.forward

    def forward(hidden_states, key_value_states=None, *args, **kwargs):
        return orig(hidden_states, hidden_states, *args, **kwargs)  # should be key_value_states
    return forward


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(3, 1000, size=(2, 12)).astype("int64")  # no pad/bos/eos (0, 1, 2)
    dec = rng.integers(3, 1000, size=(2, 10)).astype("int64")
    dec[:, 0] = 1  # decoder_start_token_id
    return ids, dec


def inputs():
    ids, dec = _arrays()
    return (), {
        "input_ids": torch.from_numpy(ids),
        "decoder_input_ids": torch.from_numpy(dec),
        "use_cache": False,
    }


def loss(output):
    # HF returns Seq2SeqModelOutput; last_hidden_state is the decoder output
    dec = output.last_hidden_state
    # ends in a LayerNorm: the mean of ALL squared features is ~constant, take half of them
    return (dec[..., :16] ** 2).mean()

"""BART (encoder-decoder), HF transformers side: tiny random config, no download.

Twin: bart_paddle.py. PADIFF_BUG:
  scale       -> decoder layer 1 self-attention without the head_dim**-0.5 scaling
  embed_scale -> encoder token embeddings multiplied by sqrt(d_model) (scale_embedding
                 applied on one side only)
  dec_pos_table -> the decoder's learned positions are looked up in the ENCODER's position
                 table (encoder.embed_positions.weight) instead of the decoder's own, as if the
                 two tables were shared like the token embeddings
paddle_softmax_axis is planted on the paddle side (this side stays clean for it).
"""
import os

import numpy as np
import torch
from transformers import BartConfig, BartModel

CONFIG = dict(
    vocab_size=1000, d_model=32, encoder_layers=2, decoder_layers=2,
    encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
    decoder_ffn_dim=64, max_position_embeddings=64, activation_function="gelu",
    dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, init_std=0.1,
    pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
    scale_embedding=False,
)


def model():
    torch.manual_seed(0)
    m = BartModel(BartConfig(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "scale":
        m.decoder.layers[1].self_attn.scaling = 1.0
    elif bug == "embed_scale":
        m.encoder.embed_tokens.embed_scale = CONFIG["d_model"] ** 0.5
    elif bug == "dec_pos_table":
        enc_pos, dec_pos = m.encoder.embed_positions, m.decoder.embed_positions
        # same offset-2 lookup, but with the encoder's weight (enc_pos itself is not called)
        dec_pos.forward = lambda *a, **k: type(enc_pos).forward(enc_pos, *a, **k)
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(3, 1000, size=(2, 12)).astype("int64")  # no bos/pad/eos (0, 1, 2)
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second source padded after 9 tokens
    dec = rng.integers(3, 1000, size=(2, 10)).astype("int64")
    dec[:, 0] = 2  # decoder_start_token_id
    return ids, mask, dec


def inputs():
    ids, mask, dec = _arrays()
    return (), {
        "input_ids": torch.from_numpy(ids),
        "attention_mask": torch.from_numpy(mask),
        "decoder_input_ids": torch.from_numpy(dec),
    }


def loss(output):
    # HF returns Seq2SeqModelOutput
    dec, enc = output.last_hidden_state, output.encoder_last_hidden_state
    # both end in a LayerNorm: the mean of ALL squared features is ~constant (zero
    # gradient), so take half of the features
    return (dec[..., :16] ** 2).mean() + (enc[..., :16] ** 2).mean()

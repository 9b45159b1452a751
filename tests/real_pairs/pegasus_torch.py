"""Pegasus (encoder-decoder, pre-norm), HF transformers side: tiny random config, no download.
Twin: pegasus_paddle.py.

PADIFF_BUG (this side only):
  cross_scale -> decoder layer 0 cross-attention without the head_dim**-0.5 scaling
  act         -> encoder layer 1 feed-forward activation gelu instead of relu
  pos_offset  -> decoder sinusoidal positions start at 1 instead of 0 (positions 1..10 looked up)
"""
import os

import numpy as np
import torch
from transformers import PegasusConfig, PegasusModel

CONFIG = dict(
    vocab_size=1000, d_model=32, encoder_layers=2, decoder_layers=2,
    encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
    decoder_ffn_dim=64, max_position_embeddings=64, activation_function="relu",
    dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, init_std=0.1,
    pad_token_id=0, eos_token_id=1, bos_token_id=2, decoder_start_token_id=2,
    scale_embedding=True, use_cache=False,
)


def model():
    torch.manual_seed(0)
    m = PegasusModel(PegasusConfig(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "cross_scale":
        m.decoder.layers[0].encoder_attn.scaling = 1.0
    elif bug == "act":
        m.encoder.layers[1].activation_fn = torch.nn.GELU()
    elif bug == "pos_offset":
        pos = m.decoder.embed_positions

        def pos_forward(input_ids_shape, past_key_values_length=0, position_ids=None):
            if position_ids is None:
                seq_len = input_ids_shape[1]
                position_ids = torch.arange(past_key_values_length, past_key_values_length + seq_len)
            # off by one: positions counted from 1
            return torch.nn.Embedding.forward(pos, position_ids + 1)

        pos.forward = pos_forward
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(3, 1000, size=(2, 12)).astype("int64")  # no pad/eos/bos (0, 1, 2)
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second source padded after 9 tokens
    dec = rng.integers(3, 1000, size=(2, 10)).astype("int64")
    # decoder start 2 (bos), not Pegasus's usual 0 (= pad): HF's `shared` has padding_idx 0 and
    # gives row 0 no gradient, paddle's has none (the forward agrees either way)
    dec[:, 0] = 2
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
    # both end in a LayerNorm: take half of the features
    return (dec[..., :16] ** 2).mean() + (enc[..., :16] ** 2).mean()

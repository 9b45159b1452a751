"""T5 (encoder-decoder), HF transformers side: tiny random config, no download. Twin: t5_paddle.py.

PADIFF_BUG (this side only):
  act          -> decoder block 0 feed-forward uses gelu instead of relu
  max_distance -> encoder block 0 self-attention buckets with relative_attention_max_distance
                  16 instead of 128 (paddlenlp always uses 128)
(paddle_bidir, paddle_ln_mean and paddle_ffn_reuse are planted on the paddle side.)
"""
import os

import numpy as np
import torch
from transformers import T5Config, T5Model

CONFIG = dict(
    vocab_size=1000, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
    num_heads=4, relative_attention_num_buckets=32, relative_attention_max_distance=128,
    dropout_rate=0.0, layer_norm_epsilon=1e-6, initializer_factor=1.0,
    feed_forward_proj="relu", use_cache=False, pad_token_id=0, eos_token_id=1,
    decoder_start_token_id=0, tie_word_embeddings=True,
)


def model():
    torch.manual_seed(0)
    m = T5Model(T5Config(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "act":
        m.decoder.block[0].layer[2].DenseReluDense.act = torch.nn.GELU()
    elif bug == "max_distance":
        m.encoder.block[0].layer[0].SelfAttention.relative_attention_max_distance = 16
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(2, 1000, size=(2, 12)).astype("int64")  # no pad/eos (0, 1)
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second source padded after 9 tokens
    dec = rng.integers(2, 1000, size=(2, 10)).astype("int64")
    dec[:, 0] = 0  # decoder_start_token_id (= pad id in T5)
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
    # both end in an RMS norm: take half of the features
    return (dec[..., :16] ** 2).mean() + (enc[..., :16] ** 2).mean()

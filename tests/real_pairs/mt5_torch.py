"""mT5 (encoder-decoder with LM head, gated-GELU feed-forward), HF transformers side: tiny
random config, no download. Twin: mt5_paddle.py.

PADIFF_BUG (this side only):
  act          -> decoder block 0 gated feed-forward uses relu instead of gelu_new
  dec_bidir    -> decoder block 0 self-attention buckets relative positions bidirectionally
                  (is_decoder=False); the bias is reused by decoder block 1
"""
import os

import numpy as np
import torch
from transformers import MT5Config, MT5ForConditionalGeneration

CONFIG = dict(
    vocab_size=1000, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
    num_heads=4, relative_attention_num_buckets=32, relative_attention_max_distance=128,
    dropout_rate=0.0, layer_norm_epsilon=1e-6, initializer_factor=1.0,
    feed_forward_proj="gated-gelu", use_cache=False, pad_token_id=0, eos_token_id=1,
    bos_token_id=0, decoder_start_token_id=0, tie_word_embeddings=False,
)


def model():
    torch.manual_seed(0)
    m = MT5ForConditionalGeneration(MT5Config(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "act":
        m.decoder.block[0].layer[2].DenseReluDense.act = torch.nn.ReLU()
    elif bug == "dec_bidir":
        m.decoder.block[0].layer[0].SelfAttention.is_decoder = False
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(2, 1000, size=(2, 12)).astype("int64")  # no pad/eos (0, 1)
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second source padded after 9 tokens
    dec = rng.integers(2, 1000, size=(2, 10)).astype("int64")
    dec[:, 0] = 0  # decoder_start_token_id (= pad id)
    return ids, mask, dec


def inputs():
    ids, mask, dec = _arrays()
    return (), {
        "input_ids": torch.from_numpy(ids),
        "attention_mask": torch.from_numpy(mask),
        "decoder_input_ids": torch.from_numpy(dec),
    }


def loss(output):
    # HF returns Seq2SeqLMOutput
    logits, enc = output.logits, output.encoder_last_hidden_state
    # the encoder output ends in an RMS norm: take half of its features
    return (logits**2).mean() + (enc[..., :16] ** 2).mean()

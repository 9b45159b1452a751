"""ERNIE-Code pair, torch side: HF transformers MT5Model (the bare encoder-decoder; tiny random
config, fp32, eager attention, no download). Twin: ernie_code_paddle.py (paddlenlp ErnieCodeModel,
an mT5 architecture). The compared output is the decoder's last hidden state.

PADIFF_BUG (this side only):
  cross_mask -> decoder block 0 cross-attention ignores the source padding mask (mask=None):
                its mask-only position bias is then all zeros and is reused by decoder block 1,
                so the decoder attends to the padded source positions
The paddle_* bugs are planted on the paddle side.
"""
import os

import numpy as np
import torch

CONFIG = dict(
    vocab_size=1000, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
    num_heads=4, relative_attention_num_buckets=32, relative_attention_max_distance=128,
    dropout_rate=0.0, layer_norm_epsilon=1e-6, initializer_factor=1.0,
    feed_forward_proj="gated-gelu", use_cache=False, pad_token_id=0, eos_token_id=1,
    bos_token_id=0, decoder_start_token_id=0, tie_word_embeddings=False,
)


def _without_mask(attn):
    orig = attn.forward

    def forward(*args, **kwargs):
        kwargs["mask"] = None
        return orig(*args, **kwargs)
    return forward


def model():
    from transformers import MT5Config, MT5Model

    torch.manual_seed(0)
    m = MT5Model(MT5Config(**CONFIG, attn_implementation="eager")).eval()
    if os.environ.get("PADIFF_BUG", "") == "cross_mask":
        attn = m.decoder.block[0].layer[1].EncDecAttention
        attn.forward = _without_mask(attn)
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


_W = np.random.default_rng(1).normal(size=(CONFIG["d_model"],)).astype("float32")


def loss(output):
    # HF returns Seq2SeqModelOutput
    dec, enc = output.last_hidden_state, output.encoder_last_hidden_state
    # both end in an RMS norm (mean of squares ~ weight**2): weighted sums of the features
    w = torch.from_numpy(_W)
    return (dec * w).mean() + (enc * w).mean()

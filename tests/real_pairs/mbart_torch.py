"""mBART (pre-norm encoder-decoder + LM head), HF transformers side: tiny random config.

Twin: mbart_paddle.py. paddlenlp's lm_head_weight is its own parameter (not tied to the
shared embedding), so tie_word_embeddings=False here.
PADIFF_BUG (this side only):
  final_ln        -> the encoder's final LayerNorm is skipped (its forward returns the input): the
                     BART-style port that forgets mBART's extra layer_norm
  dec_embed_scale -> decoder token embeddings not multiplied by sqrt(d_model)
                     (embed_scale 1.0 on the decoder only)
"""
import os

import numpy as np
import torch
from transformers import MBartConfig, MBartForConditionalGeneration

CONFIG = dict(
    vocab_size=1000, d_model=32, encoder_layers=2, decoder_layers=2,
    encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
    decoder_ffn_dim=64, max_position_embeddings=64, activation_function="gelu",
    dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, init_std=0.1,
    pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=3,
    scale_embedding=True, use_cache=False, tie_word_embeddings=False,
)


def model():
    torch.manual_seed(0)
    m = MBartForConditionalGeneration(MBartConfig(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "final_ln":
        m.model.encoder.layer_norm.forward = lambda x: x  # module kept (weights, hooks), not applied
    elif bug == "dec_embed_scale":
        m.model.decoder.embed_tokens.embed_scale = 1.0
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(4, 1000, size=(2, 12)).astype("int64")  # no bos/pad/eos/start (0..3)
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second source padded after 9 tokens
    dec = rng.integers(4, 1000, size=(2, 10)).astype("int64")
    dec[:, 0] = 3  # decoder start token
    return ids, mask, dec


def inputs():
    ids, mask, dec = _arrays()
    return (), {
        "input_ids": torch.from_numpy(ids),
        "attention_mask": torch.from_numpy(mask),
        "decoder_input_ids": torch.from_numpy(dec),
        "use_cache": False,
    }


def loss(output):
    # HF returns Seq2SeqLMOutput
    return (output.logits**2).mean()

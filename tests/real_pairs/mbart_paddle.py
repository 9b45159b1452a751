"""mBART (pre-norm encoder-decoder + LM head), paddlenlp side: tiny random config, no download.

Twin: mbart_torch.py (HF MBartForConditionalGeneration). paddlenlp builds mBART from
paddle.nn.TransformerEncoder/Decoder with normalize_before=True and a final LayerNorm.
PADIFF_BUG (this side only):
  paddle_pos_offset -> the decoder's learned positions use offset 0 instead of 2
                       (MBartLearnedPositionalEmbedding.offset)
Other mbart bugs are planted on the torch side.
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import MBartConfig, MBartForConditionalGeneration

CONFIG = dict(
    vocab_size=1000, d_model=32, encoder_layers=2, decoder_layers=2,
    encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
    decoder_ffn_dim=64, max_position_embeddings=64, activation_function="gelu",
    dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, init_std=0.1,
    pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=3,
    scale_embedding=True, use_cache=False,
)


def model():
    paddle.seed(0)
    m = MBartForConditionalGeneration(MBartConfig(**CONFIG))
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_pos_offset":
        m.mbart.decoder.decoder_embed_positions.offset = 0
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
        "input_ids": paddle.to_tensor(ids),
        "attention_mask": paddle.to_tensor(mask),
        "decoder_input_ids": paddle.to_tensor(dec),
        "use_cache": False,
    }


def loss(output):
    # paddlenlp MBartForConditionalGeneration (return_dict False, no labels) returns the bare logits
    logits = output if isinstance(output, paddle.Tensor) else output[0]
    return (logits**2).mean()

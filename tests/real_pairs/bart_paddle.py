"""BART (encoder-decoder), paddlenlp side: tiny random config, no download. Twin: bart_torch.py.

paddlenlp builds BART from paddle.nn.TransformerEncoder/DecoderLayer (post-norm).
"""
import numpy as np
import paddle
from paddlenlp.transformers import BartConfig, BartModel

CONFIG = dict(
    vocab_size=1000, d_model=32, encoder_layers=2, decoder_layers=2,
    encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
    decoder_ffn_dim=64, max_position_embeddings=64, activation_function="gelu",
    dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, init_std=0.1,
    pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
    scale_embedding=False,
)


def model():
    paddle.seed(0)
    m = BartModel(BartConfig(**CONFIG))
    m.eval()
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
        "input_ids": paddle.to_tensor(ids),
        "attention_mask": paddle.to_tensor(mask),
        "decoder_input_ids": paddle.to_tensor(dec),
    }


def loss(output):
    # paddlenlp returns a tuple (decoder_output, encoder_output)
    dec, enc = output[0], output[1]
    # both end in a LayerNorm: the mean of ALL squared features is ~constant (zero
    # gradient), so take half of the features
    return (dec[..., :16] ** 2).mean() + (enc[..., :16] ** 2).mean()

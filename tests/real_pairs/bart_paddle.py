"""BART (encoder-decoder), paddlenlp side: tiny random config, no download. Twin: bart_torch.py.

paddlenlp builds BART from paddle.nn.TransformerEncoder/DecoderLayer (post-norm).
PADIFF_BUG (this side only; the torch-side names are ignored here):
  paddle_softmax_axis -> encoder layer 0's self-attention takes the softmax of its scores over
                         the query axis (axis=-2) instead of the key axis (-1)
"""
import os

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
    if os.environ.get("PADIFF_BUG", "") == "paddle_softmax_axis":
        sa = m.encoder.encoder.layers[0].self_attn
        sa.forward = _self_attn_forward(sa, softmax_axis=-2)  # should be -1 (over the keys)
    return m


def _self_attn_forward(sa, scale=None, softmax_axis=-1):
    """paddle.nn.MultiHeadAttention.forward (no cache, no attention weights) as re-typed by a porter."""
    import paddle.nn.functional as F
    from paddle.nn.layer.transformer import _convert_attention_mask

    def forward(query, key=None, value=None, attn_mask=None, cache=None):
        assert cache is None
        key = query if key is None else key
        value = query if value is None else value
        q, k, v = sa._prepare_qkv(query, key, value, None)
        s = sa.head_dim**-0.5 if scale is None else scale
        product = paddle.matmul(x=q * s, y=k, transpose_y=True)
        if attn_mask is not None:
            product = product + _convert_attention_mask(attn_mask, product.dtype)
        weights = F.softmax(product, axis=softmax_axis)
        out = paddle.matmul(weights, v).transpose([0, 2, 1, 3])
        out = out.reshape([0, 0, out.shape[2] * out.shape[3]])
        return sa.out_proj(out)
    return forward


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

"""T5 (encoder-decoder), paddlenlp side: tiny random config, no download. Twin: t5_torch.py.

PADIFF_BUG (this side only):
  paddle_bidir   -> encoder block 0 self-attention computes its relative-position buckets as
                    a decoder would (unidirectional: is_decoder=True); the bias it makes is
                    reused by every encoder block
  paddle_ln_mean -> decoder block 1's self-attention pre-norm subtracts the mean (a plain
                    LayerNorm without bias instead of T5's RMS norm)
  paddle_ffn_reuse -> encoder block 1's feed-forward (layer[1].DenseReluDense) calls encoder
                    block 0's DenseReluDense: the wrong layer's weights (wi/wo of block 0)
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import T5Config, T5Model

CONFIG = dict(
    vocab_size=1000, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
    num_heads=4, relative_attention_num_buckets=32,
    relative_attention_max_distance=128,  # paddlenlp ignores it (hard-coded 128)
    dropout_rate=0.0, layer_norm_epsilon=1e-6, initializer_factor=1.0,
    feed_forward_proj="relu", use_cache=False, pad_token_id=0, eos_token_id=1,
    decoder_start_token_id=0, tie_word_embeddings=True,
)


def _perturb_norms(m):
    """T5 norms start at 1: draw them as 1 + N(0, 0.1) so that a swapped norm weight shows."""
    for _name, p in m.named_parameters():
        if p.ndim == 1:
            p.set_value((1.0 + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))


def _ln_with_mean(layer):
    def forward(hidden_states):
        h = hidden_states - hidden_states.mean(axis=-1, keepdim=True)
        var = paddle.pow(h, 2).mean(axis=-1, keepdim=True)
        return layer.weight * (h * paddle.rsqrt(var + layer.variance_epsilon))
    return forward


def model():
    paddle.seed(0)
    m = T5Model(T5Config(**CONFIG))
    _perturb_norms(m)
    m.eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "paddle_bidir":
        m.encoder.block[0].layer[0].SelfAttention.is_decoder = True
    elif bug == "paddle_ln_mean":
        ln = m.decoder.block[1].layer[0].layer_norm
        ln.forward = _ln_with_mean(ln)
    elif bug == "paddle_ffn_reuse":
        ffn0 = m.encoder.block[0].layer[1].DenseReluDense
        ffn1 = m.encoder.block[1].layer[1].DenseReluDense
        ffn1.forward = lambda hidden_states: ffn0(hidden_states)  # noqa: PLW0108 -- block 0's wi/wo, not its own
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
        "input_ids": paddle.to_tensor(ids),
        "attention_mask": paddle.to_tensor(mask),
        "decoder_input_ids": paddle.to_tensor(dec),
    }


def loss(output):
    # paddlenlp (return_dict False, use_cache False) returns (decoder_output, encoder_output)
    dec, enc = output[0], output[1]
    # both end in an RMS norm: take half of the features
    return (dec[..., :16] ** 2).mean() + (enc[..., :16] ** 2).mean()

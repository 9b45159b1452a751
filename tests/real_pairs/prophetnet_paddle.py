"""ProphetNet (encoder-decoder with n-gram main/predict streams), paddlenlp side: tiny random
config, no download. Twin: prophetnet_torch.py (HF ProphetNetModel).

paddlenlp's decoder builds its causal masks and relative-position buckets lazily in the first
forward and keeps them as attributes, which paddle registers as buffers (decoder._causal_mask,
_predict_causal_mask, _main_relative_buckets, _predict_relative_buckets): derived, not weights.
model() runs one warm-up forward so that they exist from the start.
Batch 1 only: paddlenlp 2.8.1's ProphetNet is wrong for batch > 1 (see _arrays). The HF side
fixes an HF predict-stream bug (see prophetnet_torch.py).

PADIFF_BUG (this side only):
  paddle_rel_heads -> decoder layer 1 main-stream relative position embeddings: the output of
                      relative_pos_embeddings [B, T, buckets*heads] is split as
                      [B, T, heads, buckets] instead of [B, T, buckets, heads] (a transposed
                      head layout in ProphetNetNgramSelfAttention.get_main_relative_pos_embeddings)
Other prophetnet bugs are planted on the torch side.
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import ProphetNetConfig, ProphetNetModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_encoder_layers=2, num_decoder_layers=2,
    num_encoder_attention_heads=4, num_decoder_attention_heads=4, encoder_ffn_dim=64,
    decoder_ffn_dim=64, max_position_embeddings=64, activation_function="gelu",
    dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, init_std=0.1,
    ngram=2, num_buckets=32, relative_max_distance=128, eps=0.0,
    pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1,
    add_cross_attention=True,
)


def _perturb_1d(m):
    """Norm scales start at 1, biases at 0: redraw 1-D tensors so that every tensor matters."""
    for name, p in m.named_parameters():
        if p.ndim == 1:
            base = 1.0 if ("norm" in name and name.endswith("weight")) else 0.0
            p.set_value((base + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))


def _main_rel_pos_heads_swapped(attn):
    """paddlenlp get_main_relative_pos_embeddings (bucket path given), except that the projected
    relative embeddings are split [B, T, heads, buckets] instead of [B, T, buckets, heads]."""

    def get_main_relative_pos_embeddings(hidden_states, attn_weights, position_ids, main_relative_position_buckets):
        rel_pos_embeddings = attn.relative_pos_embeddings(hidden_states)  # [B,T,Buckets*head]
        rel_pos_embeddings = paddle.transpose(
            paddle.reshape(rel_pos_embeddings, (rel_pos_embeddings.shape[:2] + [attn.num_attn_heads, attn.num_buckets])),
            (0, 2, 1, 3),
        )  # BUG: [B,head,T,Buckets] from a heads-major split
        rel_pos_embeddings = rel_pos_embeddings.reshape(attn_weights.shape[:2] + [-1])  # [B*head,T,Buckets]
        main_relative_position_buckets = paddle.cast(
            paddle.reshape(
                paddle.tile(main_relative_position_buckets, repeat_times=[1, attn.num_attn_heads, 1]),
                (-1, main_relative_position_buckets.shape[-1]),
            ),
            dtype=paddle.int64,
        )
        rel_pos_embeddings = paddle.reshape(rel_pos_embeddings, (-1, rel_pos_embeddings.shape[-1]))
        index = paddle.tile(main_relative_position_buckets.unsqueeze(2), repeat_times=[1, 1, 2])
        index[:, :, 0] = paddle.tile(paddle.arange(0, index.shape[0]).unsqueeze(1), repeat_times=[1, index.shape[1]])
        return paddle.reshape(paddle.gather_nd(rel_pos_embeddings, index=index), (attn_weights.shape[:2] + [-1]))

    return get_main_relative_pos_embeddings


def model():
    paddle.seed(0)
    m = ProphetNetModel(ProphetNetConfig(**CONFIG))
    _perturb_1d(m)
    m.eval()
    # build the decoder's lazy mask / bucket buffers now (one forward on the spec inputs), so that
    # the model's tensor set is complete before anything reads it
    with paddle.no_grad():
        m(**inputs()[1])
    if os.environ.get("PADIFF_BUG", "") == "paddle_rel_heads":
        attn = m.decoder.layers[1].self_attn
        object.__setattr__(attn, "get_main_relative_pos_embeddings", _main_rel_pos_heads_swapped(attn))
    return m


def _arrays():
    # batch 1: paddlenlp 2.8.1's ProphetNet is wrong for batch > 1 (see the notes): it tiles the
    # encoder / cross-attention padding mask head-major ([H*B, 1, S]) onto batch-major scores
    # ([B*H, T, S]), and reshapes the predict-stream hidden states [ngram*B, T, C] as if they
    # were [ngram, T, B, C] before the relative-position projection
    rng = np.random.default_rng(0)
    ids = rng.integers(3, 1000, size=(1, 12)).astype("int64")  # no pad/bos/eos (0, 1, 2)
    mask = np.ones((1, 12), "float32")
    mask[0, 9:] = 0  # the source is padded after 9 tokens (ids there are not the pad id)
    dec = rng.integers(3, 1000, size=(1, 10)).astype("int64")
    dec[:, 0] = 1  # decoder_start_token_id
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
    # paddlenlp (use_cache False) returns (main stream, predict stream, encoder output)
    main, ngram = output[0], output[1]
    return (main**2).mean() + (ngram**2).mean()

"""ProphetNet (encoder-decoder with n-gram main/predict streams), HF transformers side: tiny
random config, no download. Twin: prophetnet_paddle.py.

HF 4.57 predict-stream bug, fixed in this spec: ProphetNetNgramSelfAttention.
get_predict_relative_pos_embeddings permutes the projected relative embeddings
[B, ngram, T, buckets, heads] with (0, 2, 1, 4, 3), i.e. to [B, T, ngram, heads, buckets], and
then gathers them row by row against bucket rows ordered [ngram, B, heads, T] and views the
result as [B, ngram, heads, T, S]: the query at position t gets the relative-position bias
projected from another position's hidden state. The main stream is unaffected. The consistent
order (the one paddlenlp's time-major port of the original code has, correct at batch 1) is
[.., heads, T, buckets], permute (0, 1, 4, 2, 3). model() binds `_predict_rel_pos_fixed` (the library method with that one
permute changed) to every decoder layer's self_attn: without it the predict stream differs
from paddlenlp by 0.70 (max abs) while the main stream agrees (9.5e-7); with it both agree.

PADIFF_BUG (this side only):
  cross_mask -> decoder layer 0 cross-attention ignores the encoder padding mask (its
                attention_mask argument is dropped), so the decoder attends to padded source
                positions
Other prophetnet bugs are planted on the paddle side.
"""
import os
import types

import numpy as np
import torch
from transformers import ProphetNetConfig, ProphetNetModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_encoder_layers=2, num_decoder_layers=2,
    num_encoder_attention_heads=4, num_decoder_attention_heads=4, encoder_ffn_dim=64,
    decoder_ffn_dim=64, max_position_embeddings=64, activation_function="gelu",
    dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, init_std=0.1,
    ngram=2, num_buckets=32, relative_max_distance=128, eps=0.0,
    pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1,
    add_cross_attention=True, use_cache=False,
)


def _predict_rel_pos_fixed(self, hidden_states, attn_weights, position_ids, predict_relative_position_buckets):
    """transformers 4.57 get_predict_relative_pos_embeddings with the permute fixed (see above);
    the spec always passes the decoder's precomputed buckets (no cache)."""
    batch_size, sequence_length = hidden_states.shape[0:2]
    assert predict_relative_position_buckets is not None
    # [batch_size, ngram, sequence_length, hidden_size]
    hidden_states = hidden_states.transpose(1, 2)
    rel_pos_embeddings = self.relative_pos_embeddings(hidden_states)
    # [batch_size, ngram, sequence_length, num_buckets, num_heads]
    rel_pos_embeddings = rel_pos_embeddings.view(hidden_states.shape[:-1] + (self.num_buckets, self.num_attn_heads))
    rel_pos_embeddings = rel_pos_embeddings.permute(0, 1, 4, 2, 3)  # FIX: HF has (0, 2, 1, 4, 3)
    rel_pos_embeddings = rel_pos_embeddings.reshape(-1, self.num_buckets)
    predict_relative_position_buckets = predict_relative_position_buckets.unsqueeze(0)
    predict_relative_position_buckets = predict_relative_position_buckets.repeat(self.ngram, 1, self.num_attn_heads, 1)
    predict_relative_position_buckets = predict_relative_position_buckets.view(
        -1, predict_relative_position_buckets.size(-1)
    ).long()
    predict_relative_pos_embeddings = torch.gather(rel_pos_embeddings, dim=1, index=predict_relative_position_buckets)
    return predict_relative_pos_embeddings.view(batch_size, self.ngram, self.num_attn_heads, sequence_length, -1)


def model():
    torch.manual_seed(0)
    m = ProphetNetModel(ProphetNetConfig(**CONFIG)).eval()
    for layer in m.decoder.layers:
        layer.self_attn.get_predict_relative_pos_embeddings = types.MethodType(_predict_rel_pos_fixed, layer.self_attn)
    if os.environ.get("PADIFF_BUG", "") == "cross_mask":
        ca = m.decoder.layers[0].cross_attn
        orig = ca.forward

        def forward(*args, **kwargs):
            kwargs["attention_mask"] = None  # padding mask not passed on
            return orig(*args, **kwargs)

        ca.forward = forward
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
        "input_ids": torch.from_numpy(ids),
        "attention_mask": torch.from_numpy(mask),
        "decoder_input_ids": torch.from_numpy(dec),
        "use_cache": False,
    }


def loss(output):
    # HF returns ProphetNetSeq2SeqModelOutput
    main, ngram = output.last_hidden_state, output.last_hidden_state_ngram
    return (main**2).mean() + (ngram**2).mean()

"""ERNIE-Code pair, paddle side: paddlenlp ErnieCodeModel (the bare encoder-decoder; tiny random
config, fp32, no downloads). Twin: ernie_code_torch.py (HF transformers MT5Model).

ERNIE-Code is an mT5 architecture (T5 v1.1 blocks: RMS "layer norm" without bias, no attention
scaling, one relative position bias table in block 0 of each stack shared by the later blocks,
gated-GELU (tanh) feed-forward, untied vocabulary). The compared output is the decoder's last
hidden state given input_ids and decoder_input_ids.

PADIFF_BUG (this side only):
  paddle_attn_scale -> encoder block 1 self-attention divides q.k by sqrt(d_kv) (the usual
                       Transformer scale, which T5/mT5 fold into the init and never apply);
                       inline in ErnieCodeAttention.forward
Other ernie_code bugs (cross_mask) are planted on the torch side.
"""
import math
import os

import numpy as np
import paddle

CONFIG = dict(
    vocab_size=1000, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
    num_heads=4, relative_attention_num_buckets=32, relative_attention_max_distance=128,
    dropout_rate=0.0, layer_norm_epsilon=1e-6, initializer_factor=1.0,
    feed_forward_proj="gated-gelu", use_cache=False, pad_token_id=0, eos_token_id=1,
    bos_token_id=0, decoder_start_token_id=0, tie_word_embeddings=False,
)


def _perturb_norms(m):
    """T5 norms start at 1: draw them as 1 + N(0, 0.1) so that every norm weight matters."""
    for _name, p in m.named_parameters():
        if p.ndim == 1:
            p.set_value((1.0 + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))


def _scaled_attention_forward(attn):
    """ErnieCodeAttention.forward (self-attention, no cache) with q scaled by 1/sqrt(d_kv)."""
    import paddle.nn.functional as F

    def forward(hidden_states, mask=None, key_value_states=None, position_bias=None, cache=None,
                query_length=None, use_cache=False, output_attentions=False):
        b = hidden_states.shape[0]

        def shape(s):
            return s.reshape([b, -1, attn.n_heads, attn.key_value_proj_dim]).transpose([0, 2, 1, 3])

        q = shape(attn.q(hidden_states))
        k = shape(attn.k(hidden_states))
        v = shape(attn.v(hidden_states))
        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(attn.key_value_proj_dim)
        if position_bias is None:
            n = hidden_states.shape[1]
            if attn.has_relative_attention_bias:
                position_bias = attn.compute_bias(n, n)
            else:
                position_bias = paddle.zeros([1, attn.n_heads, n, n], dtype=scores.dtype)
            if mask is not None:
                position_bias = position_bias + mask
        scores += position_bias
        w = F.softmax(scores.astype(paddle.float32), axis=-1).astype(scores.dtype)
        out = paddle.matmul(w, v).transpose([0, 2, 1, 3]).reshape([b, -1, attn.inner_dim])
        out = attn.o(out)
        return (out, None, position_bias) + ((w,) if output_attentions else ())
    return forward


def model():
    from paddlenlp.transformers import ErnieCodeConfig, ErnieCodeModel

    paddle.seed(0)
    m = ErnieCodeModel(ErnieCodeConfig(**CONFIG))
    _perturb_norms(m)
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_attn_scale":
        attn = m.encoder.block[1].layer[0].SelfAttention
        object.__setattr__(attn, "forward", _scaled_attention_forward(attn))
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
        "input_ids": paddle.to_tensor(ids),
        "attention_mask": paddle.to_tensor(mask),
        "decoder_input_ids": paddle.to_tensor(dec),
    }


_W = np.random.default_rng(1).normal(size=(CONFIG["d_model"],)).astype("float32")


def loss(output):
    # paddlenlp (return_dict False, use_cache False) returns (decoder_last_hidden, encoder_last_hidden)
    dec, enc = output[0], output[-1]
    # both end in an RMS norm (mean of squares ~ weight**2): weighted sums of the features
    w = paddle.to_tensor(_W)
    return (dec * w).mean() + (enc * w).mean()

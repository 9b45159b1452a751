"""mT5 (encoder-decoder with LM head, gated-GELU feed-forward), paddlenlp side: tiny random
config, no download. Twin: mt5_torch.py.

PADIFF_BUG (this side only):
  paddle_gate_swap -> encoder block 1 gated feed-forward applies gelu to the wi_1 branch and
                      uses wi_0 as the linear gate (wi_0/wi_1 roles swapped)
  paddle_lm_scale  -> the untied lm_head input is rescaled by d_model**-0.5 (T5's tied-embedding
                      rescale applied to mT5's untied head)
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import MT5Config, MT5ForConditionalGeneration

CONFIG = dict(
    vocab_size=1000, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
    num_heads=4, relative_attention_num_buckets=32, relative_attention_max_distance=128,
    dropout_rate=0.0, layer_norm_epsilon=1e-6, initializer_factor=1.0,
    feed_forward_proj="gated-gelu", use_cache=False, pad_token_id=0, eos_token_id=1,
    bos_token_id=0, decoder_start_token_id=0, tie_word_embeddings=False,
)


def _perturb_norms(m):
    """T5 norms start at 1: draw them as 1 + N(0, 0.1) so that a swapped norm weight shows."""
    for _name, p in m.named_parameters():
        if p.ndim == 1:
            p.set_value((1.0 + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))


def _swapped_gate(ff):
    def forward(hidden_states):
        h = ff.gelu_act(ff.wi_1(hidden_states)) * ff.wi_0(hidden_states)
        return ff.wo(ff.dropout(h))
    return forward


def _scaled_head(head, scale):
    orig = head.forward

    def forward(x):
        return orig(x * scale)
    return forward


def model():
    paddle.seed(0)
    m = MT5ForConditionalGeneration(MT5Config(**CONFIG))
    _perturb_norms(m)
    m.eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "paddle_gate_swap":
        ff = m.mt5.encoder.block[1].layer[1].DenseReluDense
        ff.forward = _swapped_gate(ff)
    elif bug == "paddle_lm_scale":
        m.lm_head.forward = _scaled_head(m.lm_head, CONFIG["d_model"] ** -0.5)
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


def loss(output):
    # paddlenlp (return_dict False, use_cache False) returns (lm_logits, encoder_output)
    logits, enc = output[0], output[1]
    # the encoder output ends in an RMS norm: take half of its features
    return (logits**2).mean() + (enc[..., :16] ** 2).mean()

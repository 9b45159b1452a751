"""Funnel Transformer, paddlenlp side: tiny random config, no download. Twin: funnel_torch.py.

FunnelModel = encoder (2 blocks of 1 layer; block 1 mean-pools the query, stride 2, separate
<cls>, truncate_seq) + decoder (1 layer on the upsampled sequence). Relative-shift attention with
sinusoidal relative positions computed each forward; token types enter through seg_embed.
paddlenlp's FunnelModel needs return_dict=True (with False it reads `.last_hidden_state` off a
tuple), so the config sets it and the model returns paddlenlp's own BaseModelOutput (OrderedDict).
paddlenlp never runs its Funnel `_init_weights` at construction (and `init_weights()` fails:
FunnelEmbeddings has no `_padding_idx`): r_w_bias/r_r_bias/r_kernel/r_s_bias/seg_embed stay
all zero, which would hide every relative-position bug. `_init()` applies HF's init scheme here.

PADIFF_BUG (this side only):
  paddle_scale    -> encoder block 1's attention (`encoder.blocks.1.0.attention`) uses scale 1.0
                     instead of 1/sqrt(d_head)
  paddle_residual -> encoder block 1's feed-forward (`encoder.blocks.1.0.ffn`) drops its residual
                     connection: layer_norm(h) instead of layer_norm(hidden + h)
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import FunnelConfig, FunnelModel

CONFIG = dict(
    vocab_size=1000, block_sizes=[1, 1], num_decoder_layers=1, d_model=32, n_head=4, d_head=8,
    d_inner=64, hidden_act="gelu_new", hidden_dropout=0.0, attention_dropout=0.0,
    activation_dropout=0.0, initializer_range=0.1, initializer_std=None, layer_norm_eps=1e-9,
    pooling_type="mean", attention_type="relative_shift", separate_cls=True, truncate_seq=True,
    pool_q_only=True, pad_token_id=0,
)


def _init(m):
    """HF FunnelPreTrainedModel._init_weights, done by hand (see the module docstring)."""
    for name, p in m.named_parameters():
        leaf = name.rsplit(".", 1)[-1]
        if leaf in ("r_w_bias", "r_r_bias", "r_kernel", "r_s_bias", "seg_embed"):
            p.set_value(paddle.uniform(p.shape, min=0.0, max=CONFIG["initializer_range"]))
        elif "word_embeddings" in name:
            w = paddle.randn(p.shape)  # std 1.0 when initializer_std is None
            w[CONFIG["pad_token_id"]] = 0.0  # HF zeroes the padding row
            p.set_value(w)
        elif leaf == "weight" and len(p.shape) == 2:  # Linear [in, out]
            std = (1.0 / (p.shape[0] + p.shape[1])) ** 0.5
            p.set_value(paddle.randn(p.shape) * std)


def model():
    paddle.seed(0)
    m = FunnelModel(FunnelConfig(return_dict=True, **CONFIG))
    _init(m)
    m.eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "paddle_scale":
        m.encoder.blocks[1][0].attention.scale = 1.0
    elif bug == "paddle_residual":
        ffn = m.encoder.blocks[1][0].ffn

        def ffn_forward(hidden):
            h = ffn.linear_1(hidden)
            h = ffn.activation_function(h)
            h = ffn.activation_dropout(h)
            h = ffn.linear_2(h)
            h = ffn.dropout(h)
            return ffn.layer_norm(h)  # residual `hidden + h` forgotten

        ffn.forward = ffn_forward
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 12)).astype("int64")  # no pad id (0)
    types = np.zeros((2, 12), "int64")
    types[:, 6:] = 1
    mask = np.ones((2, 12), "float32")
    mask[1, 9:] = 0  # second sample padded after 9 tokens
    return ids, types, mask


def inputs():
    ids, types, mask = _arrays()
    return (), {
        "input_ids": paddle.to_tensor(ids),
        "token_type_ids": paddle.to_tensor(types),
        "attention_mask": paddle.to_tensor(mask),
    }


def loss(output):
    # paddlenlp BaseModelOutput (an OrderedDict); last_hidden_state ends in a LayerNorm
    h = output["last_hidden_state"]
    return (h[..., :16] ** 2).mean()

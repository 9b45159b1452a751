"""Funnel Transformer, HF transformers side: tiny random config, no download. Twin: funnel_paddle.py.

PADIFF_BUG:
  act       -> relu instead of gelu_new in the decoder layer's feed-forward
               (`decoder.layers.0.ffn.activation_function`)
  rel_shift -> encoder block 0's attention drops the relative-shift offset (shift 0 instead of 1
               in `_relative_shift_gather`): every query reads the positional score one relative
               distance off
"""
import os
import types

import numpy as np
import torch
from transformers import FunnelConfig, FunnelModel
from transformers.models.funnel import modeling_funnel

CONFIG = dict(
    vocab_size=1000, block_sizes=[1, 1], num_decoder_layers=1, d_model=32, n_head=4, d_head=8,
    d_inner=64, hidden_act="gelu_new", hidden_dropout=0.0, attention_dropout=0.0,
    activation_dropout=0.0, initializer_range=0.1, initializer_std=None, layer_norm_eps=1e-9,
    pooling_type="mean", attention_type="relative_shift", separate_cls=True, truncate_seq=True,
    pool_q_only=True, pad_token_id=0,
)


def _bad_relative_positional_attention(self, position_embeds, q_head, context_len, cls_mask=None):
    # relative_shift branch of FunnelRelMultiheadAttention.relative_positional_attention with
    # the shift passed to _relative_shift_gather off by one
    shift = 2 if q_head.shape[1] != context_len else 1
    r = position_embeds[self.block_index][shift - 1]
    v = self.r_r_bias * self.scale
    w_r = self.r_kernel
    r_head = torch.einsum("td,dnh->tnh", r, w_r)
    positional_attn = torch.einsum("binh,tnh->bnit", q_head + v, r_head)
    positional_attn = modeling_funnel._relative_shift_gather(positional_attn, context_len, shift - 1)  # BUG
    if cls_mask is not None:
        positional_attn *= cls_mask
    return positional_attn


def model():
    torch.manual_seed(0)
    m = FunnelModel(FunnelConfig(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "act":
        m.decoder.layers[0].ffn.activation_function = torch.nn.ReLU()
    elif bug == "rel_shift":
        att = m.encoder.blocks[0][0].attention
        att.relative_positional_attention = types.MethodType(_bad_relative_positional_attention, att)
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 12)).astype("int64")  # no pad id (0)
    types_ = np.zeros((2, 12), "int64")
    types_[:, 6:] = 1
    mask = np.ones((2, 12), "float32")
    mask[1, 9:] = 0  # second sample padded after 9 tokens
    return ids, types_, mask


def inputs():
    ids, types_, mask = _arrays()
    return (), {
        "input_ids": torch.from_numpy(ids),
        "token_type_ids": torch.from_numpy(types_),
        "attention_mask": torch.from_numpy(mask),
    }


def loss(output):
    h = output.last_hidden_state  # BaseModelOutput; ends in a LayerNorm
    return (h[..., :16] ** 2).mean()

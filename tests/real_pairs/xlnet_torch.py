"""XLNet, HF transformers side: tiny random config, no download. Twin: xlnet_paddle.py.

PADIFF_BUG (this side only):
  rel_shift -> layer 0 relative attention skips the relative shift of the position scores
               (keeps the first klen columns of bd instead of rel_shift_bnij)
  act       -> layer 1 feed-forward activation relu instead of gelu
  ln_before -> layer 1 feed-forward normalizes its branch before the residual add:
               inp + layer_norm(ffn(inp)) instead of layer_norm(ffn(inp) + inp)
"""
import os

import numpy as np
import torch
from transformers import XLNetConfig, XLNetModel

CONFIG = dict(
    vocab_size=1000, d_model=32, n_layer=2, n_head=4, d_inner=64, ff_activation="gelu",
    untie_r=True, attn_type="bi", initializer_range=0.1, layer_norm_eps=1e-12, dropout=0.0,
    mem_len=None, reuse_len=None, use_mems_eval=False, use_mems_train=False, bi_data=False,
    clamp_len=-1, same_length=False, pad_token_id=5, bos_token_id=1, eos_token_id=2,
)


def _no_rel_shift(x, klen=-1):
    return x[..., :klen]


def model():
    torch.manual_seed(0)
    m = XLNetModel(XLNetConfig(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "rel_shift":
        m.layer[0].rel_attn.rel_shift_bnij = _no_rel_shift
    elif bug == "act":
        m.layer[1].ff.activation_function = torch.nn.ReLU()
    elif bug == "ln_before":
        ff = m.layer[1].ff

        def ff_forward(inp):
            output = ff.layer_1(inp)
            output = ff.activation_function(output)
            output = ff.dropout(output)
            output = ff.layer_2(output)
            output = ff.dropout(output)
            return inp + ff.layer_norm(output)  # norm before the residual instead of after

        ff.forward = ff_forward
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(10, 1000, size=(2, 12)).astype("int64")  # no special ids (0..9)
    types = np.zeros((2, 12), "int64")
    types[:, 7:] = 1
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample padded after 9 tokens
    return ids, types, mask


def inputs():
    ids, types, mask = _arrays()
    return (), {
        "input_ids": torch.from_numpy(ids),
        "token_type_ids": torch.from_numpy(types),
        "attention_mask": torch.from_numpy(mask),
    }


def loss(output):
    # HF returns XLNetModelOutput (mems None with use_mems_eval False)
    h = output.last_hidden_state
    # ends in a LayerNorm: take half of the features
    return (h[..., :16] ** 2).mean()

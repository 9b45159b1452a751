"""XLNet, paddlenlp side: tiny random config, no download. Twin: xlnet_torch.py.

PADIFF_BUG (this side only):
  paddle_scale -> layer 1 relative attention scales its scores by 1/d_head instead of
                  1/sqrt(d_head)
  paddle_act   -> layer 0 feed-forward activation relu instead of gelu
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import XLNetConfig, XLNetModel

CONFIG = dict(
    vocab_size=1000, d_model=32, n_layer=2, n_head=4, d_inner=64, ff_activation="gelu",
    untie_r=True, attn_type="bi", initializer_range=0.1, layer_norm_eps=1e-12, dropout=0.0,
    mem_len=None, reuse_len=None, use_mems_eval=False, use_mems_train=False, bi_data=False,
    clamp_len=-1, same_length=False, pad_token_id=5, bos_token_id=1, eos_token_id=2,
)


def _perturb_norms(m):
    """LayerNorms start at 1/0: draw them as 1 + N(0, 0.1) / N(0, 0.1) so that every tensor matters."""
    for name, p in m.named_parameters():
        if "layer_norm" in name:
            base = 1.0 if name.endswith("weight") else 0.0
            p.set_value((base + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))


def model():
    paddle.seed(0)
    m = XLNetModel(XLNetConfig(**CONFIG))
    _perturb_norms(m)
    m.eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "paddle_scale":
        m.layer[1].rel_attn.scale = 1.0 / (CONFIG["d_model"] // CONFIG["n_head"])
    elif bug == "paddle_act":
        m.layer[0].ff.activation_function = paddle.nn.ReLU()
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
        "input_ids": paddle.to_tensor(ids),
        "token_type_ids": paddle.to_tensor(types),
        "attention_mask": paddle.to_tensor(mask),
    }


def loss(output):
    # paddlenlp (return_dict False, no mems) returns a 1-tuple (last_hidden_state,)
    h = output[0]
    # ends in a LayerNorm: take half of the features
    return (h[..., :16] ** 2).mean()

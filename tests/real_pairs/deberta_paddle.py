"""DeBERTa (v1), paddlenlp side: tiny random config, no download. Twin: deberta_torch.py.

PADIFF_BUG (this side only):
  paddle_rel_span -> layer 0 self-attention slices the relative-position embedding table as if
                     max_relative_positions were 32 instead of 64 (rows 20..43 instead of 52..75)
  paddle_ln_eps   -> embeddings LayerNorm eps 1e-3 instead of 1e-7
  paddle_act_twice -> layer 1's intermediate activation is applied twice (gelu(gelu(x)))
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import DebertaConfig, DebertaModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=2,
    initializer_range=0.1, layer_norm_eps=1e-7, pad_token_id=0, position_biased_input=True,
    relative_attention=True, max_relative_positions=-1, pos_att_type=["c2p", "p2c"],
)


def _perturb_1d(m):
    """Norm scales start at 1, biases at 0: redraw 1-D tensors so that every tensor matters."""
    for name, p in m.named_parameters():
        if p.ndim == 1:
            base = 1.0 if name.endswith("LayerNorm.weight") else 0.0
            p.set_value((base + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))


def model():
    paddle.seed(0)
    m = DebertaModel(DebertaConfig(**CONFIG))
    _perturb_1d(m)
    m.eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "paddle_rel_span":
        m.encoder.layer[0].attention.self.max_relative_positions = 32
    elif bug == "paddle_ln_eps":
        m.embeddings.LayerNorm.variance_epsilon = 1e-3
    elif bug == "paddle_act_twice":
        act = m.encoder.layer[1].intermediate.intermediate_act_fn
        act_once = act.forward

        def act_forward(x):
            return act_once(act_once(x))  # activation applied a second time

        act.forward = act_forward
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 12)).astype("int64")  # no pad id (0)
    types = np.zeros((2, 12), "int64")
    types[:, 6:] = 1
    # key-padding mask [batch, 1, 1, seq]: second sample padded after 9 tokens. A 2-D mask
    # would also mask the padded *query* rows, and paddlenlp's softmax_with_mask fills them
    # with -inf: NaN for the whole padded sample (HF uses finfo.min: uniform rows, no NaN)
    mask = np.ones((2, 1, 1, 12), "int64")
    mask[1, ..., 9:] = 0
    return ids, types, mask


def inputs():
    ids, types, mask = _arrays()
    return (), {
        "input_ids": paddle.to_tensor(ids),
        "token_type_ids": paddle.to_tensor(types),
        "attention_mask": paddle.to_tensor(mask),
    }


def loss(output):
    # paddlenlp returns a tuple (sequence_output, *hidden_states) (config output_hidden_states True)
    h = output[0]
    # ends in a LayerNorm: take half of the features
    return (h[..., :16] ** 2).mean()

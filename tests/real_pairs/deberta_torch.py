"""DeBERTa (v1), HF transformers side: tiny random config, no download. Twin: deberta_paddle.py.

PADIFF_BUG (this side only):
  pos_att_type -> layer 1 self-attention runs with pos_att_type ["c2p"] only (the p2c term is
                  dropped and the score scale becomes sqrt(2*d) instead of sqrt(3*d))
  act          -> layer 0 intermediate activation relu instead of gelu
"""
import os

import numpy as np
import torch
from transformers import DebertaConfig, DebertaModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=2,
    initializer_range=0.1, layer_norm_eps=1e-7, pad_token_id=0, position_biased_input=True,
    relative_attention=True, max_relative_positions=-1, pos_att_type=["c2p", "p2c"],
)


def model():
    torch.manual_seed(0)
    m = DebertaModel(DebertaConfig(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "pos_att_type":
        m.encoder.layer[1].attention.self.pos_att_type = ["c2p"]
    elif bug == "act":
        m.encoder.layer[0].intermediate.intermediate_act_fn = torch.nn.ReLU()
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
        "input_ids": torch.from_numpy(ids),
        "token_type_ids": torch.from_numpy(types),
        "attention_mask": torch.from_numpy(mask),
    }


def loss(output):
    # HF returns BaseModelOutput
    h = output.last_hidden_state
    # ends in a LayerNorm: take half of the features
    return (h[..., :16] ** 2).mean()

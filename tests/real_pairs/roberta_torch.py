"""RoBERTa, HF transformers side: tiny random config, no download. Twin: roberta_paddle.py.

PADIFF_BUG: pos_offset -> position ids start at 0 instead of padding_idx + 1 (= 2)
            act        -> relu instead of gelu in layer 1's intermediate
paddle_ln_unbiased and paddle_scale_d are planted on the paddle side (this side stays clean).
"""
import os

import numpy as np
import torch
from transformers import RobertaConfig, RobertaModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, max_position_embeddings=64, type_vocab_size=1,
    hidden_act="gelu", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
    layer_norm_eps=1e-5, initializer_range=0.1, pad_token_id=1,
)


def model():
    torch.manual_seed(0)
    m = RobertaModel(RobertaConfig(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "pos_offset":  # HF: positions = cumsum(ids != padding_idx) + padding_idx
        m.embeddings.padding_idx = -1  # -> every token counts, positions 0..L-1 (BERT-style)
    elif bug == "act":
        m.encoder.layer[1].intermediate.intermediate_act_fn = torch.nn.ReLU()
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(3, 1000, size=(2, 12)).astype("int64")  # no bos/pad/eos (0, 1, 2)
    mask = np.ones((2, 12), "int64")
    mask[1, 9:] = 0  # second sample padded after 9 tokens
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (), {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask)}


def loss(output):
    # HF returns BaseModelOutputWithPoolingAndCrossAttentions
    seq, pooled = output.last_hidden_state, output.pooler_output
    # seq ends in a LayerNorm: the mean of ALL its squared features is ~constant (zero
    # gradient), so take half of the features
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()

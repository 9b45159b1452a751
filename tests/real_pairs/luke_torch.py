"""LUKE (words + entities, entity-aware self-attention), HF transformers side: tiny random
config, no download. Twin: luke_paddle.py.

PADIFF_BUG (this side only):
  entity_aware_off -> encoder layer 1's self-attention runs with use_entity_aware_attention
                      False (one query projection for words and entities): paddlenlp has no
                      such flag and always uses the w2e/e2w/e2e query projections, so a port that
                      maps the flag wrongly for a layer loses them
  ln_eps_word      -> precision-level: the word embeddings LayerNorm (embeddings.LayerNorm) gets
                      eps 1e-4 instead of LUKE's 1e-6 (a constant mistyped in one norm)
Other luke bugs are planted on the paddle side.
"""
import os

import numpy as np
import torch
from transformers import LukeConfig, LukeModel

CONFIG = dict(
    vocab_size=1000, entity_vocab_size=100, hidden_size=32, entity_emb_size=16,
    num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, hidden_act="gelu",
    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, max_position_embeddings=64,
    type_vocab_size=1, initializer_range=0.1, pad_token_id=1, bos_token_id=0, eos_token_id=2,
    layer_norm_eps=1e-6, use_entity_aware_attention=True,
)


def model():
    torch.manual_seed(0)
    m = LukeModel(LukeConfig(**CONFIG)).eval()
    if os.environ.get("PADIFF_BUG", "") == "entity_aware_off":
        m.encoder.layer[1].attention.self.use_entity_aware_attention = False
    elif os.environ.get("PADIFF_BUG", "") == "ln_eps_word":
        m.embeddings.LayerNorm.eps = 1e-4
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(3, 1000, size=(2, 12)).astype("int64")  # no bos/pad/eos (0, 1, 2)
    mask = np.ones((2, 12), "float32")
    mask[1, 9:] = 0  # second sequence padded after 9 tokens
    ent = rng.integers(1, 100, size=(2, 3)).astype("int64")  # no entity pad (0)
    ent_mask = np.ones((2, 3), "float32")
    # entity mention positions (word positions of each mention), -1 = no more positions
    ent_pos = np.full((2, 3, 4), -1, "int64")
    ent_pos[0, 0, :2] = [1, 2]
    ent_pos[0, 1, :3] = [4, 5, 6]
    ent_pos[0, 2, :1] = [10]
    ent_pos[1, 0, :1] = [0]
    ent_pos[1, 1, :4] = [2, 3, 4, 5]
    ent_pos[1, 2, :2] = [7, 8]
    return ids, mask, ent, ent_mask, ent_pos


def inputs():
    ids, mask, ent, ent_mask, ent_pos = _arrays()
    return (), {
        "input_ids": torch.from_numpy(ids),
        "attention_mask": torch.from_numpy(mask),
        "entity_ids": torch.from_numpy(ent),
        "entity_attention_mask": torch.from_numpy(ent_mask),
        "entity_position_ids": torch.from_numpy(ent_pos),
    }


def loss(output):
    # HF returns BaseLukeModelOutputWithPooling
    word, entity, pooled = output.last_hidden_state, output.entity_last_hidden_state, output.pooler_output
    # word / entity states end in a LayerNorm: take half of the features
    return (word[..., :16] ** 2).mean() + (entity[..., :16] ** 2).mean() + (pooled**2).mean()

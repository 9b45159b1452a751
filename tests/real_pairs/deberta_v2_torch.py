"""DeBERTa-v2 (v3-style config), HF transformers side: tiny random config, no download.
Twin: deberta_v2_paddle.py (see its docstring for the config and the mask).

PADIFF_BUG (this side only):
  p2c_sign -> layer 0's self-attention indexes the position->content term with
              clamp(+r_pos + att_span) instead of clamp(-r_pos + att_span) (the sign of the
              relative position dropped for p2c: key j looks at query i's bucket i-j instead of
              j-i); inline in DisentangledSelfAttention.disentangled_attention_bias
"""
import os
import types

import numpy as np
import torch
from transformers import DebertaV2Config, DebertaV2Model
from transformers.models.deberta_v2.modeling_deberta_v2 import scaled_size_sqrt

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=2,
    initializer_range=0.1, layer_norm_eps=1e-7, pad_token_id=0, position_biased_input=False,
    relative_attention=True, max_relative_positions=-1, position_buckets=8,
    pos_att_type=["p2c", "c2p"], norm_rel_ebd="layer_norm", share_att_key=True,
)


def model():
    torch.manual_seed(0)
    m = DebertaV2Model(DebertaV2Config(**CONFIG)).eval()
    if os.environ.get("PADIFF_BUG", "") == "p2c_sign":
        sa = m.encoder.layer[0].attention.self
        sa.disentangled_attention_bias = types.MethodType(_bias_p2c_sign, sa)
    return m


def _bias_p2c_sign(self, query_layer, key_layer, relative_pos, rel_embeddings, scale_factor):
    """HF's disentangled_attention_bias for this config (share_att_key, c2p + p2c, relative_pos
    given as [1, q, k]) with the p2c sign slip."""
    relative_pos = relative_pos.unsqueeze(1).to(dtype=torch.long)
    att_span = self.pos_ebd_size
    rel_embeddings = rel_embeddings[0 : att_span * 2, :].unsqueeze(0)
    reps = query_layer.size(0) // self.num_attention_heads
    pos_query_layer = self.transpose_for_scores(self.query_proj(rel_embeddings), self.num_attention_heads).repeat(reps, 1, 1)
    pos_key_layer = self.transpose_for_scores(self.key_proj(rel_embeddings), self.num_attention_heads).repeat(reps, 1, 1)
    score = 0
    scale = scaled_size_sqrt(pos_key_layer, scale_factor)
    c2p_att = torch.bmm(query_layer, pos_key_layer.transpose(-1, -2))
    c2p_pos = torch.clamp(relative_pos + att_span, 0, att_span * 2 - 1)
    c2p_att = torch.gather(c2p_att, dim=-1, index=c2p_pos.squeeze(0).expand(
        [query_layer.size(0), query_layer.size(1), relative_pos.size(-1)]))
    score += c2p_att / scale.to(dtype=c2p_att.dtype)
    scale = scaled_size_sqrt(pos_query_layer, scale_factor)
    p2c_pos = torch.clamp(relative_pos + att_span, 0, att_span * 2 - 1)  # BUG: -relative_pos
    p2c_att = torch.bmm(key_layer, pos_query_layer.transpose(-1, -2))
    p2c_att = torch.gather(p2c_att, dim=-1, index=p2c_pos.squeeze(0).expand(
        [query_layer.size(0), key_layer.size(-2), key_layer.size(-2)])).transpose(-1, -2)
    score += p2c_att / scale.to(dtype=p2c_att.dtype)
    return score


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 12)).astype("int64")  # no pad id (0)
    types_ = np.zeros((2, 12), "int64")
    types_[:, 6:] = 1
    # key-padding mask [batch, 1, 1, seq]: second sample padded after 9 tokens
    mask = np.ones((2, 1, 1, 12), "int64")
    mask[1, ..., 9:] = 0
    return ids, types_, mask


def inputs():
    ids, types_, mask = _arrays()
    return (), {
        "input_ids": torch.from_numpy(ids),
        "token_type_ids": torch.from_numpy(types_),
        "attention_mask": torch.from_numpy(mask),
    }


def loss(output):
    # HF returns BaseModelOutput
    h = output.last_hidden_state
    # ends in a LayerNorm: take half of the features
    return (h[..., :16] ** 2).mean()

"""SqueezeBERT, HF transformers side: tiny random config, no download. Twin: squeezebert_paddle.py.

PADIFF_BUG:
  softmax_dim -> layer 0 attention softmax over dim -2 (the query axis) instead of -1
                 (a paddle `axis` / torch `dim` porting slip)
  norm_order  -> layer 1's post-attention ConvDropoutLayerNorm adds the residual AFTER its
                 LayerNorm (layernorm(conv(x)) + input) instead of before
"""
import os
import types

import numpy as np
import torch
from transformers import SqueezeBertConfig, SqueezeBertModel

CONFIG = dict(
    vocab_size=1000, hidden_size=32, embedding_size=32, num_hidden_layers=2,
    num_attention_heads=4, intermediate_size=64, max_position_embeddings=64, type_vocab_size=2,
    hidden_act="gelu", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
    layer_norm_eps=1e-12, initializer_range=0.1, pad_token_id=0,
    q_groups=4, k_groups=4, v_groups=4, post_attention_groups=1, intermediate_groups=4,
    output_groups=4,
)


def _norm_order_forward(self, hidden_states, input_tensor):
    x = self.conv1d(hidden_states)
    x = self.dropout(x)
    # BUG: residual added after the LayerNorm instead of before it
    return self.layernorm(x) + input_tensor


def model():
    torch.manual_seed(0)
    m = SqueezeBertModel(SqueezeBertConfig(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "softmax_dim":
        m.encoder.layers[0].attention.softmax = torch.nn.Softmax(dim=-2)
    elif bug == "norm_order":
        block = m.encoder.layers[1].post_attention
        block.forward = types.MethodType(_norm_order_forward, block)
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 12)).astype("int64")  # no pad id (0)
    types_ = np.zeros((2, 12), "int64")
    types_[:, 6:] = 1
    mask = np.ones((2, 12), "int64")
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
    # HF returns BaseModelOutputWithPooling
    seq, pooled = output.last_hidden_state, output.pooler_output
    return (seq[..., :16] ** 2).mean() + (pooled**2).mean()

"""ERNIE pretraining model (MLM + NSP heads), HF transformers side: tiny random config, no download. Twin: ernie_paddle.py.

PADIFF_BUG (this side only):
  task_emb -> the task-type embeddings are not added (embeddings.use_task_id = False)
  head_act -> the MLM head transform activation is ReLU instead of GELU
  kv_swap  -> layer 1's self-attention uses the value projection as keys and the key
              projection as values
"""
import math
import os

import numpy as np
import torch
from transformers import ErnieConfig, ErnieForPreTraining

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=2,
    task_type_vocab_size=3, use_task_id=True, initializer_range=0.1,
    pad_token_id=0, layer_norm_eps=1e-12, position_embedding_type="absolute",
    tie_word_embeddings=True, is_decoder=False,
)


def model():
    torch.manual_seed(0)
    m = ErnieForPreTraining(ErnieConfig(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "task_emb":
        m.ernie.embeddings.use_task_id = False
    elif bug == "head_act":
        m.cls.predictions.transform.transform_act_fn = torch.nn.ReLU()
    elif bug == "kv_swap":
        _swap_key_value(m.ernie.encoder.layer[1].attention.self)
    return m


def _swap_key_value(att):
    """ErnieSelfAttention.forward (absolute positions, no cache) with key and value swapped."""

    def forward(hidden_states, attention_mask=None, head_mask=None, *args, **kwargs):
        b, s, _ = hidden_states.shape
        h, d = att.num_attention_heads, att.attention_head_size

        def split(x):
            return x.view(b, s, h, d).transpose(1, 2)

        q = split(att.query(hidden_states))
        k_out, v_out = att.key(hidden_states), att.value(hidden_states)
        key_layer, value_layer = split(v_out), split(k_out)  # swapped
        scores = torch.matmul(q, key_layer.transpose(-1, -2)) / math.sqrt(d)
        if attention_mask is not None:
            scores = scores + attention_mask
        probs = att.dropout(torch.nn.functional.softmax(scores, dim=-1))
        if head_mask is not None:
            probs = probs * head_mask
        ctx = torch.matmul(probs, value_layer).permute(0, 2, 1, 3).reshape(b, s, h * d)
        return ctx, probs

    att.forward = forward


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 12)).astype("int64")  # no pad id (0)
    types = np.zeros((2, 12), "int64")
    types[:, 6:] = 1
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
    # HF returns ErnieForPreTrainingOutput (prediction_logits, seq_relationship_logits)
    return (output.prediction_logits**2).mean() + (output.seq_relationship_logits**2).mean()

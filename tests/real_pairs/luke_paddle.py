"""LUKE (words + entities, entity-aware self-attention), paddlenlp side: tiny random config,
no download. Twin: luke_torch.py (HF LukeModel).

paddlenlp's LUKE uses entity-aware attention always (w2e/e2w/e2e query projections) and forces
every LayerNorm eps to its module constant layer_norm_eps = 1e-6 (the init hook overwrites it
whatever the config says); the HF side pins layer_norm_eps=1e-6 to match.

PADIFF_BUG (this side only):
  paddle_ent_pos_sum -> the entity embeddings SUM the position embeddings of a mention's words
                        instead of averaging them (the division by the number of valid
                        positions is left out of EntityEmbeddings.forward)
  paddle_attn_scale  -> encoder layer 0's self-attention divides its scores by sqrt(hidden_size)
                        (sqrt 32) instead of sqrt(attention_head_size) (sqrt 8): the attention
                        scale uses the wrong dim (inline in LukeSelfAttention.forward)
Other luke bugs are planted on the torch side.
"""
import math
import os

import numpy as np
import paddle
from paddlenlp.transformers import LukeConfig, LukeModel

CONFIG = dict(
    vocab_size=1000, entity_vocab_size=100, hidden_size=32, entity_emb_size=16,
    num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, hidden_act="gelu",
    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, max_position_embeddings=64,
    type_vocab_size=1, initializer_range=0.1, pad_token_id=1, entity_pad_token_id=0,
)


def _perturb_1d(m):
    """Norm scales start at 1, biases at 0: redraw 1-D tensors so that every tensor matters."""
    for name, p in m.named_parameters():
        if p.ndim == 1:
            base = 1.0 if ("norm" in name and name.endswith("weight")) else 0.0
            p.set_value((base + paddle.normal(0.0, 0.1, p.shape)).astype(p.dtype))


def _entity_forward_pos_sum(emb):
    """paddlenlp EntityEmbeddings.forward without the division by the mention length."""

    def forward(entity_ids, position_ids, token_type_ids=None):
        if token_type_ids is None:
            token_type_ids = paddle.zeros_like(entity_ids)
        entity_embeddings = emb.entity_embeddings(entity_ids)
        if emb.entity_emb_size != emb.hidden_size:
            entity_embeddings = emb.entity_embedding_dense(entity_embeddings)
        position_embeddings = emb.position_embeddings(position_ids.clip(min=0))
        position_embedding_mask = (position_ids != -1).astype(position_embeddings.dtype).unsqueeze(-1)
        position_embeddings = position_embeddings * position_embedding_mask
        position_embeddings = paddle.sum(position_embeddings, axis=-2)  # BUG: no "/ mask.sum(-2)"
        token_type_embeddings = emb.token_type_embeddings(token_type_ids)
        embeddings = entity_embeddings + position_embeddings + token_type_embeddings
        embeddings = emb.layer_norm(embeddings)
        return emb.dropout(embeddings)

    return forward


def _self_attention_wrong_scale(sa):
    """paddlenlp LukeSelfAttention.forward with the scores scaled by sqrt(hidden_size)."""

    def forward(word_hidden_states, entity_hidden_states, attention_mask=None):
        word_size = word_hidden_states.shape[1]
        if entity_hidden_states is None:
            concat_hidden_states = word_hidden_states
        else:
            concat_hidden_states = paddle.concat([word_hidden_states, entity_hidden_states], axis=1)
        key_layer = sa.transpose_for_scores(sa.key(concat_hidden_states))
        value_layer = sa.transpose_for_scores(sa.value(concat_hidden_states))
        if entity_hidden_states is not None:
            w2w_q = sa.transpose_for_scores(sa.query(word_hidden_states))
            w2e_q = sa.transpose_for_scores(sa.w2e_query(word_hidden_states))
            e2w_q = sa.transpose_for_scores(sa.e2w_query(entity_hidden_states))
            e2e_q = sa.transpose_for_scores(sa.e2e_query(entity_hidden_states))
            w_keys = key_layer[:, :, :word_size, :].transpose((0, 1, 3, 2))
            e_keys = key_layer[:, :, word_size:, :].transpose((0, 1, 3, 2))
            word_scores = paddle.concat([paddle.matmul(w2w_q, w_keys), paddle.matmul(w2e_q, e_keys)], axis=3)
            entity_scores = paddle.concat([paddle.matmul(e2w_q, w_keys), paddle.matmul(e2e_q, e_keys)], axis=3)
            attention_scores = paddle.concat([word_scores, entity_scores], axis=2)
        else:
            query_layer = sa.transpose_for_scores(sa.query(concat_hidden_states))
            attention_scores = paddle.matmul(query_layer, key_layer.transpose((0, 1, 3, 2)))
        attention_scores = attention_scores / math.sqrt(sa.all_head_size)  # BUG: not attention_head_size
        if attention_mask is not None:
            attention_scores = attention_scores + attention_mask
        attention_probs = sa.dropout(paddle.nn.functional.softmax(attention_scores, axis=-1))
        context_layer = paddle.matmul(attention_probs, value_layer).transpose((0, 2, 1, 3))
        context_layer = context_layer.reshape(context_layer.shape[:-2] + [sa.all_head_size])
        output_entity = None if entity_hidden_states is None else context_layer[:, word_size:, :]
        return context_layer[:, :word_size, :], output_entity

    return forward


def model():
    paddle.seed(0)
    m = LukeModel(LukeConfig(**CONFIG))
    _perturb_1d(m)
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_ent_pos_sum":
        object.__setattr__(m.entity_embeddings, "forward", _entity_forward_pos_sum(m.entity_embeddings))
    elif os.environ.get("PADIFF_BUG", "") == "paddle_attn_scale":
        sa = m.encoder.layer[0].attention.self
        object.__setattr__(sa, "forward", _self_attention_wrong_scale(sa))
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
        "input_ids": paddle.to_tensor(ids),
        "attention_mask": paddle.to_tensor(mask),
        "entity_ids": paddle.to_tensor(ent),
        "entity_attention_mask": paddle.to_tensor(ent_mask),
        "entity_position_ids": paddle.to_tensor(ent_pos),
    }


def loss(output):
    # paddlenlp returns (word hidden states, entity hidden states, pooled)
    word, entity, pooled = output[0], output[1], output[2]
    # word / entity states end in a LayerNorm: take half of the features
    return (word[..., :16] ** 2).mean() + (entity[..., :16] ** 2).mean() + (pooled**2).mean()

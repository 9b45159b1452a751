"""ELECTRA discriminator, HF transformers side: tiny random config, no download.

Twin: electra_paddle.py (paddlenlp ElectraDiscriminator ~ HF ElectraForPreTraining).
PADIFF_BUG (this side only):
  heads    -> encoder layer 1 self-attention splits into 8 heads of 4 instead of 4 heads of 8
              (wrong nhead when porting; also scales by 1/sqrt(4))
  head_act -> discriminator head activation relu instead of gelu
  pos_from_1 -> the embeddings look positions up from 1 (1..S) instead of 0 (0..S-1)
(paddle_mask_axis and paddle_emb_ln are planted on the paddle side.)
"""
import os

import numpy as np
import torch
from transformers import ElectraConfig, ElectraForPreTraining

CONFIG = dict(
    vocab_size=1000, embedding_size=16, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=4, intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=2,
    initializer_range=0.1, pad_token_id=0, layer_norm_eps=1e-12,
    position_embedding_type="absolute",
)


def model():
    torch.manual_seed(0)
    m = ElectraForPreTraining(ElectraConfig(**CONFIG)).eval()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "heads":
        att = m.electra.encoder.layer[1].attention.self
        att.num_attention_heads, att.attention_head_size = 8, 4  # all_head_size stays 32
    elif bug == "head_act":
        m.discriminator_predictions.activation = torch.nn.ReLU()
    elif bug == "pos_from_1":
        emb = m.electra.embeddings
        emb_forward = emb.forward

        def forward(input_ids=None, token_type_ids=None, position_ids=None, inputs_embeds=None,
                    past_key_values_length=0):
            if position_ids is None:
                seq = (input_ids if input_ids is not None else inputs_embeds).shape[1]
                position_ids = emb.position_ids[:, 1 : seq + 1]  # the bug: should be 0 : seq
            return emb_forward(input_ids=input_ids, token_type_ids=token_type_ids, position_ids=position_ids,
                               inputs_embeds=inputs_embeds, past_key_values_length=past_key_values_length)

        emb.forward = forward
    return m


def _arrays():
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1000, size=(2, 12)).astype("int64")  # no pad id (0)
    types = np.zeros((2, 12), "int64")
    types[:, 7:] = 1
    mask = np.ones((2, 12), "int64")
    mask[1, 8:] = 0  # second sample padded after 8 tokens
    return ids, types, mask


def inputs():
    ids, types, mask = _arrays()
    return (), {
        "input_ids": torch.from_numpy(ids),
        "token_type_ids": torch.from_numpy(types),
        "attention_mask": torch.from_numpy(mask),
    }


def loss(output):
    # HF returns ElectraForPreTrainingOutput; logits [batch, seq]
    return (output.logits**2).mean()

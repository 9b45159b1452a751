"""ERNIE pretraining model (MLM + NSP heads), paddlenlp side: tiny random config, no download.

Twin: ernie_torch.py (HF ErnieForPreTraining). Task-type embeddings are on (use_task_id=True).
paddlenlp ErnieForPretraining.forward has no task_type_ids argument, so the task ids are the
defaults: paddle ones*task_id (task_id=0 -> zeros), HF zeros.
PADIFF_BUG (this side only):
  paddle_pad_idx -> word_embeddings built with the wrong padding_idx (a token id that occurs in the
                    input): paddle's Embedding OUTPUTS ZEROS for its padding_idx, so that token
                    loses its embedding (pad_token_id mismatch between the ports)
  paddle_head_ln_eps -> the MLM head's transform LayerNorm (cls.predictions.layer_norm) has paddle's
                        default epsilon 1e-5 instead of layer_norm_eps 1e-12 (precision-level)
Other ernie bugs are planted on the torch side.
"""
import os

import numpy as np
import paddle
from paddlenlp.transformers import ErnieConfig, ErnieForPretraining

CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, max_position_embeddings=64, type_vocab_size=2,
    task_type_vocab_size=3, use_task_id=True, task_id=0, initializer_range=0.1,
    pad_token_id=0, layer_norm_eps=1e-12,
)


def model():
    paddle.seed(0)
    m = ErnieForPretraining(ErnieConfig(**CONFIG))
    m.eval()
    if os.environ.get("PADIFF_BUG", "") == "paddle_pad_idx":
        ids = _arrays()[0]
        m.ernie.embeddings.word_embeddings._padding_idx = int(ids[0, 3])  # should be 0
    elif os.environ.get("PADIFF_BUG", "") == "paddle_head_ln_eps":
        # as if built by nn.LayerNorm(hidden_size) without epsilon=config.layer_norm_eps
        m.cls.predictions.layer_norm._epsilon = 1e-5
    return m


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
        "input_ids": paddle.to_tensor(ids),
        "token_type_ids": paddle.to_tensor(types),
        "attention_mask": paddle.to_tensor(mask),
    }


def loss(output):
    # paddlenlp ErnieForPretraining returns (prediction_scores [B, S, vocab], seq_relationship [B, 2])
    return (output[0] ** 2).mean() + (output[1] ** 2).mean()

"""BERT sequence classification in TRAINING mode, HF transformers side: tiny random config (no
download), eager attention, dropout 0.1 (hidden and attention), model.train(), cross-entropy
over 3 labels, AdamW (lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay 0.01 on matrices
only, two parameter groups). Twin: bert_train_paddle.py. Ground truth: bert_train_truth.json.

PADIFF_BUG (this side only):
  cls_dropout -> the classifier's dropout has p 0.3 (config classifier_dropout=0.3) instead
                 of the hidden dropout 0.1 that paddlenlp uses
  decay_all   -> AdamW decays every tensor (one parameter group), biases and LayerNorm
                 scales too; the paddle side decays matrices only
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import BATCH, SEQ, bug, token_ids, torch_adamw
from transformers import BertConfig, BertForSequenceClassification

BUGS = {"cls_dropout", "decay_all"} | {"emb_eval", "paddle_head_not_optimized"}  # the paddle side's, ignored here
CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, max_position_embeddings=64, type_vocab_size=2,
    hidden_act="gelu", hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
    layer_norm_eps=1e-12, initializer_range=0.02, pad_token_id=0, num_labels=3,
)
LABELS = np.array([0, 2], "int64")


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    cfg = BertConfig(**CONFIG, classifier_dropout=0.3 if b == "cls_dropout" else None,
                     attn_implementation="eager")
    m = BertForSequenceClassification(cfg)
    m.train()
    return m


def _arrays():
    ids = token_ids(1000, low=1)  # no pad id (0)
    types = np.zeros((BATCH, SEQ), "int64")
    types[:, SEQ // 2:] = 1
    mask = np.ones((BATCH, SEQ), "int64")
    mask[1, 6:] = 0  # second sample padded after 6 tokens
    return ids, types, mask


def inputs():
    ids, types, mask = _arrays()
    return (), {"input_ids": torch.from_numpy(ids), "token_type_ids": torch.from_numpy(types),
                "attention_mask": torch.from_numpy(mask)}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]  # SequenceClassifierOutput
    return F.cross_entropy(logits, torch.from_numpy(LABELS))


def optimizer(model):
    return torch_adamw(model, decay_all=bug(BUGS) == "decay_all")

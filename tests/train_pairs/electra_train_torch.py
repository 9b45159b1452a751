"""ELECTRA token classification in TRAINING mode, HF transformers side: tiny random config (no
download; embedding_size 16 != hidden 32: embeddings_project), eager attention, dropout 0.1
(hidden and attention), model.train(), token-level cross-entropy over 5 tags with the padded
positions labelled -100 (ignored), plain torch.optim.Adam (lr 1e-3, betas (0.9, 0.999), eps
1e-8, no weight decay) with torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5) in
clip_grad() (after backward, before the step).
Twin: electra_train_paddle.py. Ground truth: electra_train_truth.json (run with --steps 3).

PADIFF_BUG (this side only):
  keep_prob -> ElectraConfig(hidden_dropout_prob=0.9): the keep probability of the TF
              reference (its dropout() calls tf.nn.dropout(x, 1.0 - dropout_prob), whose second
              argument is keep_prob) passed as torch's drop probability: every hidden dropout
              (embeddings, after attention, after the FFN, before the classifier) drops 90 %
              instead of 10 %; attention dropout stays 0.1
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import BATCH, BETA1, BETA2, EPS, LR, SEQ, bug
from transformers import ElectraConfig, ElectraForTokenClassification

BUGS = {"keep_prob"} | {"paddle_clip_by_value", "paddle_ce_mean_all"}  # the paddle side's, ignored here
CONFIG = dict(
    vocab_size=1000, embedding_size=16, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=4, intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.1,
    attention_probs_dropout_prob=0.1, max_position_embeddings=64, type_vocab_size=2,
    initializer_range=0.02, pad_token_id=0, layer_norm_eps=1e-12, num_labels=5,
    position_embedding_type="absolute",
)
NUM_TAGS, CLIP = 5, 0.5


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    cfg = dict(CONFIG, hidden_dropout_prob=0.9) if b == "keep_prob" else CONFIG
    m = ElectraForTokenClassification(ElectraConfig(**cfg, attn_implementation="eager"))
    m.train()
    return m


def _arrays():
    rng = np.random.default_rng(7)
    ids = rng.integers(1, 1000, (BATCH, SEQ)).astype("int64")  # no pad id (0) ...
    types = np.zeros((BATCH, SEQ), "int64")
    mask = np.ones((BATCH, SEQ), "int64")
    tags = rng.integers(0, NUM_TAGS, (BATCH, SEQ)).astype("int64")
    ids[1, 5:] = 0  # ... except the padding: the second sample has 5 tokens
    mask[1, 5:] = 0
    labels = np.where(mask == 1, tags, -100)  # padded positions ignored by the loss
    return ids, types, mask, labels, tags


def inputs():
    ids, types, mask, _, _ = _arrays()
    return (), {"input_ids": torch.from_numpy(ids), "token_type_ids": torch.from_numpy(types),
                "attention_mask": torch.from_numpy(mask)}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]  # TokenClassifierOutput [2, 8, 5]
    labels = _arrays()[3]
    return F.cross_entropy(logits.reshape(-1, NUM_TAGS), torch.from_numpy(labels.reshape(-1)), ignore_index=-100)


def optimizer(model):
    return torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=LR, betas=(BETA1, BETA2), eps=EPS)


def clip_grad(model):
    torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)

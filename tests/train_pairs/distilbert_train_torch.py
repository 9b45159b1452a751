"""DistilBERT sequence classification in TRAINING mode, HF transformers side: tiny random
config (no download), eager attention, dropout 0.1 (hidden, attention and the classifier's
seq_classif_dropout), model.train(), cross-entropy over 3 labels, the WHOLE embeddings block
FROZEN (word and position embeddings and their LayerNorm: `requires_grad_(False)`), the
attention key biases frozen too, and torch.optim.RMSprop (alpha 0.9, momentum 0.5, eps 1e-12
outside the root) over the trainable tensors. Same batch every step (sample 1 padded after 5
tokens). Twin: distilbert_train_paddle.py (see its docstring for the RMSProp conventions).
Ground truth: distilbert_train_truth.json (run with --steps 4).

PADIFF_BUG (this side only):
  pos_emb_trainable -> only embeddings.word_embeddings is frozen ("freeze the embedding"): the
              position embeddings and the embeddings LayerNorm stay trainable and are updated
  sum_loss  -> cross_entropy(..., reduction="sum") instead of the mean over the batch
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import BATCH, SEQ, bug
from transformers import DistilBertConfig, DistilBertForSequenceClassification

BUGS = {"pos_emb_trainable", "sum_loss"} | {"paddle_rho_default"}  # the paddle side's, ignored here
# HF names: dim = hidden_size, hidden_dim = intermediate_size, dropout = hidden dropout,
# seq_classif_dropout = the head's dropout (HF default 0.2; paddlenlp uses hidden_dropout_prob)
CONFIG = dict(
    vocab_size=1000, dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=64,
    activation="gelu", dropout=0.1, attention_dropout=0.1, seq_classif_dropout=0.1,
    initializer_range=0.02, pad_token_id=0, sinusoidal_pos_embds=False, num_labels=3,
)
LR, ALPHA, MOMENTUM, EPS_TORCH = 1e-3, 0.9, 0.5, 1e-12
LABELS = np.array([2, 0], "int64")


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    m = DistilBertForSequenceClassification(DistilBertConfig(**CONFIG, attn_implementation="eager"))
    for block in m.distilbert.transformer.layer:
        block.attention.k_lin.bias.requires_grad_(False)
    if b == "pos_emb_trainable":
        m.distilbert.embeddings.word_embeddings.requires_grad_(False)
    else:
        m.distilbert.embeddings.requires_grad_(False)  # frozen embeddings
    m.train()
    return m


def _arrays():
    rng = np.random.default_rng(11)
    ids = rng.integers(1, 1000, (BATCH, SEQ)).astype("int64")  # no pad id (0)
    mask = np.ones((BATCH, SEQ), "int64")
    ids[1, 5:] = 0  # second sample padded after 5 tokens
    mask[1, 5:] = 0
    return ids, mask


def inputs():
    ids, mask = _arrays()
    return (), {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask)}


def loss(output):
    logits = output.logits if hasattr(output, "logits") else output[0]  # SequenceClassifierOutput
    reduction = "sum" if bug(BUGS) == "sum_loss" else "mean"
    return F.cross_entropy(logits, torch.from_numpy(LABELS), reduction=reduction)


def optimizer(model):
    params = [p for p in model.parameters() if p.requires_grad]
    return torch.optim.RMSprop(params, lr=LR, alpha=ALPHA, eps=EPS_TORCH, momentum=MOMENTUM, centered=False)

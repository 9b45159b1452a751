"""BERT sequence classification in TRAINING mode, paddlenlp side: tiny random config (no
download), dropout 0.1 (hidden and attention), model.train(), cross-entropy over 3 labels,
AdamW (lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay 0.01 on matrices only).
Twin: bert_train_torch.py. Ground truth: bert_train_truth.json (run with --steps 3).

PADIFF_BUG (this side only):
  emb_eval -> bert.embeddings left in eval mode after model.train() (a porter "freezing" the
              embeddings): its dropout is off, the rest of the model trains with dropout
  paddle_head_not_optimized -> the optimizer is built over m.bert.parameters() (the backbone)
              instead of m.parameters(): the classifier gets its gradient but is never updated
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import BATCH, SEQ, bug, paddle_adamw, randomize_paddle, token_ids
from paddlenlp.transformers import BertConfig, BertForSequenceClassification

BUGS = {"emb_eval", "paddle_head_not_optimized"} | {"cls_dropout", "decay_all"}  # the torch side's, ignored here
CONFIG = dict(
    vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, max_position_embeddings=64, type_vocab_size=2,
    hidden_act="gelu", hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
    layer_norm_eps=1e-12, initializer_range=0.02, pad_token_id=0, num_labels=3,
)
LABELS = np.array([0, 2], "int64")


def model():
    b = bug(BUGS)
    paddle.seed(0)
    m = BertForSequenceClassification(BertConfig(**CONFIG))
    randomize_paddle(m)
    m.train()
    if b == "emb_eval":
        m.bert.embeddings.eval()
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
    return (), {"input_ids": paddle.to_tensor(ids), "token_type_ids": paddle.to_tensor(types),
                "attention_mask": paddle.to_tensor(mask)}


def loss(output):
    logits = output if isinstance(output, paddle.Tensor) else output[0]  # bare logits [2, 3]
    return F.cross_entropy(logits, paddle.to_tensor(LABELS))


def optimizer(model):
    if bug(BUGS) == "paddle_head_not_optimized":  # the backbone's parameters only
        return paddle_adamw(model.bert)
    return paddle_adamw(model)

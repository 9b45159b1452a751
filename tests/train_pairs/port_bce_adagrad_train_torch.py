"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_bce_adagrad_train_paddle.py) the torchtext text-classification-tutorial way.

    BagTagger: registers bag (nn.EmbeddingBag 60 x 16, mode "mean"), then mlp = Sequential(
        Linear 16 -> 32, ReLU, Dropout(0.0), Linear 32 -> 5) (.0-.3); calls bag(text, offsets), mlp
    forward(text [N] int64 (the 8 documents concatenated, no padding), offsets [8]) -> logits [8, 5]
model.train() (the dropout has p 0).

Data: the same documents and tags as the paddle side (default_rng(7600 + step), the same recipe),
batched as torchtext's collate_batch does: one flat id tensor and the start offset of each document.
Loss: nn.BCEWithLogitsLoss(pos_weight=[3, 1.5, 5, 1, 2.3]) (mean).
Optimizer: torch.optim.Adagrad(lr 0.05, eps 1e-10, initial_accumulator_value 0.1, weight_decay 1e-4
(added to the gradient, every parameter)) + LambdaLR(lambda s: 0.25 + 0.75 * min(s, 4) / 4) stepped
after every update: lr 0.0125, 0.021875, 0.03125 for updates 1..3.
The paddle side puts its L2 in paddle's regularizer; L2 written into the loss would give the same
Adagrad updates but another loss value and other gradients, so both keep it in the optimizer.

PADIFF_BUG (this side only):
  torch_weight_not_pos_weight -> nn.BCEWithLogitsLoss(weight=pos_weight): the per-class vector
              passed as `weight` (rescales BOTH terms of every class) instead of `pos_weight`
              (rescales the positive term only)
"""
import numpy as np
import torch
from _train_common import bug
from torch import nn

BUGS = {"torch_weight_not_pos_weight"} | {"paddle_acc_init_default", "paddle_dropout_default"}  # paddle's, ignored
VOCAB_SIZE, EMBED_DIM, HIDDEN_DIM, NUM_TAGS, BATCH_SIZE, MAX_LEN = 60, 16, 32, 5, 8, 12
DROPOUT = 0.0
TAG_PREVALENCE = np.array([0.25, 0.4, 0.15, 0.5, 0.3])
POS_WEIGHT = torch.tensor([3.0, 1.5, 5.0, 1.0, 2.3])
LR, WARMUP_STEPS, WARMUP_FACTOR = 0.05, 4, 0.25
ADAGRAD_EPS, INITIAL_ACCUMULATOR, WEIGHT_DECAY = 1e-10, 0.1, 1e-4

_TAGS = {}


def sample(step):
    rng = np.random.default_rng(7600 + step)
    lengths = rng.integers(4, MAX_LEN + 1, BATCH_SIZE)
    texts = [rng.integers(1, VOCAB_SIZE, n).astype(np.int64) for n in lengths]
    tags = (rng.random((BATCH_SIZE, NUM_TAGS)) < TAG_PREVALENCE).astype(np.float32)
    return texts, tags


def collate_batch(texts):
    offsets = np.cumsum([0] + [len(t) for t in texts[:-1]]).astype(np.int64)
    return torch.from_numpy(np.concatenate(texts)), torch.from_numpy(offsets)


class BagTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(VOCAB_SIZE, EMBED_DIM, mode="mean")
        self.mlp = nn.Sequential(nn.Linear(EMBED_DIM, HIDDEN_DIM), nn.ReLU(), nn.Dropout(DROPOUT),
                                 nn.Linear(HIDDEN_DIM, NUM_TAGS))

    def forward(self, text, offsets):
        return self.mlp(self.bag(text, offsets))


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = BagTagger()
    m.train()
    return m


def inputs(step=0):
    texts, tags = sample(step)
    text, offsets = collate_batch(texts)
    _TAGS["tags"] = torch.from_numpy(tags)
    return (text, offsets), {}


def loss(output):
    dt = output.dtype
    if bug(BUGS) == "torch_weight_not_pos_weight":
        criterion = nn.BCEWithLogitsLoss(weight=POS_WEIGHT.to(dt))
    else:
        criterion = nn.BCEWithLogitsLoss(pos_weight=POS_WEIGHT.to(dt))
    return criterion(output, _TAGS["tags"].to(dt))


def optimizer(model):
    opt = torch.optim.Adagrad(model.parameters(), lr=LR, eps=ADAGRAD_EPS,
                              initial_accumulator_value=INITIAL_ACCUMULATOR, weight_decay=WEIGHT_DECAY)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: WARMUP_FACTOR + (1.0 - WARMUP_FACTOR) * min(s, WARMUP_STEPS) / WARMUP_STEPS)
    return opt, sched

"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_multilabel_softmargin_sgd_linearlr_train_paddle.py): a multi-label image tagger
with nn.MultiLabelSoftMarginLoss(weight), torch.optim.SGD(momentum, dampening, weight_decay) and
LinearLR warm-up.

    Tagger: registers features = Sequential(Conv2d 3 -> 8, ReLU, MaxPool2d 2, Conv2d 8 -> 16,
        GroupNorm(4, 16), ReLU, AdaptiveAvgPool2d 1, Flatten) (.0-.7), classifier =
        Sequential(Dropout 0.2, Linear 16 -> 6) (.0-.1)
    forward(images) -> logits [8, 6]

Data: the same batches as the paddle side (default_rng(4410 + step), the same recipe).
Loss: nn.MultiLabelSoftMarginLoss(weight=tensor([0.6, 1.4, 1.0, 2.2, 0.8, 1.7])).
Optimizer: SGD(lr 0.2, momentum 0.9, dampening 0.1, weight_decay 5e-4) with
LinearLR(start_factor 0.25, end_factor 1.0, total_iters 3): lr 0.05, 0.1, 0.15 for updates 1..3.

PADIFF_BUG (this side only):
  torch_keep_prob -> the classifier's dropout built from the original TF recipe's keep_prob 0.8:
              nn.Dropout(0.8) (drops 80 %) instead of nn.Dropout(0.2)
"""
import numpy as np
import torch
from _train_common import bug
from torch import nn

BUGS = {"torch_keep_prob"} | {"paddle_pos_weight", "paddle_velocity_zeros"}  # the paddle side's, ignored here
BATCH, TAGS = 8, 6
TAG_FREQ = np.array([0.5, 0.2, 0.35, 0.1, 0.6, 0.15])
TAG_WEIGHT = [0.6, 1.4, 1.0, 2.2, 0.8, 1.7]
KEEP_PROB = 0.8

_batch = {}


def sample(step):
    rng = np.random.default_rng(4410 + step)
    images = rng.standard_normal((BATCH, 3, 12, 12)).astype(np.float32)
    tags = (rng.random((BATCH, TAGS)) < TAG_FREQ).astype(np.float32)
    tags[np.arange(BATCH), rng.integers(0, TAGS, BATCH)] = 1.0
    return images, tags


class Tagger(nn.Module):
    def __init__(self, head_dropout=0.2):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.GroupNorm(4, 16), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.classifier = nn.Sequential(nn.Dropout(head_dropout), nn.Linear(16, TAGS))

    def forward(self, images):
        return self.classifier(self.features(images))


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    m = Tagger(head_dropout=KEEP_PROB) if b == "torch_keep_prob" else Tagger()
    m.train()
    return m


def inputs(step=0):
    images, tags = sample(step)
    _batch["tags"] = torch.from_numpy(tags)
    return (torch.from_numpy(images),), {}


def loss(output):
    criterion = nn.MultiLabelSoftMarginLoss(weight=torch.tensor(TAG_WEIGHT, dtype=output.dtype))
    return criterion(output, _batch["tags"].to(output.dtype))


def optimizer(model):
    opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9, dampening=0.1, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, end_factor=1.0, total_iters=3)
    return opt, sched

"""MobileNetV2 in TRAINING mode, torchvision side: weights=None, 10 classes, inputs N(0, 1)
[4, 3, 64, 64], model.train(): BatchNorm normalises with batch statistics and updates its
running stats (momentum 0.1 = paddle 0.9), classifier dropout 0.2 on; cross-entropy;
SGD(lr 1e-3, momentum 0.9) (dampening 0, no nesterov) = paddle Momentum(0.9).
Twin: mobilenet_v2_train_paddle.py. Ground truth: mobilenet_v2_train_truth.json.

PADIFF_BUG (this side only):
  bn_momentum -> every BatchNorm built with momentum 0.9: paddle's value copied without
                 converting the convention (torch: running = (1 - m) * running + m * batch)
  nesterov    -> SGD(..., nesterov=True): the paddle side uses plain momentum
  softmax_ce  -> the loss applies softmax to the logits before F.cross_entropy (which applies
                 log-softmax itself): cross-entropy of the probabilities, not of the logits
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from _tv import torchvision  # torchvision from <repo>/.vision-site, see tests/vision_pairs/_tv.py

BUGS = {"bn_momentum", "nesterov", "softmax_ce"} | {"dropout_p"}  # the paddle side's, ignored here
BATCH, SIZE, LR = 4, 64, 1e-3  # batch 4: at batch 2 even float64 training diverges from 1e-16 noise
LABELS = (np.arange(BATCH) * 3 % 10).astype("int64")


def _bug():
    b = os.environ.get("PADIFF_BUG", "")
    if b and b not in BUGS:
        raise ValueError(f"unknown PADIFF_BUG={b!r}; this family knows {sorted(BUGS)}")
    return b


def model():
    b = _bug()
    torch.manual_seed(0)
    m = torchvision.models.mobilenet_v2(num_classes=10, weights=None)
    if b == "bn_momentum":
        for mod in m.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.momentum = 0.9
    m.train()
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((BATCH, 3, SIZE, SIZE)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    if _bug() == "softmax_ce":
        return F.cross_entropy(F.softmax(output, dim=1), torch.from_numpy(LABELS))
    return F.cross_entropy(output, torch.from_numpy(LABELS))


def optimizer(model):
    return torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9, nesterov=_bug() == "nesterov")

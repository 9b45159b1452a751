"""ResNet-18 in train mode, paddle.vision side: random init (no download), model.train():
BatchNorm normalises with batch statistics and updates its running stats; SGD lr 0.01.

PADIFF_BUG=global_stats plants this side's bug: layer3.0.bn2 has use_global_stats=True, so it
normalises with its running stats even in training (a frozen BatchNorm).
PADIFF_BUG=paddle_loss_sum: the loss sums the squares ((output**2).sum()) instead of taking their
mean: 20 times the loss and every gradient (batch 2 x 10 logits).
"""
import os

import numpy as np
import paddle
from paddle.vision.models import resnet18


def model():
    paddle.seed(0)
    m = resnet18(num_classes=10)
    m.train()
    if os.environ.get("PADIFF_BUG", "") == "global_stats":
        m.layer3[0].bn2._use_global_stats = True
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    if os.environ.get("PADIFF_BUG", "") == "paddle_loss_sum":
        return (output**2).sum()
    return (output**2).mean()


def optimizer(model):
    # paddle's parameters() also lists the BatchNorm running stats (stop_gradient=True): leave them out
    params = [p for p in model.parameters() if not p.stop_gradient]
    return paddle.optimizer.SGD(learning_rate=0.01, parameters=params)

"""MobileNetV2 in TRAINING mode, paddle.vision side: random init (no download), 10 classes,
inputs N(0, 1) [4, 3, 64, 64], model.train(): BatchNorm normalises with batch statistics and
updates its running stats (paddle momentum 0.9 = torch momentum 0.1; paddle stores the biased
batch variance, torch the unbiased one: a convention), classifier dropout 0.2 on;
cross-entropy; paddle.optimizer.Momentum(lr 1e-3, momentum 0.9) = torch SGD(lr 1e-3,
momentum 0.9, dampening 0): velocity = 0.9 * velocity + grad, param -= lr * velocity.
Twin: mobilenet_v2_train_torch.py. Ground truth: mobilenet_v2_train_truth.json.

In fp32 this twin agrees at step 0 only: training it is chaotic (ReLU6/BatchNorm at small
batch), so steps 1 and 2 differ by percents, as torch differs from itself when its weights
move by one ulp; in float64 the twin agrees over 3 steps (see NOTES.md).

PADIFF_BUG (this side only):
  dropout_p -> the classifier's dropout has p 0.5 instead of 0.2
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle.vision.models import mobilenet_v2

BUGS = {"dropout_p"} | {"bn_momentum", "nesterov", "softmax_ce"}  # the torch side's, ignored here
BATCH, SIZE, LR = 4, 64, 1e-3  # batch 4: at batch 2 even float64 training diverges from 1e-16 noise
LABELS = (np.arange(BATCH) * 3 % 10).astype("int64")


def _bug():
    b = os.environ.get("PADIFF_BUG", "")
    if b and b not in BUGS:
        raise ValueError(f"unknown PADIFF_BUG={b!r}; this family knows {sorted(BUGS)}")
    return b


def model():
    b = _bug()
    paddle.seed(0)
    m = mobilenet_v2(num_classes=10)
    m.train()
    if b == "dropout_p":
        m.classifier[0].p = 0.5
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((BATCH, 3, SIZE, SIZE)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    return F.cross_entropy(output, paddle.to_tensor(LABELS))


def optimizer(model):
    # paddle's parameters() also lists the BatchNorm running stats (stop_gradient=True): leave them out
    params = [p for p in model.parameters() if not p.stop_gradient]
    return paddle.optimizer.Momentum(learning_rate=LR, momentum=0.9, parameters=params)

"""VGG-11 with BatchNorm in TRAINING mode, paddle.vision side: `VGG(make_layers(cfg, batch_norm=True))`
with VGG-11's layer pattern at 1/8 width (channels 8-16-32-32-64-64-64-64, the 'A' configuration
/ 8) and a CIFAR-style head: AdaptiveAvgPool2D(1) and a classifier with the library's layout
(Linear, ReLU, Dropout(0.5), Linear, ReLU, Dropout(0.5), Linear) at width 32, 10 classes. The
library's own VGG head (Linear(512*7*7, 4096) ...) alone has 120 M parameters: too large to train
and record here. Random init (no download), inputs N(0, 1) [4, 3, 32, 32], labels [0, 3, 6, 9],
model.train(): BatchNorm uses batch statistics and updates its running stats, dropout 0.5 on.
Training: paddle.optimizer.Momentum(momentum 0.9, weight_decay=L2Decay(5e-4): coupled L2, the
gradient gets 5e-4 * param before the velocity) over the trainable parameters, learning rate a
paddle.optimizer.lr.StepDecay(0.01, step_size=2, gamma=0.5) (the loop steps it after every
optimizer step): lr 0.01, 0.01, 0.005, 0.005 over the 4 steps.
Twin: vgg11_bn_train_torch.py. Ground truth: vgg11_bn_train_truth.json.

PADIFF_BUG (this side only):
  paddle_sched_last_epoch -> StepDecay(..., last_epoch=0): the porter "starts at epoch 0", but
                             paddle's LRScheduler steps once in its constructor, so the schedule
                             starts at epoch 1 and halves one step early (0.01, 0.005, 0.005, 0.0025)
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn
from paddle.vision.models import VGG
from paddle.vision.models.vgg import make_layers

BUGS = {"paddle_sched_last_epoch"} | {"bn_frozen_stats", "dampening"}  # the torch side's, ignored here
BATCH, SIZE, LR, WIDTH = 4, 32, 0.01, 32
CFG = [8, "M", 16, "M", 32, 32, "M", 64, 64, "M", 64, 64, "M"]  # VGG-11 ('A') / 8
LABELS = (np.arange(BATCH) * 3 % 10).astype("int64")


def model():
    bug(BUGS)
    paddle.seed(0)
    m = VGG(make_layers(CFG, batch_norm=True), num_classes=0, with_pool=False)  # no 25088x4096 head
    m.with_pool, m.num_classes = True, 10
    m.avgpool = nn.AdaptiveAvgPool2D(1)
    m.classifier = nn.Sequential(
        nn.Linear(64, WIDTH), nn.ReLU(), nn.Dropout(0.5),
        nn.Linear(WIDTH, WIDTH), nn.ReLU(), nn.Dropout(0.5),
        nn.Linear(WIDTH, 10),
    )
    m.train()
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((BATCH, 3, SIZE, SIZE)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    return F.cross_entropy(output, paddle.to_tensor(LABELS))


def optimizer(model):
    b = bug(BUGS)
    sched = paddle.optimizer.lr.StepDecay(learning_rate=LR, step_size=2, gamma=0.5,
                                          last_epoch=0 if b == "paddle_sched_last_epoch" else -1)
    # paddle's parameters() also lists the BatchNorm running stats (stop_gradient=True): leave them out
    params = [p for p in model.parameters() if not p.stop_gradient]
    opt = paddle.optimizer.Momentum(learning_rate=sched, momentum=0.9, parameters=params,
                                    weight_decay=paddle.regularizer.L2Decay(5e-4))
    return opt, sched

"""ShuffleNetV2 x0.5 in TRAINING mode, torchvision side: shufflenet_v2_x0_5(num_classes=10,
weights=None), inputs N(0, 1) [4, 3, 64, 64], labels [0, 3, 6, 9], cross-entropy, model.train()
(batch statistics; running stats with momentum 0.1 = paddle 0.9).
Training: torch.optim.Adagrad(lr=1e-3, lr_decay=0.1, eps=1e-8, initial_accumulator_value=0.1):
    s += g^2 ; w -= lr / (1 + 0.1 (t - 1)) * g / (sqrt(s) + eps)
= paddle Adagrad(initial_accumulator_value=0.1, epsilon=1e-8) with
paddle.optimizer.lr.InverseTimeDecay(1e-3, gamma=0.1) stepped after each step (paddle's
Adagrad has no lr_decay argument).
Twin: shufflenet_v2_x0_5_train_paddle.py. Ground truth: shufflenet_v2_x0_5_train_truth.json.

PADIFF_BUG (this side only):
  bn_cumulative -> every BatchNorm2d gets momentum=None (the porter's "library default"): torch
                   then keeps a cumulative average of the batch statistics (factor 1 / batches
                   seen) instead of the exponential average with 0.1
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from _tv import torchvision  # torchvision from <repo>/.vision-site, see tests/vision_pairs/_tv.py

BUGS = {"bn_cumulative"} | {"paddle_acc_init"}  # the paddle side's, ignored here
BATCH, SIZE = 4, 64
LR, LR_DECAY, EPS, ACC0 = 1e-3, 0.1, 1e-8, 0.1
LABELS = (np.arange(BATCH) * 3 % 10).astype("int64")


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    m = torchvision.models.shufflenet_v2_x0_5(num_classes=10, weights=None)
    if b == "bn_cumulative":
        for mod in m.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.momentum = None
    m.train()
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((BATCH, 3, SIZE, SIZE)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    return F.cross_entropy(output, torch.from_numpy(LABELS))


def optimizer(model):
    bug(BUGS)
    return torch.optim.Adagrad(model.parameters(), lr=LR, lr_decay=LR_DECAY, eps=EPS, initial_accumulator_value=ACC0)

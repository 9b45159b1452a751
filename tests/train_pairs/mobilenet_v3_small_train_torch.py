"""MobileNetV3-Small in TRAINING mode, torchvision side: weights=None, 10 classes, inputs
N(0, 1) [4, 3, 96, 96], model.train() (BatchNorm batch statistics, eps 0.001, momentum 0.01;
classifier dropout 0.2), cross-entropy, torch.optim.SGD(lr=0.01, momentum=0.9, nesterov=True)
with torch.optim.lr_scheduler.MultiStepLR(milestones=[2, 3], gamma=0.1) (lr 0.01, 0.01, 1e-3,
1e-4 for updates 1..4). Same batch every step. Twin: mobilenet_v3_small_train_paddle.py (its
docstring lists the conventions). Ground truth: mobilenet_v3_small_train_truth.json (run with
--steps 4).

PADIFF_BUG (this side only):
  bn_affine_frozen -> every BatchNorm2d's weight and bias frozen (requires_grad_(False), the
              "frozen BN" fine-tuning habit) while the paddle reference trains them; the
              running statistics still update
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from _tv import torchvision  # torchvision from <repo>/.vision-site, see tests/vision_pairs/_tv.py

BUGS = {"bn_affine_frozen"} | {"paddle_nesterov_kw", "paddle_bn_momentum_tv"}  # the paddle side's, ignored here
BATCH, SIZE = 4, 96
LR, MOMENTUM, MILESTONES, GAMMA = 0.01, 0.9, [2, 3], 0.1
LABELS = np.array([1, 4, 7, 9], "int64")


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    m = torchvision.models.mobilenet_v3_small(num_classes=10, weights=None)
    if b == "bn_affine_frozen":
        for sub in m.modules():
            if isinstance(sub, torch.nn.BatchNorm2d):
                sub.requires_grad_(False)
    m.train()
    return m


def inputs():
    x = np.random.default_rng(3).standard_normal((BATCH, 3, SIZE, SIZE)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    return F.cross_entropy(output, torch.from_numpy(LABELS))


def optimizer(model):
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.SGD(params, lr=LR, momentum=MOMENTUM, nesterov=True)
    return opt, torch.optim.lr_scheduler.MultiStepLR(opt, milestones=MILESTONES, gamma=GAMMA)

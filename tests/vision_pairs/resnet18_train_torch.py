"""ResNet-18 in train mode, torchvision side: weights=None, model.train(): BatchNorm normalises
with batch statistics and updates its running stats; SGD lr 0.01.

Planted bugs (PADIFF_BUG): bn_eval, no_residual -- see resnet18_train_truth.json.
"""
import os
import types

import numpy as np
import torch
from _tv import torchvision  # torchvision from <repo>/.vision-site, see _tv.py


def _forward_no_residual(self, x):
    # torchvision's BasicBlock.forward without `out += identity`
    out = self.relu(self.bn1(self.conv1(x)))
    out = self.bn2(self.conv2(out))
    return self.relu(out)


def model():
    torch.manual_seed(0)
    m = torchvision.models.resnet18(num_classes=10, weights=None)
    m.train()
    bug = os.environ.get("PADIFF_BUG", "")
    if bug == "bn_eval":  # layer2.0.bn1 left in eval mode: running stats (0, 1) instead of batch stats
        m.layer2[0].bn1.eval()
    elif bug == "no_residual":  # layer1.1 forgets its skip connection
        blk = m.layer1[1]
        blk.forward = types.MethodType(_forward_no_residual, blk)
    return m


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype("float32")
    return (torch.from_numpy(x),), {}


def loss(output):
    return (output**2).mean()


def optimizer(model):
    return torch.optim.SGD(model.parameters(), lr=0.01)

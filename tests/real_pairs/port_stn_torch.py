"""Hand-written port, torch side: a spatial-transformer classifier on 1x28x28 images (written by "person B").

The same math as port_stn_paddle.py, re-implemented by hand in the style of the PyTorch
"Spatial Transformer Networks" tutorial: input [2, 1, 28, 28] (positional), output log-class
probabilities [2, 10]. A localization net predicts a 2x3 affine matrix per image, the image is
warped with F.affine_grid + F.grid_sample (mode and padding left at torch's defaults, bilinear /
zeros; align_corners=False passed explicitly, which is torch's default too, to silence its
"default behavior has changed" warning), and a small conv net classifies the warped image.

Torch idioms on this side:
- root `Net` registers `classifier` (a `LeNet`) FIRST, then `stn` (a `STN`); forward:
  classifier(stn(x)).
- `STN` registers `localization` (nn.Sequential: Conv2d(1, 8, 7), MaxPool2d(2, stride=2),
  ReLU(True), Conv2d(8, 10, 5), MaxPool2d(2, stride=2), ReLU(True) -- max-pool BEFORE relu, the
  tutorial order), then two separate Linears `fc_loc1` (90 -> 32) and `fc_loc2` (32 -> 6); the
  relu between them, the view to [B, 2, 3], affine_grid and grid_sample are all inline in
  STN.forward (no sampler module).
- `fc_loc2` gets the tutorial's exact identity init in __init__ (zero weight, bias [1 0 0 0 1 0]);
  it is overwritten by the copied paddle weights.
- `LeNet` registers `conv1`, `conv2`, `conv2_bn` (BatchNorm2d(20)), `fc1`, `fc2`; the pooling
  (F.max_pool2d), relus, flatten (view) and log_softmax are inline.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_theta_transposed -> STN.forward reads the 6 localization outputs column-major
                            (view(-1, 3, 2).transpose(1, 2)) instead of row-major view(-1, 2, 3)
  torch_bn_after_pool    -> LeNet.forward applies conv2_bn after the max-pool and relu of the
                            second conv instead of between the conv and the pool
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

BATCH, IMG, NUM_CLASSES = 2, 28, 10
OWN_BUGS = {"torch_theta_transposed", "torch_bn_after_pool"}
OTHER_BUGS = {"paddle_sample_align_corners", "paddle_bn_eps"}


class STN(nn.Module):
    def __init__(self, theta_transposed=False):
        super().__init__()
        self.theta_transposed = theta_transposed
        self.localization = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=7),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
            nn.Conv2d(8, 10, kernel_size=5),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
        )
        self.fc_loc1 = nn.Linear(10 * 3 * 3, 32)
        self.fc_loc2 = nn.Linear(32, 3 * 2)
        # identity init, as in the tutorial (the paddle weights are copied over it)
        self.fc_loc2.weight.data.zero_()
        self.fc_loc2.bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

    def forward(self, x):
        xs = self.localization(x)
        xs = xs.view(-1, 10 * 3 * 3)
        theta = self.fc_loc2(F.relu(self.fc_loc1(xs)))
        if self.theta_transposed:
            theta = theta.view(-1, 3, 2).transpose(1, 2)
        else:
            theta = theta.view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        return F.grid_sample(x, grid, align_corners=False)


class LeNet(nn.Module):
    def __init__(self, bn_after_pool=False):
        super().__init__()
        self.bn_after_pool = bn_after_pool
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_bn = nn.BatchNorm2d(20)
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, NUM_CLASSES)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        if self.bn_after_pool:
            x = self.conv2_bn(F.relu(F.max_pool2d(self.conv2(x), 2)))
        else:
            x = F.relu(F.max_pool2d(self.conv2_bn(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


class Net(nn.Module):
    def __init__(self, bug=""):
        super().__init__()
        self.classifier = LeNet(bn_after_pool=bug == "torch_bn_after_pool")
        self.stn = STN(theta_transposed=bug == "torch_theta_transposed")

    def forward(self, x):
        return self.classifier(self.stn(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_stn torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    return Net(bug).eval()


def _images():
    rng = np.random.default_rng(31)
    yy, xx = np.mgrid[0:IMG, 0:IMG].astype("float32")
    imgs = np.zeros((BATCH, 1, IMG, IMG), dtype="float32")
    for b in range(BATCH):
        for _ in range(4):
            cy, cx = rng.uniform(6, 22, 2)
            s = rng.uniform(1.5, 3.5)
            imgs[b, 0] += np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * s * s))
        imgs[b, 0] += 0.05 * rng.standard_normal((IMG, IMG))
    imgs = np.clip(imgs, 0.0, 1.0)
    return ((imgs - 0.1307) / 0.3081).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # log-probabilities [2, 10]: mean negative log-likelihood of fixed labels 3 and 7
    return -(output[0, 3] + output[1, 7]) / 2

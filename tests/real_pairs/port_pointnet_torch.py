"""Hand-written port, torch side: a tiny PointNet classifier (written by "person B").

The same math as port_pointnet_paddle.py, re-implemented by hand. Sizes: batch 2, 64 points,
3 coordinates, 10 classes, eval mode, fp32, BatchNorm eps 1e-3 everywhere. This side keeps the
point cloud in NLC [B, N, C] throughout: every shared per-point layer is an nn.Linear applied to
the last axis (a 1x1 conv written as a Linear), and the BatchNorm1d that follows it gets either
a transposed [B, C, N] view (in the T-Net) or the flattened [B*N, C] rows (in the main MLP).

Torch idioms on this side:
- root `PointNetCls`: `feat` (`PointNetFeat`), `head` = nn.Sequential(Linear(128, 64),
  BatchNorm1d(64), ReLU, Linear(64, 32), Dropout(0.3), BatchNorm1d(32), ReLU, Linear(32, 10));
  log_softmax via F inline.
- `PointNetFeat`: `stn` (`STN3d`), then `mlp` = ModuleList of 3 Linears (3->32->64->128) and
  `norms` = ModuleList of 3 BatchNorm1d, applied on x.reshape(-1, C) and reshaped back; ReLU
  via F.relu inline (not after the last layer); global max over the points (dim 1).
- `STN3d` registers its layers in call order, each Linear next to its BN: lin1 Linear(3, 32),
  bn1, lin2 Linear(32, 64), bn2 (both per point, BN on x.transpose(1, 2)), fc1 Linear(64, 32),
  bn3, fc2 Linear(32, 9); the identity is added as `torch.eye(3).view(1, 9)`; the transform is
  applied as torch.bmm(points [B, N, 3], trans) like the reference implementation.

Planted bug (PADIFF_BUG), see port_pointnet_truth.json; the paddle side's bug names are accepted
and ignored, any other name raises ValueError:
  torch_tnet_bn_no_transpose -> STN3d's second BN is applied to the [B, N, 64] tensor directly,
                                without the transpose: BatchNorm1d(64) then normalises over the
                                64 POINTS (axis 1) with per-channel statistics. It runs silently
                                because N == C == 64 there.
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

BATCH, POINTS, CLASSES = 2, 64, 10
BN_EPS = 1e-3
OWN_BUGS = {"torch_tnet_bn_no_transpose"}
OTHER_BUGS = {"paddle_dropout_downscale", "paddle_bn_eps_positional"}


class STN3d(nn.Module):
    def __init__(self, bn_no_transpose=False):
        super().__init__()
        self.bn_no_transpose = bn_no_transpose
        self.lin1 = nn.Linear(3, 32)
        self.bn1 = nn.BatchNorm1d(32, eps=BN_EPS)
        self.lin2 = nn.Linear(32, 64)
        self.bn2 = nn.BatchNorm1d(64, eps=BN_EPS)
        self.fc1 = nn.Linear(64, 32)
        self.bn3 = nn.BatchNorm1d(32, eps=BN_EPS)
        self.fc2 = nn.Linear(32, 9)

    def forward(self, x):
        # x: [B, N, 3]
        x = F.relu(self.bn1(self.lin1(x).transpose(1, 2)).transpose(1, 2))
        if self.bn_no_transpose:
            x = F.relu(self.bn2(self.lin2(x)))
        else:
            x = F.relu(self.bn2(self.lin2(x).transpose(1, 2)).transpose(1, 2))
        x = torch.max(x, dim=1)[0]  # [B, 64]
        x = F.relu(self.bn3(self.fc1(x)))
        x = self.fc2(x)
        iden = torch.eye(3, dtype=x.dtype, device=x.device).view(1, 9)
        return (x + iden).view(-1, 3, 3)


class PointNetFeat(nn.Module):
    def __init__(self, bn_no_transpose=False):
        super().__init__()
        self.stn = STN3d(bn_no_transpose)
        widths = (3, 32, 64, 128)
        self.mlp = nn.ModuleList([nn.Linear(a, b) for a, b in zip(widths[:-1], widths[1:])])
        self.norms = nn.ModuleList([nn.BatchNorm1d(b, eps=BN_EPS) for b in widths[1:]])

    def forward(self, pts):
        b, n, _ = pts.shape
        trans = self.stn(pts)
        x = torch.bmm(pts, trans)
        for i, (lin, bn) in enumerate(zip(self.mlp, self.norms)):
            x = lin(x)
            x = bn(x.reshape(b * n, -1)).reshape(b, n, -1)
            if i < len(self.mlp) - 1:
                x = F.relu(x)
        return x.max(dim=1).values  # [B, 128]


class PointNetCls(nn.Module):
    def __init__(self, bn_no_transpose=False):
        super().__init__()
        self.feat = PointNetFeat(bn_no_transpose)
        self.head = nn.Sequential(
            nn.Linear(128, 64), nn.BatchNorm1d(64, eps=BN_EPS), nn.ReLU(),
            nn.Linear(64, 32), nn.Dropout(0.3), nn.BatchNorm1d(32, eps=BN_EPS), nn.ReLU(),
            nn.Linear(32, CLASSES),
        )

    def forward(self, points):
        return F.log_softmax(self.head(self.feat(points)), dim=-1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_pointnet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = PointNetCls(bn_no_transpose=bug == "torch_tnet_bn_no_transpose")
    with torch.no_grad():  # this side's own random BN statistics (verify_truth copies paddle's)
        g = torch.Generator().manual_seed(2)
        for mod in m.modules():
            if isinstance(mod, nn.BatchNorm1d):
                c = mod.num_features
                mod.weight.copy_(torch.rand(c, generator=g) + 0.5)
                mod.bias.copy_(0.1 * torch.randn(c, generator=g))
                mod.running_mean.copy_(0.2 * torch.randn(c, generator=g))
                mod.running_var.copy_(1.5 * torch.rand(c, generator=g) + 0.5)
    return m.eval()


def _points():
    rng = np.random.default_rng(3)
    pts = rng.uniform(-1.0, 1.0, (BATCH, POINTS, 3))
    return (pts / np.linalg.norm(pts, axis=2, keepdims=True).max(axis=1, keepdims=True)).astype("float32")


def inputs():
    return (torch.from_numpy(_points()),), {}


def loss(output):
    # log-probabilities [B, 10]
    return (output**2).mean()

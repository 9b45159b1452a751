"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_bn_smoothl1_multistep_train_paddle.py) the torchvision / detectron way.

    RegNet: registers head = Sequential(Linear(16, 32, bias=False), BatchNorm1d(32), ReLU(inplace),
        Dropout(0.2), Linear(32, 2)) (.0 .. .4) first, then stage1 = ConvBNAct(3 -> 8),
        stage2 = ConvBNAct(8 -> 16, stride 2), gap (AdaptiveAvgPool2d(1)); calls stage1, stage2,
        gap, flatten, head
    ConvBNAct: conv (Conv2d 3x3, padding 1, bias=False), bn (BatchNorm2d), act (ReLU(inplace))
BatchNorm: momentum 0.05 (torch's convention: running = 0.95 running + 0.05 batch; paddle's 0.95),
eps 1e-3. model.train().
Same per-step numpy batch as the paddle side (default_rng(4200 + step)).

Loss: written by hand, fvcore's smooth_l1_loss: n = |pred - target|,
where(n < beta, 0.5 n^2 / beta, n - 0.5 beta).mean(), beta 0.5.
Optimizer: SGD(lr 0.05, momentum 0.9, weight_decay 1e-3) + MultiStepLR(milestones=[1, 2],
gamma=0.5) stepped after every update (lr 0.05, 0.025, 0.0125).

PADIFF_BUG (this side only):
  torch_dampening -> SGD(..., momentum=0.9, dampening=0.9): dampening set to the momentum value
              (an old Lua-torch style config): torch's first momentum step copies the gradient
              (no dampening), so update 1 is unchanged; from update 2 on the buffer is
              0.9 buf + 0.1 g instead of 0.9 buf + g
"""
import numpy as np
import torch
from _train_common import bug
from torch import nn

BUGS = {"torch_dampening"} | {"paddle_huber_delta", "paddle_keep_prob"}  # the paddle side's, ignored here
BATCH, IMG, N_OUT = 8, 8, 2
BETA = 0.5
LR, MOMENTUM, WEIGHT_DECAY = 0.05, 0.9, 1e-3

_TARGETS = {}


def get_batch(step):
    rng = np.random.default_rng(4200 + step)
    x = rng.standard_normal((BATCH, 3, IMG, IMG)).astype(np.float32)
    w = np.random.default_rng(4299).standard_normal((3, N_OUT))
    feats = np.stack([x.mean((2, 3)), np.abs(x).mean((2, 3)) - 0.8], -1).reshape(BATCH, 6)
    y = 2.0 * np.tanh(feats[:, :3] @ w) + feats[:, 3:] @ w + 0.3 * rng.standard_normal((BATCH, N_OUT))
    return x, y.astype(np.float32)


def smooth_l1_loss(input, target, beta, reduction="mean"):
    n = torch.abs(input - target)
    loss = torch.where(n < beta, 0.5 * n ** 2 / beta, n - 0.5 * beta)
    return loss.mean() if reduction == "mean" else loss.sum()


class ConvBNAct(nn.Module):
    def __init__(self, in_ch, out_ch, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(in_ch, out_ch, 3, stride=stride, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_ch, eps=1e-3, momentum=0.05)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class RegNet(nn.Module):
    def __init__(self, num_outputs=N_OUT):
        super().__init__()
        self.head = nn.Sequential(
            nn.Linear(16, 32, bias=False), nn.BatchNorm1d(32, eps=1e-3, momentum=0.05), nn.ReLU(inplace=True),
            nn.Dropout(0.2), nn.Linear(32, num_outputs),
        )
        self.stage1 = ConvBNAct(3, 8)
        self.stage2 = ConvBNAct(8, 16, stride=2)
        self.gap = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        x = self.gap(self.stage2(self.stage1(x)))
        return self.head(torch.flatten(x, 1))


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = RegNet()
    m.train()
    return m


def inputs(step=0):
    x, y = get_batch(step)
    _TARGETS["y"] = torch.from_numpy(y)
    return (torch.from_numpy(x),), {}


def loss(output):
    return smooth_l1_loss(output, _TARGETS["y"].to(output.dtype), beta=BETA)


def optimizer(model):
    dampening = 0.9 if bug(BUGS) == "torch_dampening" else 0.0
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, dampening=dampening,
                          weight_decay=WEIGHT_DECAY)
    return opt, torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 2], gamma=0.5)

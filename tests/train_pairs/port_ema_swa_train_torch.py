"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_ema_swa_train_paddle.py): the network and its EMA copy side by side, the EMA kept by
torch.optim.swa_utils.AveragedModel, the Huber loss written by hand.

    EMARegressor: registers online (Net) and ema (AveragedModel(online, multi_avg_fn=
        get_ema_multi_avg_fn(0.9)): a deep copy, ema.module, whose parameters are frozen, and its
        n_averaged counter); forward calls online only
    Net: registers head (RegressionHead: norm LayerNorm 16, an inline F.dropout p 0.2, out Linear
        16 -> 2), features (Sequential(Conv1d 4 -> 16, k 3, pad 1; GELU)), residual
        (DilatedResidual: conv Conv1d k 3 dilation 2 pad 2, act GELU, dropout Dropout 0.1);
        forward: features, residual, mean over time, head
    forward(x [16, 4, 24]) -> [16, 2]

EMA: a post-step hook on the optimizer (Optimizer.register_step_post_hook) calls
ema.update_parameters(online) after every step: AveragedModel copies the weights on its first
update, then lerps with weight 1 - 0.9 (torch._foreach_lerp_).
Loss (by hand): r = pred - y; Huber with delta 0.5: where(|r| < 0.5, 0.5 r^2, 0.5 (|r| - 0.25)),
mean over all elements.
Optimizer: torch.optim.SGD(lr 0.05, momentum 0.9) with two parameter groups: conv / linear weights
(ndim > 1) weight_decay 5e-4, biases and LayerNorm weight_decay 0.
Data: the same minibatches as the paddle side (default_rng(3750 + step), same recipe).

PADIFF_BUG (this side only):
  torch_ema_pre_step -> the EMA hook registered with register_step_pre_hook: the average is
              refreshed before the optimizer updates the weights (it lags one step behind)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

BUGS = {"torch_ema_pre_step"} | {"paddle_huber_delta", "paddle_drop_default"}  # the paddle side's, ignored here
IN_CH, LENGTH, HIDDEN, TARGETS, BATCH = 4, 24, 16, 2, 16
P_RES, P_HEAD = 0.1, 0.2
DELTA = 0.5
LR, MOMENTUM, WEIGHT_DECAY, DECAY = 0.05, 0.9, 5e-4, 0.9

_MB = {}


def minibatch(step):
    rng = np.random.default_rng(3750 + step)
    x = rng.standard_normal((BATCH, IN_CH, LENGTH))
    ramp = np.linspace(-1.0, 1.0, LENGTH)
    first = (x[:, 0] * x[:, 1]).mean(-1) * 3.0 + (x[:, 2] * ramp).mean(-1) * 4.0
    second = np.tanh(x[:, 3].mean(-1) * 3.0) + 0.5 * x[:, 0, :12].mean(-1)
    y = np.stack([first, second], -1) + 0.3 * rng.standard_normal((BATCH, TARGETS))
    return torch.from_numpy(x.astype(np.float32)), torch.from_numpy(y.astype(np.float32))


class RegressionHead(nn.Module):
    def __init__(self, dim, n_out, p):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.p = p
        self.out = nn.Linear(dim, n_out)

    def forward(self, z):
        return self.out(F.dropout(self.norm(z), self.p, self.training))


class DilatedResidual(nn.Module):
    def __init__(self, ch, p):
        super().__init__()
        self.conv = nn.Conv1d(ch, ch, kernel_size=3, padding=2, dilation=2)
        self.act = nn.GELU()
        self.dropout = nn.Dropout(p)

    def forward(self, x):
        return x + self.dropout(self.act(self.conv(x)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = RegressionHead(HIDDEN, TARGETS, P_HEAD)
        self.features = nn.Sequential(nn.Conv1d(IN_CH, HIDDEN, kernel_size=3, padding=1), nn.GELU())
        self.residual = DilatedResidual(HIDDEN, P_RES)

    def forward(self, x):
        return self.head(self.residual(self.features(x)).mean(dim=2))


class EMARegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.online = Net()
        self.ema = AveragedModel(self.online, multi_avg_fn=get_ema_multi_avg_fn(DECAY))
        self.ema.requires_grad_(False)

    def forward(self, x):
        return self.online(x)


def model():
    bug(BUGS)
    torch.manual_seed(3750)
    m = EMARegressor()
    m.train()
    return m


def inputs(step=0):
    x, y = minibatch(step)
    _MB["y"] = y
    return (x,), {}


def loss(output):
    r = output - _MB["y"].to(output.dtype)
    a = r.abs()
    return torch.where(a < DELTA, 0.5 * r * r, DELTA * (a - 0.5 * DELTA)).mean()


def optimizer(model):
    online = model.online
    decay = [p for p in online.parameters() if p.ndim > 1]
    no_decay = [p for p in online.parameters() if p.ndim <= 1]
    opt = torch.optim.SGD([{"params": decay, "weight_decay": WEIGHT_DECAY},
                           {"params": no_decay, "weight_decay": 0.0}], lr=LR, momentum=MOMENTUM)

    def refresh_ema(_opt, _args, _kwargs):
        model.ema.update_parameters(model.online)

    if bug(BUGS) == "torch_ema_pre_step":
        opt.register_step_pre_hook(refresh_ema)
    else:
        opt.register_step_post_hook(refresh_ema)
    return opt

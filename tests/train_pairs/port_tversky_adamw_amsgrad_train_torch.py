"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_tversky_adamw_amsgrad_train_paddle.py): tiny segmentation net, Tversky + CE loss,
AdamW with amsgrad written by hand.

    SegModel: registers stem = Sequential(Conv2d 3 -> 8 3x3 no bias, GroupNorm(2, 8), ReLU,
        Dropout(0.1)) (.0-.3), res (ResidualUnit: conv 3x3 no bias, gn GroupNorm(4, 8); F.relu
        inline, returns x + relu(gn(conv(x)))), mix = Sequential(Conv2d 1x1 no bias,
        GroupNorm(2, 8), ReLU) (.0-.2), head (SegHead: F.dropout(x, p, training) inline, then
        proj = Conv2d 1x1 8 -> 2 with bias)
    forward(x [2, 3, 12, 12]) -> head(mix(res(stem(x))))  [2, 2, 12, 12]

Loss: TverskyLoss module (alpha 0.3 on FP, beta 0.7 on FN, smooth 1; statistics summed over batch
and pixels per class, mean over classes of 1 - TI) + F.cross_entropy(logits, masks).
Optimizer: AdamWAmsgrad, a torch.optim.Optimizer written by hand (decoupled decay
p *= 1 - lr wd; m, v; v_max = max(v_max, v); p -= lr / bc1 * m / (sqrt(v_max) / sqrt(bc2) + eps),
torch.optim.AdamW's amsgrad form), two parameter groups (conv kernels wd 0.05; GroupNorm and
bias tensors wd 0); lr 5e-3, betas (0.9, 0.99), eps 1e-8.
Data: the same batches as the paddle side (default_rng(4500 + step)).

PADIFF_BUG (this side only):
  torch_head_p_default -> SegHead calls F.dropout(x, training=self.training) without p: torch's
              default p 0.5 instead of the configured 0.1
  torch_amsgrad_vhat   -> the running maximum is kept over the bias-corrected second moment
              (v_max = max(v_max, v / bc2); denom sqrt(v_max) + eps), as some write-ups of AMSGrad
              do, instead of over the raw v divided by the current bc2 (torch / paddle form)
"""
import math

import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_head_p_default", "torch_amsgrad_vhat"} | {"paddle_ab_swapped"}  # the paddle side's, ignored here
N_CLASSES, WIDTH, SIZE, BATCH = 2, 8, 12, 2
LR, BETAS, EPS, WD = 5e-3, (0.9, 0.99), 1e-8, 0.05

_TARGET = {}


def make_batch(step):
    rng = np.random.default_rng(4500 + step)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    target = np.zeros((BATCH, SIZE, SIZE), dtype=np.int64)
    for i in range(BATCH):
        cy, cx = rng.uniform(3.0, 9.0, 2)
        radius = rng.uniform(2.5, 4.5)
        target[i] = ((yy - cy) ** 2 + (xx - cx) ** 2 <= radius * radius).astype(np.int64)
    tint = rng.normal(0.0, 1.0, (BATCH, 3, 1, 1))
    img = 0.8 * (target[:, None] - 0.5) * tint + rng.standard_normal((BATCH, 3, SIZE, SIZE))
    return img.astype(np.float32), target


class ResidualUnit(nn.Module):
    def __init__(self, ch, groups):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1, bias=False)
        self.gn = nn.GroupNorm(groups, ch)

    def forward(self, x):
        return x + F.relu(self.gn(self.conv(x)))


class SegHead(nn.Module):
    def __init__(self, ch, n_classes, p):
        super().__init__()
        self.p = p
        self.proj = nn.Conv2d(ch, n_classes, 1)

    def forward(self, x):
        if bug(BUGS) == "torch_head_p_default":
            x = F.dropout(x, training=self.training)
        else:
            x = F.dropout(x, self.p, self.training)
        return self.proj(x)


class SegModel(nn.Module):
    def __init__(self, dropout=0.1):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, WIDTH, 3, padding=1, bias=False), nn.GroupNorm(2, WIDTH),
                                  nn.ReLU(), nn.Dropout(dropout))
        self.res = ResidualUnit(WIDTH, 4)
        self.mix = nn.Sequential(nn.Conv2d(WIDTH, WIDTH, 1, bias=False), nn.GroupNorm(2, WIDTH), nn.ReLU())
        self.head = SegHead(WIDTH, N_CLASSES, dropout)

    def forward(self, x):
        return self.head(self.mix(self.res(self.stem(x))))


class TverskyLoss(nn.Module):
    def __init__(self, alpha=0.3, beta=0.7, smooth=1.0):
        super().__init__()
        self.alpha, self.beta, self.smooth = alpha, beta, smooth

    def forward(self, logits, target):
        p = logits.softmax(dim=1)
        t = F.one_hot(target, logits.shape[1]).permute(0, 3, 1, 2).to(p.dtype)
        dims = (0, 2, 3)
        tp = (p * t).sum(dims)
        fp = (p * (1 - t)).sum(dims)
        fn = ((1 - p) * t).sum(dims)
        index = (tp + self.smooth) / (tp + self.alpha * fp + self.beta * fn + self.smooth)
        return (1 - index).mean()


class AdamWAmsgrad(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, vhat_max=False):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))
        self.vhat_max = vhat_max

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                    state["max_exp_avg_sq"] = torch.zeros_like(p)
                state["step"] += 1
                t = state["step"]
                m, v, vmax = state["exp_avg"], state["exp_avg_sq"], state["max_exp_avg_sq"]
                p.mul_(1 - lr * wd)
                m.mul_(b1).add_(g, alpha=1 - b1)
                v.mul_(b2).addcmul_(g, g, value=1 - b2)
                bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t
                if self.vhat_max:
                    torch.maximum(vmax, v / bc2, out=vmax)
                    denom = vmax.sqrt().add_(eps)
                else:
                    torch.maximum(vmax, v, out=vmax)
                    denom = (vmax.sqrt() / math.sqrt(bc2)).add_(eps)
                p.addcdiv_(m, denom, value=-lr / bc1)


def _criterion(logits, target):
    return F.cross_entropy(logits, target) + TverskyLoss(0.3, 0.7, 1.0)(logits, target)


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = SegModel()
    m.train()
    return m


def inputs(step=0):
    img, target = make_batch(step)
    _TARGET["target"] = torch.from_numpy(target)
    return (torch.from_numpy(img),), {}


def loss(output):
    return _criterion(output, _TARGET["target"])


def optimizer(model):
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.ndim >= 2], "weight_decay": WD},
              {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0}]
    return AdamWAmsgrad(groups, lr=LR, betas=BETAS, eps=EPS, vhat_max=bug(BUGS) == "torch_amsgrad_vhat")

"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_vicreg_sgdm_train_paddle.py) in the style of facebookresearch/vicreg main_vicreg.py.

    VICReg: registers encoder = Sequential(Linear 12 -> 24, BatchNorm1d(24), ReLU, Linear 24 -> 16)
        (.0-.3), then projector built by Projector("32-32", 16) from an "mlp spec" string, as the
        official code does: Sequential(Linear 16 -> 32, BatchNorm1d(32), ReLU(True),
        Linear 32 -> 32 bias=False) (.0-.3)
    forward(x, y): one pass over torch.cat((x, y)) (BatchNorm over both views), then .chunk(2)
        -> (z_x [16, 32], z_y [16, 32])

Loss (vicreg's forward, moved into loss()): repr_loss = F.mse_loss(x, y); x, y centered;
std = torch.sqrt(x.var(dim=0) + 0.0001); std_loss = mean(relu(1 - std_x)) / 2 + mean(relu(1 - std_y)) / 2;
cov = (x.T @ x) / (batch_size - 1); cov_loss = off_diagonal(cov).pow(2).sum() / num_features per
view (the official flatten/view off_diagonal); 25 * repr + 25 * std + 1 * cov.
Optimizer: SGD(lr 0.05, momentum 0.9) with two parameter groups: weight matrices (ndim 2)
weight_decay 5e-4, everything else (biases, BatchNorm) 0 (vicreg's exclude_bias_and_norm).
Data: the same two views as the paddle side (default_rng(3300 + step), same recipe).

PADIFF_BUG (this side only):
  torch_cov_over_n -> the covariance matrix divided by N (x.shape[0], the biased estimate)
                      instead of N - 1 (the official code's batch_size - 1)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_cov_over_n"} | {"paddle_l1_decay", "paddle_bn_momentum"}  # the paddle side's, ignored here
BATCH, IN_DIM, HIDDEN, EMBEDDING, MLP = 16, 12, 24, 16, "32-32"
LR, MOMENTUM, WEIGHT_DECAY = 0.05, 0.9, 5e-4
SIM_COEFF, STD_COEFF, COV_COEFF = 25.0, 25.0, 1.0


def make_views(step):
    mixing = np.eye(IN_DIM) + 0.4 * np.random.default_rng(3333).standard_normal((IN_DIM, IN_DIM))
    rng = np.random.default_rng(3300 + step)
    base = rng.standard_normal((BATCH, IN_DIM)) @ mixing
    views = []
    for _ in range(2):
        scale = rng.uniform(0.8, 1.2, (BATCH, 1))
        keep = rng.random((BATCH, IN_DIM)) >= 0.15
        noise = rng.standard_normal((BATCH, IN_DIM))
        views.append((base * scale * keep + 0.1 * noise).astype(np.float32))
    return views


def Projector(mlp, embedding):
    mlp_spec = f"{embedding}-{mlp}"
    layers = []
    f = list(map(int, mlp_spec.split("-")))
    for i in range(len(f) - 2):
        layers.append(nn.Linear(f[i], f[i + 1]))
        layers.append(nn.BatchNorm1d(f[i + 1]))
        layers.append(nn.ReLU(True))
    layers.append(nn.Linear(f[-2], f[-1], bias=False))
    return nn.Sequential(*layers)


def off_diagonal(x):
    n, m = x.shape
    assert n == m
    return x.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()


class VICReg(nn.Module):
    def __init__(self):
        super().__init__()
        self.num_features = int(MLP.rsplit("-", maxsplit=1)[-1])
        self.encoder = nn.Sequential(nn.Linear(IN_DIM, HIDDEN), nn.BatchNorm1d(HIDDEN), nn.ReLU(),
                                     nn.Linear(HIDDEN, EMBEDDING))
        self.projector = Projector(MLP, EMBEDDING)

    def forward(self, x, y):
        z = self.projector(self.encoder(torch.cat((x, y))))
        return z.chunk(2)


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = VICReg()
    m.train()
    return m


def inputs(step=0):
    x, y = make_views(step)
    return (torch.from_numpy(x), torch.from_numpy(y)), {}


def loss(output):
    x, y = output
    num_features = x.shape[1]
    repr_loss = F.mse_loss(x, y)

    x = x - x.mean(dim=0)
    y = y - y.mean(dim=0)

    std_x = torch.sqrt(x.var(dim=0) + 0.0001)
    std_y = torch.sqrt(y.var(dim=0) + 0.0001)
    std_loss = torch.mean(F.relu(1 - std_x)) / 2 + torch.mean(F.relu(1 - std_y)) / 2

    denom = x.shape[0] if bug(BUGS) == "torch_cov_over_n" else BATCH - 1
    cov_x = (x.T @ x) / denom
    cov_y = (y.T @ y) / denom
    cov_loss = off_diagonal(cov_x).pow(2).sum().div(num_features) + off_diagonal(cov_y).pow(2).sum().div(num_features)

    return SIM_COEFF * repr_loss + STD_COEFF * std_loss + COV_COEFF * cov_loss


def optimizer(model):
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.ndim == 2], "weight_decay": WEIGHT_DECAY},
              {"params": [p for p in params if p.ndim != 2], "weight_decay": 0.0}]
    return torch.optim.SGD(groups, lr=LR, momentum=MOMENTUM)

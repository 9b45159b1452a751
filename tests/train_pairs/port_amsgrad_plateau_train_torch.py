"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_amsgrad_plateau_train_paddle.py): one flat Sequential, the loss written by hand.

    MLP: registers net = Sequential(BatchNorm1d 12, Linear 12 -> 48 (no bias), ReLU, BatchNorm1d 48,
        Dropout 0.1, Linear 48 -> 24 (no bias), ReLU, BatchNorm1d 24, Dropout 0.25) (.0 - .8) and
        classifier (Linear 24 -> 4)
    forward(x [32, 12]) -> logits [32, 4]

Loss (by hand): nll = -log_softmax(logits).gather(1, y); class weights w = CLASS_W[y];
loss = (w * nll).sum() / w.sum() (the weighted mean, as the framework's weighted cross entropy).
Optimizer: torch.optim.Adam(lr 0.003, betas (0.9, 0.99), eps 1e-8, amsgrad=True) and
ReduceLROnPlateau(mode "min", factor 0.5, patience 0, threshold 1e-4 rel) on the training loss:
TrainLossPlateau.step() without a metric uses the loss of the step (kept by loss()).
Data: the same minibatches as the paddle side (default_rng(3744 + step), same recipe).

PADIFF_BUG (this side only):
  torch_one_dropout -> every Dropout built with the config's first rate (0.1): the second one
              should be 0.25
  torch_ce_mean     -> loss = (w * nll).mean(): divided by the batch size instead of the sum of
              the picked class weights
"""
import numpy as np
import torch
from _train_common import bug
from torch import nn

BUGS = {"torch_one_dropout", "torch_ce_mean"} | {"paddle_no_amsgrad"}  # the paddle side's, ignored here
N_FEAT, H1, H2, N_CLS, BATCH = 12, 48, 24, 4, 32
DROPOUT = [0.1, 0.25]
CLASS_W = torch.tensor([0.6, 1.0, 1.4, 2.0])
LR, BETAS, EPS = 0.003, (0.9, 0.99), 1e-8

_STATE = {}


def get_batch(step):
    teacher = np.random.default_rng(3799)
    w = teacher.standard_normal((N_FEAT, N_CLS))
    class_offset = np.array([1.2, 0.4, -0.3, -0.9])
    col_scale = np.linspace(0.5, 2.0, N_FEAT)
    rng = np.random.default_rng(3744 + step)
    x = rng.standard_normal((BATCH, N_FEAT)) * col_scale
    y = np.argmax(x / col_scale @ w + class_offset + 0.5 * rng.standard_normal((BATCH, N_CLS)), axis=1)
    return torch.from_numpy(x.astype(np.float32)), torch.from_numpy(y.astype(np.int64))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        p1, p2 = DROPOUT
        if bug(BUGS) == "torch_one_dropout":
            p2 = p1
        self.net = nn.Sequential(
            nn.BatchNorm1d(N_FEAT),
            nn.Linear(N_FEAT, H1, bias=False), nn.ReLU(), nn.BatchNorm1d(H1), nn.Dropout(p1),
            nn.Linear(H1, H2, bias=False), nn.ReLU(), nn.BatchNorm1d(H2), nn.Dropout(p2),
        )
        self.classifier = nn.Linear(H2, N_CLS)

    def forward(self, x):
        return self.classifier(self.net(x))


def model():
    bug(BUGS)
    torch.manual_seed(3700)
    m = MLP()
    m.train()
    return m


def inputs(step=0):
    x, y = get_batch(step)
    _STATE["y"] = y
    return (x,), {}


def loss(output):
    y = _STATE["y"]
    nll = -torch.log_softmax(output, dim=-1).gather(1, y[:, None]).squeeze(1)
    w = CLASS_W.to(output.dtype)[y]
    if bug(BUGS) == "torch_ce_mean":
        out = (w * nll).mean()
    else:
        out = (w * nll).sum() / w.sum()
    _STATE["loss"] = out.item()
    return out


class TrainLossPlateau(torch.optim.lr_scheduler.ReduceLROnPlateau):
    """ReduceLROnPlateau fed with the training loss of the step when stepped without a metric."""

    def step(self, metrics=None, epoch=None):
        return super().step(_STATE["loss"] if metrics is None else metrics)


def optimizer(model):
    opt = torch.optim.Adam(model.parameters(), lr=LR, betas=BETAS, eps=EPS, amsgrad=True)
    sched = TrainLossPlateau(opt, mode="min", factor=0.5, patience=0, threshold=1e-4, threshold_mode="rel")
    return opt, sched

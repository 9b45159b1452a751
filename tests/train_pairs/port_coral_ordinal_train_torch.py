"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_coral_ordinal_train_paddle.py) the coral_pytorch way.

    OrdinalMLP: registers features (Sequential: Linear 12 -> 32, ReLU, Dropout 0.2, Linear 32 -> 32,
        ReLU, Dropout 0.2; .0-.5), coral_weights (Linear 32 -> 1, bias=False), coral_bias (BiasOnly: a
        module holding only `bias` [4], forward z + bias)
    forward(x) -> logits [B, 4] = coral_bias(coral_weights(features(x)))

Loss (coral_pytorch's coral_loss, written out): levels from the labels row by row
([1] * label + [0] * (K - 1 - label)); term = logsigmoid(l) * levels + (logsigmoid(l) - l) * (1 - levels)
(log(1 - sigmoid(l)) = logsigmoid(l) - l); loss = (-term.sum(1)).mean().
Optimizer: SGD(lr 0.05, momentum 0.9, weight_decay 1e-4) + StepLR(step_size 2, gamma 0.5).

PADIFF_BUG (this side only):
  torch_no_momentum     -> SGD(lr, weight_decay=1e-4) without momentum=0.9 (torch's default momentum
                 is 0; paddle's Momentum class carries it in its name): update 1 is the same (the
                 momentum buffer starts as the gradient), update 2 differs
  torch_dropout_default -> the second dropout written nn.Dropout() (torch's default p = 0.5, not 0.2)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_no_momentum", "torch_dropout_default"} | {"paddle_bce_mean"}  # the paddle side's, ignored here
N_FEAT, HIDDEN, K, BATCH = 12, 32, 5, 16
P_DROP = 0.2
LR, MOMENTUM, WD, STEP_SIZE, GAMMA = 0.05, 0.9, 1e-4, 2, 0.5

_MB = {}


def make_data(step):
    rng = np.random.default_rng(4330 + step)
    x = rng.standard_normal((BATCH, N_FEAT)).astype(np.float32)
    w = np.linspace(-1.0, 1.0, N_FEAT)
    score = x @ w / np.sqrt(N_FEAT) * 2.0 + 0.5 * rng.standard_normal(BATCH)
    y = np.digitize(score, [-1.2, -0.4, 0.4, 1.2]).astype(np.int64)
    return x, y


def levels_from_labelbatch(labels, num_classes):
    rows = [[1] * int(label) + [0] * (num_classes - 1 - int(label)) for label in labels]
    return torch.tensor(rows, dtype=torch.float32)


class BiasOnly(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.bias = nn.Parameter(torch.arange(n, 0, -1).float() / n)

    def forward(self, z):
        return z + self.bias


class OrdinalMLP(nn.Module):
    def __init__(self):
        super().__init__()
        second_dropout = nn.Dropout() if bug(BUGS) == "torch_dropout_default" else nn.Dropout(P_DROP)
        self.features = nn.Sequential(
            nn.Linear(N_FEAT, HIDDEN), nn.ReLU(), nn.Dropout(P_DROP),
            nn.Linear(HIDDEN, HIDDEN), nn.ReLU(), second_dropout,
        )
        self.coral_weights = nn.Linear(HIDDEN, 1, bias=False)
        self.coral_bias = BiasOnly(K - 1)

    def forward(self, x):
        return self.coral_bias(self.coral_weights(self.features(x)))


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = OrdinalMLP()
    m.train()
    return m


def inputs(step=0):
    x, y = make_data(step)
    _MB["levels"] = levels_from_labelbatch(y, K)
    return (torch.from_numpy(x),), {}


def loss(logits):
    levels = _MB["levels"].to(logits.dtype)
    logsig = F.logsigmoid(logits)
    term = logsig * levels + (logsig - logits) * (1 - levels)
    return (-term.sum(dim=1)).mean()


def optimizer(model):
    if bug(BUGS) == "torch_no_momentum":
        opt = torch.optim.SGD(model.parameters(), lr=LR, weight_decay=WD)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, weight_decay=WD)
    return opt, torch.optim.lr_scheduler.StepLR(opt, step_size=STEP_SIZE, gamma=GAMMA)

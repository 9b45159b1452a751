"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_gaussnll_onecycle_train_paddle.py): a mean-variance regression network
(Nix & Weigend / deep-ensembles style) with a single fused output layer.

    GaussianRegressor: registers fc1 (Linear 6 -> 32), norm (LayerNorm 32), fc2 (Linear 32 -> 32),
        head (Linear 32 -> 2: column 0 the mean, column 1 the raw variance), drop (ONE nn.Dropout(0.1)
        called twice); GELU inline (F.gelu)
    forward(x) -> (mu [B, 1], var [B, 1]) with mu, raw = head(h).chunk(2, dim=-1),
        var = F.softplus(raw) + 1e-6
Data: the same batches as the paddle side (default_rng(9600 + step), same recipe); targets kept
as a flat [B] tensor (torch.from_numpy of the 1-D target vector).

Loss: nn.GaussianNLLLoss() (full=False, eps=1e-6, reduction "mean") on mu.squeeze(-1), y,
var.squeeze(-1).
Optimizer: SGD(lr 0.05, momentum 0.9, nesterov=True) with OneCycleLR(max_lr 0.05, total_steps 5,
pct_start 0.3, div_factor 25, final_div_factor 20, anneal_strategy "cos", cycle_momentum=False):
torch's minimum lr is initial_lr / final_div_factor = 0.002 / 20 = 1e-4 (paddle's
end_learning_rate); torch cycles the momentum between 0.95 and 0.85 by default, paddle never
does, hence cycle_momentum=False.

PADIFF_BUG (this side only):
  torch_target_broadcast -> the loss is called on mu and var as returned ([B, 1]) with the flat
              target y [B]: (mu - y) broadcasts to [B, B] (no error, no warning in
              GaussianNLLLoss), the loss is the mean over all B x B pairs
  cycle_momentum_default -> OneCycleLR(..., cycle_momentum left at its default True): the
              momentum follows 0.95 -> 0.85 -> 0.95 (0.95, 0.855, 0.889 for updates 1..3)
              instead of the constant 0.9
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"torch_target_broadcast", "cycle_momentum_default"} | {"paddle_keep_prob"}  # paddle side's, ignored here
N_IN, HIDDEN, BATCH = 6, 32, 16
DROPOUT, MIN_VAR = 0.1, 1e-6
MAX_LR, TOTAL_STEPS, PCT_START, DIV_FACTOR, MIN_LR, MOMENTUM = 0.05, 5, 0.3, 25.0, 1e-4, 0.9

_DATA = {}


def make_batch(step):
    rng = np.random.default_rng(9600 + step)
    x = rng.standard_normal((BATCH, N_IN)).astype(np.float32)
    signal = x @ np.linspace(-0.8, 0.8, N_IN) + 0.5 * np.sin(2.0 * x[:, 0])
    sigma = 0.2 + 0.6 * np.abs(x[:, 1])
    y = signal + sigma * rng.standard_normal(BATCH)
    return x, y.astype(np.float32)


class GaussianRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(N_IN, HIDDEN)
        self.norm = nn.LayerNorm(HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, HIDDEN)
        self.head = nn.Linear(HIDDEN, 2)
        self.drop = nn.Dropout(DROPOUT)

    def forward(self, x):
        h = self.drop(F.gelu(self.norm(self.fc1(x))))
        h = self.drop(F.gelu(self.fc2(h)))
        mu, raw = self.head(h).chunk(2, dim=-1)
        return mu, F.softplus(raw) + MIN_VAR


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = GaussianRegressor()
    m.train()
    return m


def inputs(step=0):
    x, y = make_batch(step)
    _DATA["y"] = torch.from_numpy(y)
    return (torch.from_numpy(x),), {}


_criterion = nn.GaussianNLLLoss()


def loss(output):
    mu, var = output
    y = _DATA["y"].to(mu.dtype)
    if bug(BUGS) == "torch_target_broadcast":
        return _criterion(mu, y, var)
    return _criterion(mu.squeeze(-1), y, var.squeeze(-1))


def optimizer(model):
    opt = torch.optim.SGD(model.parameters(), lr=MAX_LR, momentum=MOMENTUM, nesterov=True)
    initial_lr = MAX_LR / DIV_FACTOR
    kw = {} if bug(BUGS) == "cycle_momentum_default" else {"cycle_momentum": False}
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=MAX_LR, total_steps=TOTAL_STEPS, pct_start=PCT_START,
                                                div_factor=DIV_FACTOR, final_div_factor=initial_lr / MIN_LR,
                                                anneal_strategy="cos", **kw)
    return opt, sched

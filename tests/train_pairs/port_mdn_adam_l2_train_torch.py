"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_mdn_adam_l2_train_paddle.py): a mixture density network with ONE fused output
layer and the likelihood from torch.distributions.

    MixtureDensityNet: registers trunk = Sequential(Linear 4 -> 32, Tanh, Dropout(0.1),
        Linear 32 -> 32, Tanh) (.0-.4), head (MixtureHead: F.dropout(h, 0.2, training) inline, then
        proj = Linear 32 -> 15, split into [3 logits | 6 means | 6 log-sigmas])
    forward(x [16, 4]) -> (logits [16, 3], means [16, 3, 2], log_sigmas [16, 3, 2])

Loss: MixtureSameFamily(Categorical(logits=logits), Independent(Normal(mu, log_sigma.exp()), 1));
NLL = -log_prob(y).mean().
Optimizer: torch.optim.Adam(lr 2e-3, eps 1e-8, weight_decay 5e-3: L2 added to the gradient),
torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0) in clip_grad().
Data: the same batches as the paddle side (default_rng(4520 + step)).

PADIFF_BUG (this side only):
  torch_softplus_scale -> sigma = softplus(raw) instead of exp(raw) (the MDN write-up the porter
              followed keeps its scales positive with softplus; the original's head emits log-sigmas)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import distributions as dist
from torch import nn

BUGS = {"torch_softplus_scale"} | {"paddle_drop_swapped", "paddle_adamw_decoupled"}  # the paddle side's, ignored here
N_IN, N_HIDDEN, N_COMP, N_OUT, BATCH = 4, 32, 3, 2, 16
LR, EPS, WEIGHT_DECAY, MAX_NORM = 2e-3, 1e-8, 5e-3, 1.0

_Y = {}


def get_batch(step):
    rng = np.random.default_rng(4520 + step)
    x = rng.standard_normal((BATCH, N_IN))
    which = rng.integers(0, N_COMP, BATCH)
    mean = np.stack([np.sin(x[:, 0] + 2.0 * which), (which - 1.0) * np.cos(x[:, 1]) + 0.3 * x[:, 2]], -1)
    y = mean + 0.15 * rng.standard_normal((BATCH, N_OUT))
    return x.astype(np.float32), y.astype(np.float32)


class MixtureHead(nn.Module):
    def __init__(self, n_hidden, n_comp, n_out, p):
        super().__init__()
        self.n_comp, self.n_out, self.p = n_comp, n_out, p
        self.proj = nn.Linear(n_hidden, n_comp * (1 + 2 * n_out))

    def forward(self, h):
        h = F.dropout(h, self.p, self.training)
        k, kd = self.n_comp, self.n_comp * self.n_out
        logits, mu, log_sigma = self.proj(h).split([k, kd, kd], dim=-1)
        return logits, mu.reshape(-1, k, self.n_out), log_sigma.reshape(-1, k, self.n_out)


class MixtureDensityNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(N_IN, N_HIDDEN), nn.Tanh(), nn.Dropout(0.1),
                                   nn.Linear(N_HIDDEN, N_HIDDEN), nn.Tanh())
        self.head = MixtureHead(N_HIDDEN, N_COMP, N_OUT, p=0.2)

    def forward(self, x):
        return self.head(self.trunk(x))


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = MixtureDensityNet()
    m.train()
    return m


def inputs(step=0):
    x, y = get_batch(step)
    _Y["y"] = torch.from_numpy(y)
    return (torch.from_numpy(x),), {}


def loss(output):
    logits, mu, raw_scale = output
    scale = F.softplus(raw_scale) if bug(BUGS) == "torch_softplus_scale" else raw_scale.exp()
    mixture = dist.MixtureSameFamily(dist.Categorical(logits=logits), dist.Independent(dist.Normal(mu, scale), 1))
    return -mixture.log_prob(_Y["y"].to(logits.dtype)).mean()


def optimizer(model):
    return torch.optim.Adam(model.parameters(), lr=LR, eps=EPS, weight_decay=WEIGHT_DECAY)


def clip_grad(model):
    torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)

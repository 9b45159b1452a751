"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_vae_train_paddle.py), the pytorch/examples VAE way with Sequential blocks:

    encoder = Sequential(Linear(64, 32), ReLU, Dropout(p))        (encoder.0 / .1 / .2)
    fc_stats = Linear(32, 8): ONE packed head, chunk(2) -> mu (rows 0:4), logvar (rows 4:8)
    reparameterize: std = logvar.mul(0.5).exp(); z = mu + eps * std (eps is a forward input)
    decoder = Sequential(Linear(4, 32), ReLU, Linear(32, 64)) -> LOGITS; x_hat = sigmoid(logits)
Forward(x, eps) returns (x_hat, mu, logvar, logits): the pre-sigmoid logits are returned as well,
for the numerically stable loss. Dropout p from the config dict (0.2): 1 call per forward.

Loss: F.binary_cross_entropy_with_logits(logits, x, reduction="none") summed per sample and averaged
over the batch, + KL written as 0.5 * sum(mu^2 + exp(logvar) - logvar - 1, dim=1).mean().
Optimizer: torch.optim.Adam(lr 1e-3, betas (0.9, 0.99), eps 1e-8) + LinearLR(start_factor=0.2,
end_factor=1.0, total_iters=4): lr 2e-4, 4e-4, 6e-4 for updates 1..3 (the paddle LinearWarmup's).

PADIFF_BUG (this side only):
  drop_cfg_key      -> the dropout rate read as cfg.get("dropout_rate", 0.5) while the config key is
                    "dropout" (a typo'd key falls back to the default): p 0.5 instead of 0.2
  warmup_abs_factor -> LinearLR(start_factor=2e-4, ...): paddle's absolute start_lr passed as torch's
                    RELATIVE start factor: lr 2e-7, 2.5e-4, 5e-4 for updates 1..3
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"drop_cfg_key", "warmup_abs_factor"} | {"paddle_bce_mean"}  # the paddle side's, ignored here
CFG = {"image_size": 8, "hidden": 32, "latent": 4, "dropout": 0.2}
LR, BETAS, EPS = 1e-3, (0.9, 0.99), 1e-8
WARMUP_START, WARMUP_ITERS = 0.2, 4  # paddle: start_lr 2e-4 = 0.2 x 1e-3, 4 warm-up steps

X = np.random.default_rng(28).random((2, 1, 8, 8)).astype("float32")
NOISE = np.random.default_rng(128).standard_normal((3, 2, 4)).astype("float32")


class VariationalAutoencoder(nn.Module):
    def __init__(self, cfg, drop_key="dropout"):
        super().__init__()
        d, h, z = cfg["image_size"] ** 2, cfg["hidden"], cfg["latent"]
        self.encoder = nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Dropout(cfg.get(drop_key, 0.5)))
        self.fc_stats = nn.Linear(h, 2 * z)
        self.decoder = nn.Sequential(nn.Linear(z, h), nn.ReLU(), nn.Linear(h, d))

    def reparameterize(self, mu, logvar, eps):
        std = logvar.mul(0.5).exp()
        return mu + eps * std

    def forward(self, x, eps):
        mu, logvar = self.fc_stats(self.encoder(x.view(x.size(0), -1))).chunk(2, dim=-1)
        z = self.reparameterize(mu, logvar, eps)
        logits = self.decoder(z).view_as(x)
        return torch.sigmoid(logits), mu, logvar, logits


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    m = VariationalAutoencoder(CFG, drop_key="dropout_rate" if b == "drop_cfg_key" else "dropout")
    m.train()
    return m


def inputs(step=0):
    return (torch.from_numpy(X), torch.from_numpy(NOISE[step])), {}


def loss(output):
    _, mu, logvar, logits = output
    x = torch.from_numpy(X).to(logits.dtype)
    bce = F.binary_cross_entropy_with_logits(logits, x, reduction="none").flatten(1).sum(1).mean()
    kld = 0.5 * torch.sum(mu.pow(2) + logvar.exp() - logvar - 1, dim=1).mean()
    return bce + kld


def optimizer(model):
    opt = torch.optim.Adam(model.parameters(), lr=LR, betas=BETAS, eps=EPS)
    start = LR * WARMUP_START if bug(BUGS) == "warmup_abs_factor" else WARMUP_START  # bug: 2e-4, absolute
    sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=start, end_factor=1.0, total_iters=WARMUP_ITERS)
    return opt, sched

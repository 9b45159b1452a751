"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_diffusion_train_paddle.py): the same tiny diffusion UNet noise predictor, with its
own names, registration order and idioms.

    time_embed = Sequential(SinusoidalPosEmb(16), Linear(16, 32), SiLU, Linear(32, 32))
    conv_in (3->8) -> enc ResBlock(8, 8) -> down (stride-2 conv 8->16) -> mid ResBlock(16, 16)
    -> up ConvTranspose2d(16, 8, 4, 2, 1) -> cat([up, skip]) -> dec ResBlock(16, 8)
    -> norm_out GroupNorm(4, 8), SiLU, conv_out (8->3)
ResBlock(in_ch, out_ch, emb_dim, dropout=0.0): emb_proj = Sequential(SiLU, Linear) registered
first, then norm1, conv1, norm2, drop, conv2 and `skip` (nn.Identity or a 1x1 conv).
Registration order: conv_in before time_embed (paddle: temb first).

Loss: F.mse_loss(prediction, noise); AdamW with two parameter groups (weight_decay 0.01 on
ndim >= 2, 0 on the rest) and a linear warm-up written as LambdaLR(lambda s: 0.1 + 0.9 *
min(s, 10) / 10): lr 1.0e-4, 1.9e-4, 2.8e-4 for updates 1..3 (the paddle LinearWarmup's values).

PADIFF_BUG (this side only):
  up_dropout_default -> the decoder block is built as ResBlock(16, 8, EMB) without passing the
              dropout, so the signature's default 0.0 applies: no dropout in `dec`
  x0_target -> the loss regresses the clean image x0 instead of the noise (prediction type mixed
              up: "x0" vs "epsilon")
"""
import math

import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"up_dropout_default", "x0_target"} | {"paddle_warmup_len"}  # the paddle side's, ignored here
BATCH, CH, SIZE, T_STEPS = 4, 3, 16, 100
TIMESTEPS = np.array([3, 27, 55, 91], "int64")
TDIM, EMB = 16, 32
LR, BETA1, BETA2, EPS, WD = 1e-3, 0.9, 0.999, 1e-8, 0.01
WARMUP = 10
DROPOUT = 0.1


def _data():
    rng = np.random.default_rng(21)
    x0 = rng.standard_normal((BATCH, CH, SIZE, SIZE))
    noise = rng.standard_normal((BATCH, CH, SIZE, SIZE))
    abar = np.cumprod(1.0 - np.linspace(1e-4, 2e-2, T_STEPS))[TIMESTEPS][:, None, None, None]
    xt = np.sqrt(abar) * x0 + np.sqrt(1.0 - abar) * noise
    return xt.astype("float32"), noise.astype("float32"), x0.astype("float32")


class SinusoidalPosEmb(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, t, dtype=torch.float32):
        half = self.dim // 2
        freqs = torch.exp(torch.arange(half, dtype=dtype) * (-math.log(10000.0) / half))
        args = t.to(dtype)[:, None] * freqs[None, :]
        return torch.cat((args.sin(), args.cos()), dim=-1)


class ResBlock(nn.Module):
    def __init__(self, in_ch, out_ch, emb_dim, dropout=0.0):
        super().__init__()
        self.emb_proj = nn.Sequential(nn.SiLU(), nn.Linear(emb_dim, out_ch))
        self.norm1 = nn.GroupNorm(4, in_ch)
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, padding=1)
        self.norm2 = nn.GroupNorm(4, out_ch)
        self.drop = nn.Dropout(dropout)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1)
        self.skip = nn.Conv2d(in_ch, out_ch, 1) if in_ch != out_ch else nn.Identity()

    def forward(self, x, emb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.emb_proj(emb).unsqueeze(-1).unsqueeze(-1)
        h = self.conv2(self.drop(F.silu(self.norm2(h))))
        return self.skip(x) + h


class DenoiseUNet(nn.Module):
    def __init__(self, dec_dropout=DROPOUT):
        super().__init__()
        self.conv_in = nn.Conv2d(CH, 8, 3, padding=1)
        self.time_embed = nn.Sequential(SinusoidalPosEmb(TDIM), nn.Linear(TDIM, EMB), nn.SiLU(), nn.Linear(EMB, EMB))
        self.enc = ResBlock(8, 8, EMB, dropout=DROPOUT)
        self.down = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.mid = ResBlock(16, 16, EMB, dropout=DROPOUT)
        self.up = nn.ConvTranspose2d(16, 8, kernel_size=4, stride=2, padding=1)
        self.dec = ResBlock(16, 8, EMB) if dec_dropout is None else ResBlock(16, 8, EMB, dropout=dec_dropout)
        self.norm_out = nn.GroupNorm(4, 8)
        self.conv_out = nn.Conv2d(8, CH, 3, padding=1)

    def forward(self, x, t):
        emb = self.time_embed[0](t, x.dtype)
        for layer in self.time_embed[1:]:
            emb = layer(emb)
        h0 = self.enc(self.conv_in(x), emb)
        h = self.mid(self.down(h0), emb)
        h = self.dec(torch.cat([self.up(h), h0], dim=1), emb)
        return self.conv_out(F.silu(self.norm_out(h)))


def model():
    b = bug(BUGS)
    torch.manual_seed(0)
    m = DenoiseUNet(dec_dropout=None if b == "up_dropout_default" else DROPOUT)
    m.train()
    return m


def inputs():
    xt, _, _ = _data()
    return (torch.from_numpy(xt), torch.from_numpy(TIMESTEPS)), {}


def loss(output):
    _, noise, x0 = _data()
    target = x0 if bug(BUGS) == "x0_target" else noise
    return F.mse_loss(output, torch.from_numpy(target).to(output.dtype))


def optimizer(model):
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.ndim >= 2], "weight_decay": WD},
              {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=LR, betas=(BETA1, BETA2), eps=EPS)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.1 + 0.9 * min(s, WARMUP) / WARMUP)
    return opt, sched

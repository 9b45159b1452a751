"""Hand-written port in TRAINING mode, paddle side (written by "person A"): a tiny diffusion-style
UNet noise predictor (epsilon prediction), trained 3 steps.

    t [B] (int64) -> sinusoidal embedding (16: sin | cos) -> temb = Linear(16, 32), SiLU, Linear(32, 32)
    x [B, 3, 16, 16] -> stem (Conv2D 3->8, 3x3)
    down_block: ResBlock(8 -> 8) at 16x16                  (its output is the skip)
    down_sample: Conv2D 8->16, 3x3, stride 2               (8x8)
    mid_block: ResBlock(16 -> 16) at 8x8
    up_sample: Conv2DTranspose 16->8, kernel 4, stride 2, padding 1   (16x16)
    concat [up, skip] on channels (16) -> up_block: ResBlock(16 -> 8) with a 1x1 nin_shortcut
    out_norm GroupNorm(4, 8), SiLU, out_conv Conv2D 8->3

ResBlock (ldm style): gn_a GroupNorm(4, in), SiLU, conv_a 3x3 in->out, + temb_proj(SiLU(temb))
per channel, gn_b GroupNorm(4, out), SiLU, dropout (0.1), conv_b 3x3 out->out, + shortcut.
Dropout: 3 calls per forward (down_block, mid_block, up_block), all p 0.1, model.train().

Data (numpy constants): x0 N(0, 1) [4, 3, 16, 16], noise N(0, 1), timesteps [3, 27, 55, 91] of
a 100-step linear beta schedule (1e-4 .. 2e-2); input x_t = sqrt(abar_t) x0 + sqrt(1 - abar_t)
noise; loss = MSE(prediction, noise) (mean over every element). Same batch every step.

Optimizer: AdamW(lr 1e-3, betas (0.9, 0.999), epsilon 1e-8, weight_decay 0.01 on tensors with
ndim >= 2 only, through apply_decay_param_fun on p.name) driven by
paddle.optimizer.lr.LinearWarmup(learning_rate=1e-3, warmup_steps=10, start_lr=1e-4,
end_lr=1e-3): lr 1.0e-4, 1.9e-4, 2.8e-4 for updates 1..3. optimizer() returns (opt, sched).

Conventions of this port (by design): paddle Conv2DTranspose and torch ConvTranspose2d both keep
the weight as [in, out, kh, kw] (no transpose, unlike Linear); GroupNorm epsilon 1e-5 on both
sides (both libraries' default); Linear weights transposed (paddle [in, out]).

PADIFF_BUG (this side only):
  paddle_warmup_len -> LinearWarmup(warmup_steps=11): the warm-up is one step too long, lr 1.0e-4,
              1.818e-4, 2.636e-4 (update 1 is unchanged: start_lr is the same)
"""
import math

import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_warmup_len"} | {"up_dropout_default", "x0_target"}  # the torch side's, ignored here
BATCH, CH, SIZE, T_STEPS = 4, 3, 16, 100
TIMESTEPS = np.array([3, 27, 55, 91], "int64")
TDIM, EMB = 16, 32
LR, BETA1, BETA2, EPS, WD = 1e-3, 0.9, 0.999, 1e-8, 0.01
WARMUP, START_LR = 10, 1e-4
DROPOUT = 0.1


def _data():
    rng = np.random.default_rng(21)
    x0 = rng.standard_normal((BATCH, CH, SIZE, SIZE))
    noise = rng.standard_normal((BATCH, CH, SIZE, SIZE))
    abar = np.cumprod(1.0 - np.linspace(1e-4, 2e-2, T_STEPS))[TIMESTEPS][:, None, None, None]
    xt = np.sqrt(abar) * x0 + np.sqrt(1.0 - abar) * noise
    return xt.astype("float32"), noise.astype("float32"), x0.astype("float32")


def timestep_embedding(t, dim, dtype):
    half = dim // 2
    freqs = paddle.exp(paddle.arange(half, dtype=dtype) * (-math.log(10000.0) / half))
    args = t.astype(dtype).unsqueeze(1) * freqs.unsqueeze(0)
    return paddle.concat([paddle.sin(args), paddle.cos(args)], axis=1)


class ResBlock(nn.Layer):
    def __init__(self, cin, cout, emb, dropout):
        super().__init__()
        self.gn_a = nn.GroupNorm(4, cin)
        self.conv_a = nn.Conv2D(cin, cout, 3, padding=1)
        self.temb_proj = nn.Linear(emb, cout)
        self.gn_b = nn.GroupNorm(4, cout)
        self.dropout = nn.Dropout(dropout)
        self.conv_b = nn.Conv2D(cout, cout, 3, padding=1)
        self.nin_shortcut = nn.Conv2D(cin, cout, 1) if cin != cout else None

    def forward(self, x, temb):
        h = self.conv_a(F.silu(self.gn_a(x)))
        h = h + self.temb_proj(F.silu(temb))[:, :, None, None]
        h = self.conv_b(self.dropout(F.silu(self.gn_b(h))))
        return h + (self.nin_shortcut(x) if self.nin_shortcut is not None else x)


class TinyUNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.temb = nn.Sequential(nn.Linear(TDIM, EMB), nn.Silu(), nn.Linear(EMB, EMB))
        self.stem = nn.Conv2D(CH, 8, 3, padding=1)
        self.down_block = ResBlock(8, 8, EMB, DROPOUT)
        self.down_sample = nn.Conv2D(8, 16, 3, stride=2, padding=1)
        self.mid_block = ResBlock(16, 16, EMB, DROPOUT)
        self.up_sample = nn.Conv2DTranspose(16, 8, 4, stride=2, padding=1)
        self.up_block = ResBlock(16, 8, EMB, DROPOUT)
        self.out_norm = nn.GroupNorm(4, 8)
        self.out_conv = nn.Conv2D(8, CH, 3, padding=1)

    def forward(self, x, t):
        temb = self.temb(timestep_embedding(t, TDIM, x.dtype))
        h = self.stem(x)
        skip = self.down_block(h, temb)
        h = self.mid_block(self.down_sample(skip), temb)
        h = paddle.concat([self.up_sample(h), skip], axis=1)
        h = self.up_block(h, temb)
        return self.out_conv(F.silu(self.out_norm(h)))


def model():
    bug(BUGS)  # an unknown name fails early
    paddle.seed(0)
    m = TinyUNet()
    rng = np.random.default_rng(0)  # person A's init: non-trivial biases and norm scales
    for name, p in m.named_parameters():
        if p.ndim == 1:
            base = 1.0 if name.endswith("weight") else 0.0  # GroupNorm scales around 1
            p.set_value((base + 0.1 * rng.standard_normal(p.shape)).astype("float32"))
    m.train()
    return m


def inputs():
    xt, _, _ = _data()
    return (paddle.to_tensor(xt), paddle.to_tensor(TIMESTEPS)), {}


def loss(output):
    _, noise, _ = _data()
    return F.mse_loss(output, paddle.to_tensor(noise).astype(output.dtype))


def optimizer(model):
    warmup = WARMUP + 1 if bug(BUGS) == "paddle_warmup_len" else WARMUP
    sched = paddle.optimizer.lr.LinearWarmup(learning_rate=LR, warmup_steps=warmup, start_lr=START_LR, end_lr=LR)
    params = [p for p in model.parameters() if not p.stop_gradient]
    decay = {p.name for p in params if p.ndim >= 2}
    opt = paddle.optimizer.AdamW(learning_rate=sched, beta1=BETA1, beta2=BETA2, epsilon=EPS, parameters=params,
                                 weight_decay=WD, apply_decay_param_fun=lambda n: n in decay)
    return opt, sched

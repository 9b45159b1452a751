"""Hand-written port, torch side: a tiny Restormer (written by "person B").

The same math as port_restormer_paddle.py, re-implemented by hand: input image [2, 3, 16, 16]
(positional), a 3x3 `embed` conv (3 -> 16), two transformer blocks (block 0 WithBias norms,
block 1 BiasFree norms; 2 heads; GDFN hidden 42; no conv biases), a 3x3 `head` conv (16 -> 3)
plus the input image.

Torch idioms on this side:
- root `TinyRestormer`: `embed`, `encoder` (nn.ModuleList, iterated), `head`.
- Norms: two classes, `WithBiasNorm` (`weight`, `bias`) and `BiasFreeNorm` (`weight`), both
  computing over dim 1 of the NCHW map directly (no to_3d): var = ((x - mean)^2).mean(1),
  eps 1e-5.
- `Block` registers `norm1`, `norm2` first, then `attn`, `ffn`.
- `MDTA`: `temperature` [1, heads, 1, 1], ONE fused `qkv` 1x1 conv (16 -> 48, rows q | k | v)
  and ONE fused depthwise `qkv_dwconv` (48 channels), chunked into q, k, v; heads by view;
  F.normalize(dim=-1); scores and output by torch.einsum; `proj` 1x1 conv.
- `GDFN`: `fc_in` 1x1 (16 -> 84), `dw` depthwise 3x3, `act` = nn.GELU MODULE applied to the first
  half, `fc_out` 1x1 (42 -> 16).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_gelu_tanh            -> GDFN's `act` is nn.GELU(approximate="tanh") instead of the exact
                                erf GELU (precision-level)
  torch_biasfree_as_rmsnorm  -> BiasFreeNorm divides by sqrt(mean(x^2) + eps) (RMSNorm) instead
                                of sqrt(var(x) + eps): the mean is not taken out of the variance
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

CH_IN, EMBED, N_HEADS = 3, 16, 2
HIDDEN = int(EMBED * 2.66)
EPS = 1e-5
OWN_BUGS = {"torch_gelu_tanh", "torch_biasfree_as_rmsnorm"}
OTHER_BUGS = {"paddle_ln_unbiased_var", "paddle_normalize_default_axis"}


class WithBiasNorm(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ch))
        self.bias = nn.Parameter(torch.zeros(ch))

    def forward(self, x):
        mean = x.mean(1, keepdim=True)
        var = (x - mean).pow(2).mean(1, keepdim=True)
        return (x - mean) * torch.rsqrt(var + EPS) * self.weight[:, None, None] + self.bias[:, None, None]


class BiasFreeNorm(nn.Module):
    def __init__(self, ch, rms=False):
        super().__init__()
        self.rms = rms
        self.weight = nn.Parameter(torch.ones(ch))

    def forward(self, x):
        if self.rms:
            var = x.pow(2).mean(1, keepdim=True)
        else:
            var = (x - x.mean(1, keepdim=True)).pow(2).mean(1, keepdim=True)
        return x * torch.rsqrt(var + EPS) * self.weight[:, None, None]


class MDTA(nn.Module):
    def __init__(self, ch, heads):
        super().__init__()
        self.heads = heads
        self.temperature = nn.Parameter(torch.ones(1, heads, 1, 1))
        self.qkv = nn.Conv2d(ch, ch * 3, 1, bias=False)
        self.qkv_dwconv = nn.Conv2d(ch * 3, ch * 3, 3, padding=1, groups=ch * 3, bias=False)
        self.proj = nn.Conv2d(ch, ch, 1, bias=False)

    def forward(self, x):
        n, c, h, w = x.shape
        q, k, v = self.qkv_dwconv(self.qkv(x)).chunk(3, dim=1)
        q = F.normalize(q.view(n, self.heads, -1, h * w), dim=-1)
        k = F.normalize(k.view(n, self.heads, -1, h * w), dim=-1)
        v = v.view(n, self.heads, -1, h * w)
        attn = torch.einsum("bhcs,bhds->bhcd", q, k) * self.temperature
        attn = attn.softmax(dim=-1)
        out = torch.einsum("bhcd,bhds->bhcs", attn, v).reshape(n, c, h, w)
        return self.proj(out)


class GDFN(nn.Module):
    def __init__(self, ch, hidden, tanh=False):
        super().__init__()
        self.fc_in = nn.Conv2d(ch, hidden * 2, 1, bias=False)
        self.dw = nn.Conv2d(hidden * 2, hidden * 2, 3, padding=1, groups=hidden * 2, bias=False)
        self.act = nn.GELU(approximate="tanh" if tanh else "none")
        self.fc_out = nn.Conv2d(hidden, ch, 1, bias=False)

    def forward(self, x):
        gate, value = self.dw(self.fc_in(x)).chunk(2, dim=1)
        return self.fc_out(self.act(gate) * value)


class Block(nn.Module):
    def __init__(self, ch, heads, bias_free, bug=""):
        super().__init__()
        if bias_free:
            self.norm1 = BiasFreeNorm(ch, rms=bug == "torch_biasfree_as_rmsnorm")
            self.norm2 = BiasFreeNorm(ch, rms=bug == "torch_biasfree_as_rmsnorm")
        else:
            self.norm1, self.norm2 = WithBiasNorm(ch), WithBiasNorm(ch)
        self.attn = MDTA(ch, heads)
        self.ffn = GDFN(ch, HIDDEN, tanh=bug == "torch_gelu_tanh")

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.ffn(self.norm2(x))
        return x


class TinyRestormer(nn.Module):
    def __init__(self, bug=""):
        super().__init__()
        self.embed = nn.Conv2d(CH_IN, EMBED, 3, padding=1, bias=False)
        self.encoder = nn.ModuleList([Block(EMBED, N_HEADS, bias_free=False, bug=bug),
                                      Block(EMBED, N_HEADS, bias_free=True, bug=bug)])
        self.head = nn.Conv2d(EMBED, CH_IN, 3, padding=1, bias=False)

    def forward(self, img):
        x = self.embed(img)
        for blk in self.encoder:
            x = blk(x)
        return self.head(x) + img


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_restormer torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    return TinyRestormer(bug if bug in OWN_BUGS else "").eval()


def _image():
    rng = np.random.default_rng(53)
    return rng.uniform(0.0, 1.0, (2, CH_IN, 16, 16)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # restored image [2, 3, 16, 16]
    return (output**2).mean()

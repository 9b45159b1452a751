"""Hand-written port, torch side: a tiny Twins-SVT image classifier (written by "person B").

The same math as port_twins_svt_paddle.py, re-implemented by hand: image [2, 3, 32, 48]
(positional, numpy rng seed 41), two stages (patch 4 / 2, width 16 / 32, 2 / 4 heads of 8),
each = patch embedding, an LSA block (windows 4 x 4 / 2 x 2), the PEG, a GSA block (keys /
values from a 2x2 stride-2 conv + LayerNorm); final LayerNorm, token mean, Linear(32, 10):
logits [2, 10]. LayerNorm eps 1e-6, exact GELU, MLP ratio 2.

Torch idioms on this side:
- root `TwinsSVT`: `stages` = ModuleList of `TwinsStage`, `norm` LayerNorm, `fc` Linear(32, 10).
  Each stage takes an NCHW map and returns (tokens, (H, W)); the root reshapes the tokens back
  to NCHW between stages.
- `TwinsStage` registers `embed` (ConvPatchEmbed: `conv`, `ln`), then `peg` (PEG), then
  `blocks` (ModuleList of two TwinsBlock); it calls embed, blocks[0], peg, blocks[1].
- `TwinsBlock(x, size)`: `ln1`, `attn`, `ln2`, `mlp`.
- `LocallyGroupedSelfAttention`: SEPARATE `query`, `key`, `value` Linears and `out`; windows by
  view + permute into [B * G, heads, ws*ws, hd]; F.scaled_dot_product_attention.
- `GlobalSubsampledAttention`: `sr` Conv2d(C, C, 2, stride 2), `sr_norm` LayerNorm, then `mha` =
  nn.MultiheadAttention(C, heads, batch_first=True) with its packed in_proj [3C, C] (q | k | v)
  and `out_proj`; the queries are the block's tokens, keys = values = the normed sub-sampled
  tokens.
- `MLP`: `fc1`, `act` (nn.GELU module), `fc2`.
- `PEG`: `dwconv` Conv2d(C, C, 3, padding 1, groups C), residual added in its forward.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_peg_no_residual -> PEG returns dwconv(feat) without adding feat back (the residual of the
                           conditional positional encoding is lost), in both stages
  torch_gsa_no_transpose -> GlobalSubsampledAttention reshapes the [B, N, C] tokens straight to
                           [B, C, H, W] for the sr conv, forgetting the transpose(1, 2) first, so
                           the "map" fed to the sub-sampling conv is the token tensor's memory
                           read as channels-first (every channel plane mixes tokens and channels)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

HEIGHT, WIDTH, CHANS, N_CLASSES = 32, 48, 3, 10
DIMS, HEADS, PATCH, WS, SR = (16, 32), (2, 4), (4, 2), (4, 2), (2, 2)
MLP_HIDDEN_RATIO = 2
BATCH = 2
OWN_BUGS = {"torch_peg_no_residual", "torch_gsa_no_transpose"}
OTHER_BUGS = {"paddle_lsa_no_window_transpose", "paddle_gelu_tanh"}


class ConvPatchEmbed(nn.Module):
    def __init__(self, cin, dim, patch):
        super().__init__()
        self.conv = nn.Conv2d(cin, dim, kernel_size=patch, stride=patch)
        self.ln = nn.LayerNorm(dim, eps=1e-6)

    def forward(self, x):
        x = self.conv(x)
        size = tuple(x.shape[-2:])
        return self.ln(x.flatten(2).transpose(1, 2)), size


class LocallyGroupedSelfAttention(nn.Module):
    def __init__(self, dim, heads, ws):
        super().__init__()
        self.heads, self.ws = heads, ws
        self.query = nn.Linear(dim, dim)
        self.key = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)

    def _to_windows(self, t, h, w):
        b, _, c = t.shape
        ws = self.ws
        t = t.view(b, h // ws, ws, w // ws, ws, self.heads, c // self.heads)
        t = t.permute(0, 1, 3, 5, 2, 4, 6)  # [B, hg, wg, heads, ws, ws, hd]
        return t.reshape(b * (h // ws) * (w // ws), self.heads, ws * ws, c // self.heads)

    def forward(self, x, size):
        h, w = size
        b, n, c = x.shape
        ws = self.ws
        q = self._to_windows(self.query(x), h, w)
        k = self._to_windows(self.key(x), h, w)
        v = self._to_windows(self.value(x), h, w)
        o = F.scaled_dot_product_attention(q, k, v)  # [B*G, heads, ws*ws, hd]
        o = o.view(b, h // ws, w // ws, self.heads, ws, ws, c // self.heads)
        o = o.permute(0, 1, 4, 2, 5, 3, 6).reshape(b, n, c)  # back to row-major tokens
        return self.out(o)


class GlobalSubsampledAttention(nn.Module):
    def __init__(self, dim, heads, sr, no_transpose=False):
        super().__init__()
        self.no_transpose = no_transpose
        self.sr = nn.Conv2d(dim, dim, kernel_size=sr, stride=sr)
        self.sr_norm = nn.LayerNorm(dim, eps=1e-6)
        self.mha = nn.MultiheadAttention(dim, heads, batch_first=True)

    def forward(self, x, size):
        h, w = size
        b, _n, c = x.shape
        if self.no_transpose:
            kv = x.reshape(b, c, h, w)
        else:
            kv = x.transpose(1, 2).reshape(b, c, h, w)
        kv = self.sr_norm(self.sr(kv).flatten(2).transpose(1, 2))
        out, _ = self.mha(x, kv, kv, need_weights=False)
        return out


class MLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class TwinsBlock(nn.Module):
    def __init__(self, dim, attn):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = attn
        self.ln2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = MLP(dim, dim * MLP_HIDDEN_RATIO)

    def forward(self, x, size):
        x = x + self.attn(self.ln1(x), size)
        return x + self.mlp(self.ln2(x))


class PEG(nn.Module):
    def __init__(self, dim, no_residual=False):
        super().__init__()
        self.no_residual = no_residual
        self.dwconv = nn.Conv2d(dim, dim, 3, padding=1, groups=dim)

    def forward(self, x, size):
        b, _n, c = x.shape
        feat = x.transpose(1, 2).reshape(b, c, *size)
        y = self.dwconv(feat)
        if not self.no_residual:
            y = y + feat
        return y.flatten(2).transpose(1, 2)


class TwinsStage(nn.Module):
    def __init__(self, cin, i, no_residual=False, no_transpose=False):
        super().__init__()
        dim = DIMS[i]
        self.embed = ConvPatchEmbed(cin, dim, PATCH[i])
        self.peg = PEG(dim, no_residual)
        self.blocks = nn.ModuleList([
            TwinsBlock(dim, LocallyGroupedSelfAttention(dim, HEADS[i], WS[i])),
            TwinsBlock(dim, GlobalSubsampledAttention(dim, HEADS[i], SR[i], no_transpose)),
        ])

    def forward(self, x):
        x, size = self.embed(x)
        x = self.blocks[0](x, size)
        x = self.peg(x, size)
        x = self.blocks[1](x, size)
        return x, size


class TwinsSVT(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.stages = nn.ModuleList([TwinsStage(CHANS, 0, **kw), TwinsStage(DIMS[0], 1, **kw)])
        self.norm = nn.LayerNorm(DIMS[-1], eps=1e-6)
        self.fc = nn.Linear(DIMS[-1], N_CLASSES)

    def forward(self, img):
        x = img
        for i, stage in enumerate(self.stages):
            x, (h, w) = stage(x)
            if i + 1 < len(self.stages):
                x = x.transpose(1, 2).reshape(x.shape[0], -1, h, w)
        return self.fc(self.norm(x).mean(dim=1))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_twins_svt torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = TwinsSVT(no_residual=bug == "torch_peg_no_residual", no_transpose=bug == "torch_gsa_no_transpose")
    return m.eval()


def _images():
    return np.random.default_rng(41).standard_normal((BATCH, CHANS, HEIGHT, WIDTH)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()

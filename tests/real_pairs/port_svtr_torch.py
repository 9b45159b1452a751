"""Hand-written port, torch side: a tiny SVTR text recognizer (written by "person B").

The same math as port_svtr_paddle.py, re-implemented by hand: input image [2, 3, 16, 64]
(positional), output CTC log-probabilities [2, 16, 12].

Torch idioms on this side:
- root `SVTRTiny` registers `pos_embed` FIRST, as a [1, 16, 4, 16] map (channels-first, added to
  the conv output BEFORE flattening), then `stem` (`ConvStem`: `conv1`, `bn1`, `conv2`, `bn2`
  named attributes, F.gelu inline), `stage1` (ModuleList: `SVTRBlock(LocalMixer)`,
  `SVTRBlock(GlobalMixer)`), `downsample` (`MergeConv`: takes the TOKENS [B, N, C] and the grid
  size, reshapes, `conv` stride (2, 1), flattens, `ln`), `stage2` (ModuleList, one
  `SVTRBlock(GlobalMixer)`), `classifier` nn.Linear(24, 12). The pooling over the height is an
  inline `.mean(dim=1)` on a [B, H, W, C] view; log_softmax inline.
- `SVTRBlock`: `attn`, `ln1`, `ffn` = nn.Sequential(Linear, nn.GELU(), Linear), `ln2`;
  post-norm: x = ln1(x + attn(x)); x = ln2(x + ffn(x)).
- `GlobalMixer`: SEPARATE `q_proj`, `k_proj`, `v_proj`, `out_proj` Linears and
  F.scaled_dot_product_attention (its default scale 1 / sqrt(head_dim)).
- `LocalMixer(GlobalMixer)`: the window mask is computed vectorised from the token coordinates
  (|dh| <= 1 and |dw| <= 2 allowed) as a bool, turned into a 0 / -inf float mask and registered
  as a NON-persistent buffer `local_mask` [N, N], passed as SDPA's attn_mask.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_gelu_tanh            -> the block MLPs use nn.GELU(approximate="tanh") (the stem keeps the
                                exact F.gelu)
  torch_local_window_swapped -> LocalMixer builds its mask with the window's height and width
                                swapped: 5 x 3 (|dh| <= 2, |dw| <= 1) instead of 3 x 5
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

BATCH, VOCAB = 2, 12
OWN_BUGS = {"torch_gelu_tanh", "torch_local_window_swapped"}
OTHER_BUGS = {"paddle_attn_scale_dim", "paddle_prenorm_flag"}


class ConvStem(nn.Module):
    def __init__(self, in_ch=3, dim=16):
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, dim // 2, 3, 2, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(dim // 2)
        self.conv2 = nn.Conv2d(dim // 2, dim, 3, 2, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(dim)

    def forward(self, x):
        x = F.gelu(self.bn1(self.conv1(x)))
        return F.gelu(self.bn2(self.conv2(x)))


class GlobalMixer(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.out_proj = nn.Linear(dim, dim)

    def _mask(self):
        return None

    def forward(self, x):
        b, n, c = x.shape
        q = self.q_proj(x).view(b, n, self.heads, -1).transpose(1, 2)
        k = self.k_proj(x).view(b, n, self.heads, -1).transpose(1, 2)
        v = self.v_proj(x).view(b, n, self.heads, -1).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=self._mask())
        return self.out_proj(y.transpose(1, 2).reshape(b, n, c))


class LocalMixer(GlobalMixer):
    def __init__(self, dim, heads, grid, window=(3, 5)):
        super().__init__(dim, heads)
        h, w = grid
        ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
        ys, xs = ys.flatten(), xs.flatten()
        allowed = ((ys[:, None] - ys[None, :]).abs() <= window[0] // 2) & (
            (xs[:, None] - xs[None, :]).abs() <= window[1] // 2
        )
        mask = torch.zeros(h * w, h * w).masked_fill(~allowed, float("-inf"))
        self.register_buffer("local_mask", mask, persistent=False)

    def _mask(self):
        return self.local_mask


class SVTRBlock(nn.Module):
    def __init__(self, mixer, dim, mlp_ratio=2, gelu_approx="none"):
        super().__init__()
        self.attn = mixer
        self.ln1 = nn.LayerNorm(dim, eps=1e-6)
        self.ffn = nn.Sequential(
            nn.Linear(dim, dim * mlp_ratio), nn.GELU(approximate=gelu_approx), nn.Linear(dim * mlp_ratio, dim)
        )
        self.ln2 = nn.LayerNorm(dim, eps=1e-6)

    def forward(self, x):
        x = self.ln1(x + self.attn(x))
        return self.ln2(x + self.ffn(x))


class MergeConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, stride=(2, 1), padding=1)
        self.ln = nn.LayerNorm(cout, eps=1e-6)

    def forward(self, x, hw):
        b, _n, c = x.shape
        x = x.transpose(1, 2).reshape(b, c, hw[0], hw[1])
        x = self.conv(x)
        return self.ln(x.flatten(2).transpose(1, 2))


class SVTRTiny(nn.Module):
    def __init__(self, gelu_approx="none", window=(3, 5)):
        super().__init__()
        self.grid = (4, 16)
        self.pos_embed = nn.Parameter(torch.zeros(1, 16, *self.grid))
        self.stem = ConvStem(3, 16)
        self.stage1 = nn.ModuleList([
            SVTRBlock(LocalMixer(16, 2, self.grid, window), 16, gelu_approx=gelu_approx),
            SVTRBlock(GlobalMixer(16, 2), 16, gelu_approx=gelu_approx),
        ])
        self.downsample = MergeConv(16, 24)
        self.stage2 = nn.ModuleList([SVTRBlock(GlobalMixer(24, 2), 24, gelu_approx=gelu_approx)])
        self.classifier = nn.Linear(24, VOCAB)

    def forward(self, img):
        x = self.stem(img) + self.pos_embed  # [B, 16, 4, 16]
        x = x.flatten(2).transpose(1, 2)
        for blk in self.stage1:
            x = blk(x)
        x = self.downsample(x, self.grid)
        for blk in self.stage2:
            x = blk(x)
        b, _, c = x.shape
        x = x.view(b, self.grid[0] // 2, self.grid[1], c).mean(dim=1)  # [B, W, C]
        return F.log_softmax(self.classifier(x), dim=-1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_svtr torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = SVTRTiny(gelu_approx="tanh" if bug == "torch_gelu_tanh" else "none",
                 window=(5, 3) if bug == "torch_local_window_swapped" else (3, 5))
    return m.eval()


def _image():
    rng = np.random.default_rng(53)
    return rng.standard_normal((BATCH, 3, 16, 64)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # CTC log-probabilities [2, 16, 12]
    return (output**2).mean()

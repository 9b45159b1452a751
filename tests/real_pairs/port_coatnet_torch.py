"""Hand-written port, torch side: a tiny CoAtNet-style conv + transformer hybrid (written by "person B").

The same math as port_coatnet_paddle.py, re-implemented by hand in a timm-like style: input
image [2, 3, 16, 16] (positional), output logits [2, 10].

  stem conv 3x3 s2 (3 -> 16) + BN(eps 1e-3) + GELU; one MBConv (expand 4, depthwise 3x3,
  squeeze-excitation 64 -> 4 -> 64 with SiLU / sigmoid, project, residual); max-pool 2x2, flatten
  to 16 tokens, Linear 16 -> 32; two pre-norm transformer blocks (2 heads of 16, 2-D relative
  position bias over the 4x4 grid, MLP 32 -> 64 -> 32 with GELU); LayerNorm, token mean, Linear.

Torch idioms on this side:
- root `CoAtNet` registers `stem` (nn.Sequential: Conv2d, BatchNorm2d, GELU), `stage1` (MBConv),
  `pool` (nn.MaxPool2d(2)), `embed` (a Linear on the flattened tokens, not a 1x1 conv),
  `transformer` (nn.Sequential of two `Block`s, called once), `final_norm`, `fc`.
- `MBConv` registers `expand` (Sequential conv / BN / GELU), then `se` (SqueezeExcite), then
  `depthwise` (Sequential conv / BN / GELU), then `project` (Sequential conv / BN); it calls
  expand -> depthwise -> se -> project and adds the shortcut.
- `SqueezeExcite`: `fc1` Linear(64, 4), `act` nn.SiLU, `fc2` Linear(4, 64), `gate` nn.Sigmoid,
  on the spatial mean (Linear layers, not 1x1 convs).
- `Block`: `ln1`, `attn`, `ln2`, `mlp` (nn.Sequential: Linear, GELU, Linear).
- `RelativeAttention` registers the table FIRST as `rel_bias` [heads, 49] (head-major, the
  transpose of the paddle table), then ONE fused `qkv` Linear(32, 96) (q | k | v blocks of 32
  rows, head-major inside each), then `out`. The relative index is computed ON THE FLY in every
  forward from torch.meshgrid (no buffer).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_relpos_sign    -> the on-the-fly relative coordinates are taken j - i instead of i - j,
                          so token i reads the table cell of the mirrored offset
  torch_mlp_gelu_tanh  -> the transformer MLP's activation is nn.GELU(approximate="tanh") instead
                          of the exact erf GELU (precision-level)
"""
import os

import numpy as np
import torch
from torch import nn

IN_CHANNELS, STEM_WIDTH, EXPANSION, SE_WIDTH = 3, 16, 4, 4
EMBED_DIM, NUM_HEADS, MLP_HIDDEN, NUM_BLOCKS, GRID = 32, 2, 64, 2, 4
NUM_CLASSES = 10
BATCH, IMG = 2, 16
OWN_BUGS = {"torch_relpos_sign", "torch_mlp_gelu_tanh"}
OTHER_BUGS = {"paddle_relidx_stride", "paddle_dw_bn_eps"}


class SqueezeExcite(nn.Module):
    def __init__(self, channels, rd_channels):
        super().__init__()
        self.fc1 = nn.Linear(channels, rd_channels)
        self.act = nn.SiLU()
        self.fc2 = nn.Linear(rd_channels, channels)
        self.gate = nn.Sigmoid()

    def forward(self, x):
        s = x.mean(dim=(2, 3))
        s = self.gate(self.fc2(self.act(self.fc1(s))))
        return x * s[:, :, None, None]


class MBConv(nn.Module):
    def __init__(self, channels):
        super().__init__()
        mid = channels * EXPANSION
        self.expand = nn.Sequential(
            nn.Conv2d(channels, mid, 1, bias=False), nn.BatchNorm2d(mid, eps=1e-3), nn.GELU())
        self.se = SqueezeExcite(mid, SE_WIDTH)
        self.depthwise = nn.Sequential(
            nn.Conv2d(mid, mid, 3, padding=1, groups=mid, bias=False), nn.BatchNorm2d(mid, eps=1e-3), nn.GELU())
        self.project = nn.Sequential(nn.Conv2d(mid, channels, 1, bias=False), nn.BatchNorm2d(channels, eps=1e-3))

    def forward(self, x):
        return x + self.project(self.se(self.depthwise(self.expand(x))))


class RelativeAttention(nn.Module):
    def __init__(self, dim, num_heads, grid, flip_sign=False):
        super().__init__()
        self.num_heads, self.grid, self.flip_sign = num_heads, grid, flip_sign
        self.rel_bias = nn.Parameter(torch.zeros(num_heads, (2 * grid - 1) ** 2))
        nn.init.trunc_normal_(self.rel_bias, std=0.02)
        self.qkv = nn.Linear(dim, dim * 3)
        self.out = nn.Linear(dim, dim)

    def _rel_index(self, device):
        g = self.grid
        coords = torch.stack(torch.meshgrid(torch.arange(g, device=device), torch.arange(g, device=device),
                                            indexing="ij")).flatten(1)  # [2, N]
        if self.flip_sign:
            rel = coords[:, None, :] - coords[:, :, None]
        else:
            rel = coords[:, :, None] - coords[:, None, :]
        rel = rel.permute(1, 2, 0) + (g - 1)  # [N, N, 2]
        return rel[..., 0] * (2 * g - 1) + rel[..., 1]

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        scores = q @ k.transpose(-2, -1) / (C // self.num_heads) ** 0.5
        scores = scores + self.rel_bias[:, self._rel_index(x.device)].unsqueeze(0)  # [1, H, N, N]
        attn = scores.softmax(dim=-1)
        y = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.out(y)


class Block(nn.Module):
    def __init__(self, flip_sign=False, tanh_gelu=False):
        super().__init__()
        self.ln1 = nn.LayerNorm(EMBED_DIM)
        self.attn = RelativeAttention(EMBED_DIM, NUM_HEADS, GRID, flip_sign)
        self.ln2 = nn.LayerNorm(EMBED_DIM)
        self.mlp = nn.Sequential(
            nn.Linear(EMBED_DIM, MLP_HIDDEN),
            nn.GELU(approximate="tanh" if tanh_gelu else "none"),
            nn.Linear(MLP_HIDDEN, EMBED_DIM),
        )

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        return x


class CoAtNet(nn.Module):
    def __init__(self, flip_sign=False, tanh_gelu=False):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(IN_CHANNELS, STEM_WIDTH, 3, stride=2, padding=1, bias=False),
            nn.BatchNorm2d(STEM_WIDTH, eps=1e-3),
            nn.GELU(),
        )
        self.stage1 = MBConv(STEM_WIDTH)
        self.pool = nn.MaxPool2d(2)
        self.embed = nn.Linear(STEM_WIDTH, EMBED_DIM)
        self.transformer = nn.Sequential(*[Block(flip_sign, tanh_gelu) for _ in range(NUM_BLOCKS)])
        self.final_norm = nn.LayerNorm(EMBED_DIM)
        self.fc = nn.Linear(EMBED_DIM, NUM_CLASSES)

    def forward(self, img):
        x = self.stage1(self.stem(img))
        x = self.pool(x).flatten(2).transpose(1, 2)  # [B, 16, 16]
        x = self.transformer(self.embed(x))
        return self.fc(self.final_norm(x).mean(dim=1))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_coatnet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = CoAtNet(flip_sign=bug == "torch_relpos_sign", tanh_gelu=bug == "torch_mlp_gelu_tanh")
    return m.eval()


def _image():
    rng = np.random.default_rng(34)
    return rng.standard_normal((BATCH, IN_CHANNELS, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()

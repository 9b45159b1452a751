"""Hand-written port, torch side: a tiny MaxViT stage (written by "person B").

The same math as port_maxvit_paddle.py, re-implemented by hand in the style of torchvision's
MaxVit: input [2, 16, 8, 8] (positional, NCHW), two MaxViT layers of 16 channels (MBConv with
expansion 4 and SE 64 -> 4 -> 64, then window attention over 4x4 windows, then grid attention
over a dilated 4x4 grid; 2 heads of 8 with a learned relative position bias; MLP 16 -> 64 -> 16;
BN eps 1e-3, LayerNorm eps 1e-5). Output: the stage output [2, 16, 8, 8] (NCHW).

Torch idioms on this side:
- root `MaxVitStage`: `stage` = nn.Sequential of `MaxVitLayer`, called ONCE.
- `MaxVitLayer`: `layers` = nn.Sequential(OrderedDict(MBconv, window_attention,
  grid_attention)); everything stays NCHW.
- `PartitionAttentionLayer`: registers `partition_op` / `departition_op` MODULES
  (`WindowPartition` uses Tensor.unfold twice + permute; `GridPartition` uses F.unfold with
  kernel 4 and dilation H/4, its departition F.fold), then `attn_layer` = nn.Sequential(LayerNorm,
  RelativePositionalMultiHeadAttention) and `mlp_layer` = nn.Sequential(LayerNorm, Linear, GELU,
  Linear).
- `RelativePositionalMultiHeadAttention`: ONE packed `qkv` Linear(16, 48) (q | k | v, head-major
  inside each), `merge` Linear, the bias table `relative_position_bias_table` as [heads, 7, 7]
  (TF layout) gathered with two non-persistent index buffers `rel_index_h` / `rel_index_w`
  [16, 16]; attention through F.scaled_dot_product_attention with the bias as a float mask.
- `MBConv`: `layers` = nn.Sequential(OrderedDict(pre_norm BN, conv_a = Sequential(conv 1x1, BN,
  GELU), conv_b = Sequential(depthwise 3x3, BN, GELU), squeeze_excitation, conv_c 1x1)), residual
  in the forward. `SqueezeExcitation` is made of LINEARS (`fc1` 64 -> 4, `act` nn.SiLU, `fc2` 4 ->
  64, `gate` nn.Sigmoid) on the spatial mean.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_relpos_transposed -> the attention gathers its bias table as table[:, rel_index_w,
                             rel_index_h] (row / column offsets swapped), in every attention
  torch_gelu_tanh         -> the MLP's activation is nn.GELU(approximate="tanh") instead of the
                             exact erf GELU (precision-level), in every MLP
"""
import os
from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

CHANNELS, N_HEADS, P_SIZE, EXPANSION, MLP_RATIO, SQUEEZE, N_LAYERS = 16, 2, 4, 4, 4, 4, 2
BATCH, SIZE = 2, 8
OWN_BUGS = {"torch_relpos_transposed", "torch_gelu_tanh"}
OTHER_BUGS = {"paddle_grid_as_window", "paddle_bn_eps_default"}


class WindowPartition(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        # [B, C, H, W] -> [B, C, H/p, W/p, p, p] -> [B * H/p * W/p, p * p, C]
        c = x.shape[1]
        x = x.unfold(2, self.p, self.p).unfold(3, self.p, self.p)
        return x.permute(0, 2, 3, 4, 5, 1).reshape(-1, self.p * self.p, c)


class WindowDepartition(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x, h, w):
        p, c = self.p, x.shape[-1]
        x = x.view(-1, h // p, w // p, p, p, c)
        return x.permute(0, 5, 1, 3, 2, 4).reshape(-1, c, h, w)


class GridPartition(nn.Module):
    def __init__(self, g):
        super().__init__()
        self.g = g

    def forward(self, x):
        # dilated unfold: patch (i, j) collects the g x g tokens (i + a * H/g, j + b * W/g)
        b, c, h, w = x.shape
        cols = F.unfold(x, kernel_size=self.g, dilation=(h // self.g, w // self.g))  # [B, C*g*g, L]
        cols = cols.view(b, c, self.g * self.g, -1)
        return cols.permute(0, 3, 2, 1).reshape(-1, self.g * self.g, c)


class GridDepartition(nn.Module):
    def __init__(self, g):
        super().__init__()
        self.g = g

    def forward(self, x, h, w):
        c = x.shape[-1]
        n_groups = (h // self.g) * (w // self.g)
        cols = x.view(-1, n_groups, self.g * self.g, c).permute(0, 3, 2, 1).reshape(-1, c * self.g * self.g, n_groups)
        return F.fold(cols, output_size=(h, w), kernel_size=self.g, dilation=(h // self.g, w // self.g))


class RelativePositionalMultiHeadAttention(nn.Module):
    def __init__(self, dim, heads, size, swap_bias=False):
        super().__init__()
        self.n_heads, self.head_dim, self.swap_bias = heads, dim // heads, swap_bias
        self.qkv = nn.Linear(dim, 3 * dim)
        self.merge = nn.Linear(dim, dim)
        self.relative_position_bias_table = nn.Parameter(torch.zeros(heads, 2 * size - 1, 2 * size - 1))
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)
        ys, xs = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
        ys, xs = ys.flatten(), xs.flatten()
        self.register_buffer("rel_index_h", ys[:, None] - ys[None, :] + size - 1, persistent=False)
        self.register_buffer("rel_index_w", xs[:, None] - xs[None, :] + size - 1, persistent=False)

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        if self.swap_bias:
            bias = self.relative_position_bias_table[:, self.rel_index_w, self.rel_index_h]
        else:
            bias = self.relative_position_bias_table[:, self.rel_index_h, self.rel_index_w]
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias.unsqueeze(0))
        return self.merge(out.transpose(1, 2).reshape(b, n, c))


class PartitionAttentionLayer(nn.Module):
    def __init__(self, dim, heads, size, kind, swap_bias=False, gelu_approx="none"):
        super().__init__()
        if kind == "window":
            self.partition_op, self.departition_op = WindowPartition(size), WindowDepartition(size)
        else:
            self.partition_op, self.departition_op = GridPartition(size), GridDepartition(size)
        self.attn_layer = nn.Sequential(
            nn.LayerNorm(dim), RelativePositionalMultiHeadAttention(dim, heads, size, swap_bias))
        self.mlp_layer = nn.Sequential(
            nn.LayerNorm(dim), nn.Linear(dim, dim * MLP_RATIO), nn.GELU(approximate=gelu_approx),
            nn.Linear(dim * MLP_RATIO, dim))

    def forward(self, x):
        h, w = x.shape[-2:]
        t = self.partition_op(x)
        t = t + self.attn_layer(t)
        t = t + self.mlp_layer(t)
        return self.departition_op(t, h, w)


class SqueezeExcitation(nn.Module):
    def __init__(self, channels, squeeze):
        super().__init__()
        self.fc1 = nn.Linear(channels, squeeze)
        self.act = nn.SiLU()
        self.fc2 = nn.Linear(squeeze, channels)
        self.gate = nn.Sigmoid()

    def forward(self, x):
        s = self.gate(self.fc2(self.act(self.fc1(x.mean(dim=(2, 3))))))
        return x * s[:, :, None, None]


class MBConv(nn.Module):
    def __init__(self, dim):
        super().__init__()
        mid = dim * EXPANSION
        self.layers = nn.Sequential(OrderedDict([
            ("pre_norm", nn.BatchNorm2d(dim, eps=1e-3)),
            ("conv_a", nn.Sequential(nn.Conv2d(dim, mid, 1, bias=False), nn.BatchNorm2d(mid, eps=1e-3), nn.GELU())),
            ("conv_b", nn.Sequential(nn.Conv2d(mid, mid, 3, padding=1, groups=mid, bias=False),
                                     nn.BatchNorm2d(mid, eps=1e-3), nn.GELU())),
            ("squeeze_excitation", SqueezeExcitation(mid, SQUEEZE)),
            ("conv_c", nn.Conv2d(mid, dim, 1)),
        ]))

    def forward(self, x):
        return x + self.layers(x)


class MaxVitLayer(nn.Module):
    def __init__(self, dim, swap_bias=False, gelu_approx="none"):
        super().__init__()
        self.layers = nn.Sequential(OrderedDict([
            ("MBconv", MBConv(dim)),
            ("window_attention", PartitionAttentionLayer(dim, N_HEADS, P_SIZE, "window", swap_bias, gelu_approx)),
            ("grid_attention", PartitionAttentionLayer(dim, N_HEADS, P_SIZE, "grid", swap_bias, gelu_approx)),
        ]))

    def forward(self, x):
        return self.layers(x)


class MaxVitStage(nn.Module):
    def __init__(self, swap_bias=False, gelu_approx="none"):
        super().__init__()
        self.stage = nn.Sequential(*[MaxVitLayer(CHANNELS, swap_bias, gelu_approx) for _ in range(N_LAYERS)])

    def forward(self, x):
        return self.stage(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_maxvit torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = MaxVitStage(swap_bias=bug == "torch_relpos_transposed",
                    gelu_approx="tanh" if bug == "torch_gelu_tanh" else "none")
    return m.eval()


def _image():
    rng = np.random.default_rng(31)
    return rng.standard_normal((BATCH, CHANNELS, SIZE, SIZE)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # stage output [2, 16, 8, 8]
    return (output**2).mean()

"""Hand-written port, torch side: a tiny EfficientViT-style classifier (written by "person B").

The same math as port_efficientvit_paddle.py, re-implemented by hand: input `pixels`
[2, 3, 32, 32] (positional), a conv / BN / Hardswish stem (3 -> 8, stride 2), an inverted
residual 8 -> 16 (expand 4, stride 2), two EfficientViT blocks of width 16 at 8 x 8 (lite
multi-scale linear attention + inverted residual, both residual), then avg-pool -> Linear(16, 10).

Torch idioms on this side:
- root `EfficientViTNano`: `stem` = nn.Sequential(Conv2d, BatchNorm2d, nn.Hardswish),
  `stage1` (InvResHS), `stage2` = nn.Sequential of two `EViTLayer` (called once),
  `head` = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10)).
- `InvResHS`: `inv` (1x1 conv, BN, nn.Hardswish), `dwc` (dw 3x3 conv, BN, nn.Hardswish),
  `pwl` (1x1 conv, BN): three nn.Sequential; the residual add (stride 1) is inline.
- `EViTLayer`: `attn` (LiteLinearAttention) and `ffn` (InvResHS); the attention residual is
  inline, the ffn residual is inside InvResHS.
- `LiteLinearAttention` works on channels-last tokens [B, HW, C]:
  - SEPARATE `q_lin`, `k_lin`, `v_lin` nn.Linear(16, 16, bias=False), head-major outputs
    (head h = features h*8 : (h+1)*8);
  - the aggregation runs on a PLANAR packed map cat([q, k, v]) [B, 48, H, W] (channel
    p*16 + h*8 + t): `ms_branches` = ModuleList of nn.Sequential(depthwise KxK conv, 1x1 conv
    with groups=6), K = 3, 5, no biases;
  - ReLU linear attention with einsum, normaliser computed separately:
    num = q . (k^T v), den = q . sum_n k_n, out = num / (den + 1e-15);
  - `out_lin` nn.Linear(48, 16, bias=False) on the tokens, back to NCHW, `out_bn` BatchNorm2d(16).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_local_relu6      -> the EfficientViT layers build their local inverted residual with
                            act_layer=nn.ReLU6 (MobileNetV2 habit) instead of nn.Hardswish
  torch_stride_on_expand -> InvResHS puts the stride on the 1x1 expand conv instead of the
                            depthwise conv (stage1: the expand conv samples every other pixel)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IN_CHANNELS, STEM_WIDTH, EMBED, MLP_RATIO, NUM_CLASSES = 3, 8, 16, 4, 10
DIM_PER_HEAD, DEPTH = 8, 2
KERNELS = (3, 5)
EPS = 1e-15
BATCH, RES = 2, 32
OWN_BUGS = {"torch_local_relu6", "torch_stride_on_expand"}
OTHER_BUGS = {"paddle_qkv_split_planar", "paddle_proj_bn_eps"}


class InvResHS(nn.Module):
    def __init__(self, cin, cout, stride, ratio, act_layer=nn.Hardswish, stride_on_expand=False):
        super().__init__()
        hidden = cin * ratio
        s_inv, s_dw = (stride, 1) if stride_on_expand else (1, stride)
        self.use_res = stride == 1 and cin == cout
        self.inv = nn.Sequential(nn.Conv2d(cin, hidden, 1, s_inv, 0, bias=False), nn.BatchNorm2d(hidden), act_layer())
        self.dwc = nn.Sequential(nn.Conv2d(hidden, hidden, 3, s_dw, 1, groups=hidden, bias=False),
                                 nn.BatchNorm2d(hidden), act_layer())
        self.pwl = nn.Sequential(nn.Conv2d(hidden, cout, 1, 1, 0, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.pwl(self.dwc(self.inv(x)))
        return x + y if self.use_res else y


class LiteLinearAttention(nn.Module):
    def __init__(self, dim, head_dim, kernels):
        super().__init__()
        self.head_dim = head_dim
        self.n_heads = dim // head_dim
        inner = self.n_heads * head_dim
        self.q_lin = nn.Linear(dim, inner, bias=False)
        self.k_lin = nn.Linear(dim, inner, bias=False)
        self.v_lin = nn.Linear(dim, inner, bias=False)
        self.ms_branches = nn.ModuleList([
            nn.Sequential(
                nn.Conv2d(3 * inner, 3 * inner, k, padding=k // 2, groups=3 * inner, bias=False),
                nn.Conv2d(3 * inner, 3 * inner, 1, groups=3 * self.n_heads, bias=False),
            )
            for k in kernels
        ])
        self.out_lin = nn.Linear(inner * (1 + len(kernels)), dim, bias=False)
        self.out_bn = nn.BatchNorm2d(dim)

    def forward(self, x):
        b, c, h, w = x.shape
        n, hd = h * w, self.head_dim
        tokens = x.flatten(2).transpose(1, 2)  # [B, HW, C]
        planar = torch.cat([self.q_lin(tokens), self.k_lin(tokens), self.v_lin(tokens)], dim=-1)
        planar = planar.transpose(1, 2).reshape(b, -1, h, w)  # [B, 48, H, W], [q | k | v]
        qs, ks, vs = [], [], []
        for m in [planar] + [branch(planar) for branch in self.ms_branches]:
            q, k, v = m.flatten(2).chunk(3, dim=1)  # [B, 16, HW] each
            qs.append(q.reshape(b, self.n_heads, hd, n))
            ks.append(k.reshape(b, self.n_heads, hd, n))
            vs.append(v.reshape(b, self.n_heads, hd, n))
        q = F.relu(torch.cat(qs, dim=1))  # [B, 6, d, HW]
        k = F.relu(torch.cat(ks, dim=1))
        v = torch.cat(vs, dim=1)
        kv = torch.einsum("bhdn,bhen->bhde", k, v)
        num = torch.einsum("bhdn,bhde->bhen", q, kv)
        den = torch.einsum("bhdn,bhd->bhn", q, k.sum(dim=-1))
        out = num / (den.unsqueeze(2) + EPS)  # [B, 6, d, HW]
        out = out.reshape(b, -1, n).transpose(1, 2)  # [B, HW, 48]
        y = self.out_lin(out).transpose(1, 2).reshape(b, c, h, w)
        return self.out_bn(y)


class EViTLayer(nn.Module):
    def __init__(self, dim, act_layer=nn.Hardswish):
        super().__init__()
        self.attn = LiteLinearAttention(dim, DIM_PER_HEAD, KERNELS)
        self.ffn = InvResHS(dim, dim, 1, MLP_RATIO, act_layer=act_layer)

    def forward(self, x):
        x = x + self.attn(x)
        return self.ffn(x)  # residual inside (stride 1, same width)


class EfficientViTNano(nn.Module):
    def __init__(self, local_act=nn.Hardswish, stride_on_expand=False):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(IN_CHANNELS, STEM_WIDTH, 3, 2, 1, bias=False),
                                  nn.BatchNorm2d(STEM_WIDTH), nn.Hardswish())
        self.stage1 = InvResHS(STEM_WIDTH, EMBED, 2, MLP_RATIO, stride_on_expand=stride_on_expand)
        self.stage2 = nn.Sequential(*[EViTLayer(EMBED, local_act) for _ in range(DEPTH)])
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(EMBED, NUM_CLASSES))

    def forward(self, pixels):
        return self.head(self.stage2(self.stage1(self.stem(pixels))))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_efficientvit torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = EfficientViTNano(local_act=nn.ReLU6 if bug == "torch_local_relu6" else nn.Hardswish,
                         stride_on_expand=bug == "torch_stride_on_expand")
    return m.eval()


def _pixels():
    rng = np.random.default_rng(38)
    return rng.standard_normal((BATCH, IN_CHANNELS, RES, RES)).astype("float32")


def inputs():
    return (torch.from_numpy(_pixels()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()

"""Hand-written port, torch side: a tiny HorNet (Rao et al. 2022) with recursive gated convolutions (written by "person B").

The same math as port_hornet_paddle.py, re-implemented by hand in the style of the official
HorNet code (raoyongming/HorNet): input `images` [2, 3, 32, 32] (positional), a 4x4 stride-4
stem to 32 channels, one HorNet block (gnConv order 3), a 2x2 stride-2 downsample to 64, one
HorNet block (gnConv order 4), global average pool, LayerNorm, Linear(64, 10): logits [2, 10].

Torch idioms on this side:
- `LayerNorm` is hand-written (official HorNet / ConvNeXt class) with a data_format switch:
  "channels_first" normalises over dim 1 of an NCHW map by hand (u = mean, s = mean of squared
  deviations, (x - u) / sqrt(s + eps), then weight[:, None, None] / bias[:, None, None]);
  "channels_last" calls F.layer_norm. eps 1e-6 everywhere.
- root `HorNet`: `downsample_layers` (ModuleList: [0] = Sequential(Conv2d 4x4 s4,
  LayerNorm channels_first) the stem, [1] = Sequential(LayerNorm channels_first, Conv2d 2x2 s2)),
  `stages` (ModuleList of nn.Sequential of `Block`), `norm` (nn.LayerNorm(64, eps=1e-6) on the
  pooled vector), `head`.
- `Block` registers `norm1` (channels_first), `gnconv`, `norm2` (channels_last), `pwconv1`
  nn.Linear(C, 4C), `act` nn.GELU(), `pwconv2` nn.Linear(4C, C), then `gamma1`, `gamma2`
  (nn.Parameter [C]). The MLP runs channels-last: permute(0, 2, 3, 1), norm2, pwconv1, act,
  pwconv2, gamma2 *, permute(0, 3, 1, 2); gamma1 is applied as gamma1.view(C, 1, 1) on the
  channels-first gnConv branch.
- `gnconv`: ONE fused `proj_in` Conv2d(dim, 2 * dim, 1) split with torch.split into pwa (d_0)
  and abc (sum d_i); `dwconv` depthwise 7x7 with bias; `proj_out`; `pws` (ModuleList of 1x1
  convs); the depthwise output, times 1/3, split with torch.split(dims). Registration:
  `proj_in`, `dwconv`, `proj_out`, `pws`.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_cf_norm_unbiased_var -> the channels-first LayerNorm computes its variance with
                                x.var(1, keepdim=True), torch's UNBIASED estimator (divides by
                                C - 1), instead of the mean of squared deviations
  torch_gamma1_for_mlp       -> Block.forward scales the MLP branch with gamma1 instead of
                                gamma2 (copy-paste of the gnConv branch line)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IN_CHANS, NUM_CLASSES = 3, 10
DIMS, ORDERS = [32, 64], [3, 4]
BATCH, SIZE = 2, 32
OWN_BUGS = {"torch_cf_norm_unbiased_var", "torch_gamma1_for_mlp"}
OTHER_BUGS = {"paddle_gelu_tanh", "paddle_norm1_back_perm"}


class LayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-6, data_format="channels_last", unbiased_var=False):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))
        self.eps = eps
        self.data_format = data_format
        self.unbiased_var = unbiased_var
        self.normalized_shape = (normalized_shape,)

    def forward(self, x):
        if self.data_format == "channels_last":
            return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        u = x.mean(1, keepdim=True)
        if self.unbiased_var:
            s = x.var(1, keepdim=True)
        else:
            s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class gnconv(nn.Module):
    def __init__(self, dim, order=5, s=1.0 / 3.0):
        super().__init__()
        self.order = order
        self.dims = [dim // 2**i for i in range(order)]
        self.dims.reverse()
        self.proj_in = nn.Conv2d(dim, 2 * dim, 1)
        self.dwconv = nn.Conv2d(sum(self.dims), sum(self.dims), kernel_size=7, padding=3, bias=True, groups=sum(self.dims))
        self.proj_out = nn.Conv2d(dim, dim, 1)
        self.pws = nn.ModuleList([nn.Conv2d(self.dims[i], self.dims[i + 1], 1) for i in range(order - 1)])
        self.scale = s

    def forward(self, x):
        fused_x = self.proj_in(x)
        pwa, abc = torch.split(fused_x, (self.dims[0], sum(self.dims)), dim=1)
        dw_abc = self.dwconv(abc) * self.scale
        dw_list = torch.split(dw_abc, self.dims, dim=1)
        x = pwa * dw_list[0]
        for i in range(self.order - 1):
            x = self.pws[i](x) * dw_list[i + 1]
        return self.proj_out(x)


class Block(nn.Module):
    def __init__(self, dim, order, layer_scale_init_value=1e-6, unbiased_var=False, gamma1_for_mlp=False):
        super().__init__()
        self.gamma1_for_mlp = gamma1_for_mlp
        self.norm1 = LayerNorm(dim, eps=1e-6, data_format="channels_first", unbiased_var=unbiased_var)
        self.gnconv = gnconv(dim, order)
        self.norm2 = LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.pwconv2 = nn.Linear(4 * dim, dim)
        self.gamma1 = nn.Parameter(layer_scale_init_value * torch.ones(dim))
        self.gamma2 = nn.Parameter(layer_scale_init_value * torch.ones(dim))

    def forward(self, x):
        _, c, _, _ = x.shape
        gamma1 = self.gamma1.view(c, 1, 1)
        x = x + gamma1 * self.gnconv(self.norm1(x))
        inp = x
        x = x.permute(0, 2, 3, 1)
        x = self.norm2(x)
        x = self.pwconv1(x)
        x = self.act(x)
        x = self.pwconv2(x)
        x = (self.gamma1 if self.gamma1_for_mlp else self.gamma2) * x
        x = x.permute(0, 3, 1, 2)
        return inp + x


class HorNet(nn.Module):
    def __init__(self, unbiased_var=False, gamma1_for_mlp=False):
        super().__init__()
        self.downsample_layers = nn.ModuleList()
        self.downsample_layers.append(
            nn.Sequential(
                nn.Conv2d(IN_CHANS, DIMS[0], kernel_size=4, stride=4),
                LayerNorm(DIMS[0], eps=1e-6, data_format="channels_first", unbiased_var=unbiased_var),
            )
        )
        self.downsample_layers.append(
            nn.Sequential(
                LayerNorm(DIMS[0], eps=1e-6, data_format="channels_first", unbiased_var=unbiased_var),
                nn.Conv2d(DIMS[0], DIMS[1], kernel_size=2, stride=2),
            )
        )
        self.stages = nn.ModuleList(
            [nn.Sequential(Block(DIMS[i], ORDERS[i], unbiased_var=unbiased_var, gamma1_for_mlp=gamma1_for_mlp)) for i in range(2)]
        )
        self.norm = nn.LayerNorm(DIMS[-1], eps=1e-6)
        self.head = nn.Linear(DIMS[-1], NUM_CLASSES)

    def forward(self, x):
        for i in range(2):
            x = self.downsample_layers[i](x)
            x = self.stages[i](x)
        return self.head(self.norm(x.mean([-2, -1])))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_hornet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = HorNet(unbiased_var=bug == "torch_cf_norm_unbiased_var", gamma1_for_mlp=bug == "torch_gamma1_for_mlp")
    return m.eval()


def _images():
    return np.random.default_rng(41).standard_normal((BATCH, IN_CHANS, SIZE, SIZE)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()

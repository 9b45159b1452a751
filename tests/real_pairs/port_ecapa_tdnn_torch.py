"""Hand-written port, torch side: a tiny ECAPA-TDNN speaker encoder (written by "person B").

The same math as port_ecapa_tdnn_paddle.py, re-implemented by hand (WeSpeaker-like naming):
input fbank [2, 48, 20] ([B, T, mel], positional), a k=5 TDNN head 20 -> 32, three SE-Res2Net
blocks (32 channels, scale 4, k 3, dilation 2 / 3 / 4), a 1x1 multi-layer feature aggregation
96 -> 96, attentive statistics pooling with global context, BatchNorm1d(192) and a Linear
192 -> 24: output embeddings [2, 24]. TDNN = conv -> ReLU -> BN; convs with kernel > 1 pad
'same' with reflect padding.

Torch idioms on this side:
- root `SpeakerECAPA`: `head`, `body` (nn.ModuleList of `SERes2Unit`), `mfa`, `asp`, `asp_bn`,
  `proj` (nn.Linear(192, 24)).
- a TDNN unit is `tdnn_unit(...)` = nn.Sequential(ReflectPadConv1d, nn.ReLU, nn.BatchNorm1d)
  (children "0", "1", "2"). `ReflectPadConv1d` subclasses nn.Conv1d (padding=0) and does the
  reflect F.pad in its own forward before `_conv_forward`.
- `SERes2Unit` registers `se` FIRST, then `conv_in`, `res2`, `conv_out`.
- `StackedRes2Conv`: the 3 convolved groups are ONE module holding stacked tensors: `kernels`
  [24, 8, 3] (group g = rows 8g:8g+8), `kernel_bias` [24], `bn_gamma` / `bn_beta` [24] and the
  buffers `bn_mean` / `bn_var` [24]. Its forward loops over the groups with the reflect pad,
  F.conv1d, relu and F.batch_norm(training=False) on slices: no child module is called.
- `SEGate`: `fc1`, `fc2` nn.Linear on the [B, C] time mean; relu / sigmoid inline.
- `AttentiveStatsPool`: `attention` = nn.Sequential(tdnn_unit(288, 16, 1), nn.Tanh(),
  nn.Conv1d(16, 96, 1)); global context with Tensor.std(unbiased=False) and .repeat; the
  weighted statistics torch.sum-based (variance clamped at 1e-12).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_reflect_as_zero_pad -> ReflectPadConv1d pads with F.pad's default (constant 0) instead
                               of mode="reflect": the k=5 head conv's first / last 2 frames change
  torch_residual_before_se  -> SERes2Unit.forward adds the residual BEFORE the squeeze-excitation
                               (se(y + x) instead of se(y) + x)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

MEL, T_FRAMES, B = 20, 48, 2
C, SCALE, SE_BOTTLENECK, ATTN_DIM, EMBED_DIM = 32, 4, 16, 16, 24
DILATION_PER_BLOCK = [2, 3, 4]
OWN_BUGS = {"torch_reflect_as_zero_pad", "torch_residual_before_se"}
OTHER_BUGS = {"paddle_res2_no_hier", "paddle_ctx_std_unbiased"}
_ZERO_PAD = False


class ReflectPadConv1d(nn.Conv1d):
    def __init__(self, in_channels, out_channels, kernel_size, dilation=1):
        super().__init__(in_channels, out_channels, kernel_size, dilation=dilation)
        self.same_pad = dilation * (kernel_size - 1) // 2

    def forward(self, x):
        if self.same_pad:
            if _ZERO_PAD:
                x = F.pad(x, (self.same_pad, self.same_pad))
            else:
                x = F.pad(x, (self.same_pad, self.same_pad), mode="reflect")
        return self._conv_forward(x, self.weight, self.bias)


def tdnn_unit(in_channels, out_channels, kernel_size, dilation=1):
    return nn.Sequential(
        ReflectPadConv1d(in_channels, out_channels, kernel_size, dilation),
        nn.ReLU(),
        nn.BatchNorm1d(out_channels),
    )


class StackedRes2Conv(nn.Module):
    def __init__(self, channels, scale, dilation, kernel_size=3):
        super().__init__()
        self.scale, self.width, self.dilation = scale, channels // scale, dilation
        n = (scale - 1) * self.width
        self.kernels = nn.Parameter(torch.empty(n, self.width, kernel_size))
        self.kernel_bias = nn.Parameter(torch.zeros(n))
        self.bn_gamma = nn.Parameter(torch.ones(n))
        self.bn_beta = nn.Parameter(torch.zeros(n))
        self.register_buffer("bn_mean", torch.zeros(n))
        self.register_buffer("bn_var", torch.ones(n))
        nn.init.kaiming_uniform_(self.kernels, a=5**0.5)
        self.pad = dilation * (kernel_size - 1) // 2

    def forward(self, x):
        chunks = torch.split(x, self.width, dim=1)
        out = [chunks[0]]
        sp = None
        for g in range(self.scale - 1):
            sl = slice(g * self.width, (g + 1) * self.width)
            sp = chunks[g + 1] if sp is None else chunks[g + 1] + sp
            y = F.conv1d(F.pad(sp, (self.pad, self.pad), mode="reflect"), self.kernels[sl], self.kernel_bias[sl],
                         dilation=self.dilation)
            sp = F.batch_norm(F.relu(y), self.bn_mean[sl], self.bn_var[sl], self.bn_gamma[sl], self.bn_beta[sl],
                              training=False, eps=1e-5)
            out.append(sp)
        return torch.cat(out, dim=1)


class SEGate(nn.Module):
    def __init__(self, channels, bottleneck):
        super().__init__()
        self.fc1 = nn.Linear(channels, bottleneck)
        self.fc2 = nn.Linear(bottleneck, channels)

    def forward(self, x):
        w = torch.sigmoid(self.fc2(F.relu(self.fc1(x.mean(dim=2)))))
        return x * w.unsqueeze(-1)


class SERes2Unit(nn.Module):
    def __init__(self, channels, dilation, residual_before_se=False):
        super().__init__()
        self.residual_before_se = residual_before_se
        self.se = SEGate(channels, SE_BOTTLENECK)
        self.conv_in = tdnn_unit(channels, channels, 1)
        self.res2 = StackedRes2Conv(channels, SCALE, dilation)
        self.conv_out = tdnn_unit(channels, channels, 1)

    def forward(self, x):
        out = self.conv_out(self.res2(self.conv_in(x)))
        if self.residual_before_se:
            return self.se(out + x)
        return self.se(out) + x


class AttentiveStatsPool(nn.Module):
    def __init__(self, in_dim, attn_dim):
        super().__init__()
        self.attention = nn.Sequential(tdnn_unit(3 * in_dim, attn_dim, 1), nn.Tanh(), nn.Conv1d(attn_dim, in_dim, 1))

    def forward(self, x):
        t = x.size(-1)
        glob_mean = x.mean(dim=-1, keepdim=True).repeat(1, 1, t)
        glob_std = x.std(dim=-1, unbiased=False, keepdim=True).repeat(1, 1, t)
        w = torch.softmax(self.attention(torch.cat([x, glob_mean, glob_std], dim=1)), dim=-1)
        mu = torch.sum(x * w, dim=-1)
        var = torch.sum(w * (x - mu.unsqueeze(-1)).pow(2), dim=-1)
        return torch.cat([mu, torch.sqrt(var.clamp(min=1e-12))], dim=1)


class SpeakerECAPA(nn.Module):
    def __init__(self, residual_before_se=False):
        super().__init__()
        self.head = tdnn_unit(MEL, C, 5)
        self.body = nn.ModuleList([SERes2Unit(C, d, residual_before_se) for d in DILATION_PER_BLOCK])
        cat_dim = C * len(DILATION_PER_BLOCK)
        self.mfa = tdnn_unit(cat_dim, cat_dim, 1)
        self.asp = AttentiveStatsPool(cat_dim, ATTN_DIM)
        self.asp_bn = nn.BatchNorm1d(2 * cat_dim)
        self.proj = nn.Linear(2 * cat_dim, EMBED_DIM)

    def forward(self, feats):
        x = self.head(feats.permute(0, 2, 1))
        hidden = []
        for block in self.body:
            x = block(x)
            hidden.append(x)
        x = self.mfa(torch.cat(hidden, dim=1))
        return self.proj(self.asp_bn(self.asp(x)))


def model():
    global _ZERO_PAD
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_ecapa_tdnn torch: unknown PADIFF_BUG {bug!r}")
    _ZERO_PAD = bug == "torch_reflect_as_zero_pad"
    torch.manual_seed(0)
    m = SpeakerECAPA(residual_before_se=bug == "torch_residual_before_se")
    return m.eval()


def _fbank():
    rng = np.random.default_rng(383)
    return rng.standard_normal((B, T_FRAMES, MEL)).astype("float32")


def inputs():
    return (torch.from_numpy(_fbank()),), {}


def loss(output):
    # speaker embeddings [2, 24]
    return (output**2).mean()

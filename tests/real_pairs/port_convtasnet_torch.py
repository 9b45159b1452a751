"""Hand-written port, torch side: a tiny Conv-TasNet speech separator (written by "person B", kaituoxu style).

The same math as port_convtasnet_paddle.py, re-implemented by hand: a mixture [2, 128]
(positional) -> the two estimated sources [2, 2, 128].

  mixture_w = relu(conv1d_U(mixture[:, None, :]))      N = 16 filters, L = 8, stride 4, K = 31
  separator: gLN(16) -> bottleneck 1x1 (16 -> 8) -> R = 2 repeats x X = 2 temporal blocks
             (1x1 8 -> 16, PReLU, gLN, depthwise 3-tap conv with dilation 2 ** x and padding
             2 ** x, PReLU, gLN, residual / skip 1x1 16 -> 8) -> PReLU(skip sum) -> 1x1 8 -> 32
             -> view [M, 2, 16, K] -> sigmoid
  decoder:   (mixture_w[:, None] * mask) -> Linear basis 16 -> 8 per frame -> overlap-add, hop 4

Torch idioms on this side:
- root `ConvTasNet`: `encoder` (an `Encoder` module with `conv1d_U` nn.Conv1d(1, 16, 8, stride=4,
  bias=False) and F.relu inline), `separator` (`TemporalConvNet`), `decoder` (`Decoder`).
- gLN is nn.GroupNorm(1, C, eps=1e-8): one group = statistics over channels and time, per-channel
  affine weight / bias ([C]).
- `TemporalConvNet` registers `layer_norm`, `bottleneck_conv1x1`, `repeats` (a ModuleList of R
  ModuleLists of X `TemporalBlock`s), `mask_prelu`, `mask_conv1x1`, `mask_act` (nn.Sigmoid).
- `TemporalBlock` registers `conv1x1`, `prelu`, `norm`, `dsconv` (a `DepthwiseConv` module:
  `depthwise_conv`, `prelu`, `norm`), then ONE fused `res_skip_conv` nn.Conv1d(16, 16, 1): output
  channels 0:8 are the residual, 8:16 the skip, split with torch.chunk. It returns
  (x + residual, skip): the residual add is inside the block.
- `Decoder` takes (mixture_w, est_mask): does the masking itself, then `basis_signals`
  nn.Linear(16, 8, bias=False) on [M, 2, K, 16] frames and an overlap-add with F.fold.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_res_skip_swapped -> TemporalBlock reads the fused conv's output as (skip, residual)
                            instead of (residual, skip)
  torch_mask_softmax     -> the separator's mask nonlinearity is built as nn.Softmax(dim=1)
                            (over the sources) instead of nn.Sigmoid
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

N, L, B, H, P, X, R, C = 16, 8, 8, 16, 3, 2, 2, 2
GLN_EPS = 1e-8
BATCH, SAMPLES = 2, 128
OWN_BUGS = {"torch_res_skip_swapped", "torch_mask_softmax"}
OTHER_BUGS = {"paddle_gln_unbiased_var", "paddle_dilation_by_repeat"}


def global_layer_norm(channels):
    return nn.GroupNorm(1, channels, eps=GLN_EPS)


class Encoder(nn.Module):
    def __init__(self, L, N):
        super().__init__()
        self.conv1d_U = nn.Conv1d(1, N, kernel_size=L, stride=L // 2, bias=False)

    def forward(self, mixture):
        return F.relu(self.conv1d_U(mixture.unsqueeze(1)))  # [M, N, K]


class DepthwiseConv(nn.Module):
    def __init__(self, channels, kernel_size, dilation):
        super().__init__()
        self.depthwise_conv = nn.Conv1d(channels, channels, kernel_size, stride=1,
                                        padding=(kernel_size - 1) * dilation // 2, dilation=dilation,
                                        groups=channels, bias=True)
        self.prelu = nn.PReLU()
        self.norm = global_layer_norm(channels)

    def forward(self, x):
        return self.norm(self.prelu(self.depthwise_conv(x)))


class TemporalBlock(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, dilation, swap=False):
        super().__init__()
        self.swap = swap
        self.conv1x1 = nn.Conv1d(in_channels, out_channels, 1)
        self.prelu = nn.PReLU()
        self.norm = global_layer_norm(out_channels)
        self.dsconv = DepthwiseConv(out_channels, kernel_size, dilation)
        self.res_skip_conv = nn.Conv1d(out_channels, 2 * in_channels, 1)

    def forward(self, x):
        y = self.dsconv(self.norm(self.prelu(self.conv1x1(x))))
        if self.swap:
            skip, residual = torch.chunk(self.res_skip_conv(y), 2, dim=1)
        else:
            residual, skip = torch.chunk(self.res_skip_conv(y), 2, dim=1)
        return x + residual, skip


class TemporalConvNet(nn.Module):
    def __init__(self, swap=False, softmax=False):
        super().__init__()
        self.layer_norm = global_layer_norm(N)
        self.bottleneck_conv1x1 = nn.Conv1d(N, B, 1)
        self.repeats = nn.ModuleList(
            [nn.ModuleList([TemporalBlock(B, H, P, 2**x, swap) for x in range(X)]) for _ in range(R)]
        )
        self.mask_prelu = nn.PReLU()
        self.mask_conv1x1 = nn.Conv1d(B, C * N, 1)
        self.mask_act = nn.Softmax(dim=1) if softmax else nn.Sigmoid()

    def forward(self, mixture_w):
        M, _, K = mixture_w.size()
        out = self.bottleneck_conv1x1(self.layer_norm(mixture_w))
        skip_sum = 0.0
        for repeat in self.repeats:
            for block in repeat:
                out, skip = block(out)
                skip_sum = skip_sum + skip
        score = self.mask_conv1x1(self.mask_prelu(skip_sum))
        score = score.view(M, C, N, K)
        return self.mask_act(score)  # [M, C, N, K]


class Decoder(nn.Module):
    def __init__(self, N, L):
        super().__init__()
        self.L = L
        self.basis_signals = nn.Linear(N, L, bias=False)

    def forward(self, mixture_w, est_mask):
        source_w = torch.unsqueeze(mixture_w, 1) * est_mask  # [M, C, N, K]
        source_w = torch.transpose(source_w, 2, 3)  # [M, C, K, N]
        frames = self.basis_signals(source_w)  # [M, C, K, L]
        M, nsrc, K, _ = frames.shape
        hop = self.L // 2
        n_samples = (K - 1) * hop + self.L
        cols = frames.reshape(M * nsrc, K, self.L).transpose(1, 2)  # [M * C, L, K]
        signal = F.fold(cols, output_size=(1, n_samples), kernel_size=(1, self.L), stride=(1, hop))
        return signal.view(M, nsrc, n_samples)


class ConvTasNet(nn.Module):
    def __init__(self, swap=False, softmax=False):
        super().__init__()
        self.encoder = Encoder(L, N)
        self.separator = TemporalConvNet(swap, softmax)
        self.decoder = Decoder(N, L)

    def forward(self, mixture):
        mixture_w = self.encoder(mixture)
        est_mask = self.separator(mixture_w)
        return self.decoder(mixture_w, est_mask)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_convtasnet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = ConvTasNet(swap=bug == "torch_res_skip_swapped", softmax=bug == "torch_mask_softmax")
    return m.eval()


def _mixture():
    rng = np.random.default_rng(29)
    t = np.arange(SAMPLES) / 8000.0
    rows = []
    for _ in range(BATCH):
        f1, f2 = rng.uniform(300, 900), rng.uniform(1200, 2500)
        s1 = 0.25 * np.sin(2 * np.pi * f1 * t + rng.uniform(0, 6.28))
        s2 = 0.15 * np.sin(2 * np.pi * f2 * t + rng.uniform(0, 6.28))
        rows.append(s1 + s2 + 0.03 * rng.standard_normal(SAMPLES))
    return np.stack(rows).astype("float32")


def inputs():
    return (torch.from_numpy(_mixture()),), {}


def loss(output):
    # separated sources [2, 2, 128]
    return (output**2).mean()

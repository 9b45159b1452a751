"""Hand-written port, torch side: a tiny ConvMixer (written by "person B").

The same math as port_convmixer_paddle.py, re-implemented by hand: image [2, 3, 32, 32]
(positional); patch conv 4x4 / stride 4 (3 -> 16) -> GELU -> BN; 3 mixer layers
(x = x + BN(GELU(depthwise 5x5 (x))); x = BN(GELU(pointwise 1x1 (x)))); global mean over H, W;
Linear(16, 10): logits [2, 10]. Exact GELU, BN eps 1e-5 (torch's default; momentum 0.1 is
torch's convention and unused in eval).

Torch idioms on this side:
- root `ConvMixerNet`: `patch_embed` nn.Conv2d and `embed_norm` nn.BatchNorm2d with the GELU
  inline between them (no stem module); `layers` (ModuleList, iterated); the global pool is an
  inline x.mean((2, 3)) (no pool / flatten modules); `classifier` nn.Linear.
- `MixerLayer` registers `depthwise`, `pointwise`, `norm1`, `norm2` (convs first) and does the
  residual add INLINE (no wrapper module); GELU is functional (F.gelu), never a module.
- `PerChannelConv2d`: the depthwise conv written out per channel without `groups`: its own
  parameters `weight` [16, 5, 5] (one 5x5 filter per channel) and `bias` [16]; zero-pad by 2,
  then sum the 25 shifted copies of the input, each scaled per channel by weight[:, i, j]
  (cross-correlation, like conv2d).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_dw_kernel_transposed  -> PerChannelConv2d reads weight[:, j, i] for the shift (row i,
                                 column j): every 5x5 filter is applied transposed
  torch_residual_norm_outside -> MixerLayer puts norm1 outside the residual:
                                 x = norm1(x + gelu(depthwise(x))) instead of
                                 x = x + norm1(gelu(depthwise(x)))
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IMAGE_SIZE, PATCH_SIZE, CHANNELS = 32, 4, 3
HIDDEN, N_LAYERS, KERNEL_SIZE, N_CLASSES = 16, 3, 5, 10
BATCH = 2
OWN_BUGS = {"torch_dw_kernel_transposed", "torch_residual_norm_outside"}
OTHER_BUGS = {"paddle_bn_eps_keras", "paddle_pw_bn_before_act"}


class PerChannelConv2d(nn.Module):
    def __init__(self, channels, kernel_size, transposed_taps=False):
        super().__init__()
        self.k = kernel_size
        self.transposed_taps = transposed_taps
        self.weight = nn.Parameter(torch.randn(channels, kernel_size, kernel_size) / kernel_size)
        self.bias = nn.Parameter(torch.zeros(channels))

    def forward(self, x):
        _, c, h, w = x.shape
        pad = self.k // 2
        xp = F.pad(x, [pad, pad, pad, pad])
        out = self.bias.view(1, c, 1, 1).expand_as(x)
        for i in range(self.k):
            for j in range(self.k):
                tap = self.weight[:, j, i] if self.transposed_taps else self.weight[:, i, j]
                out = out + tap.view(1, c, 1, 1) * xp[:, :, i:i + h, j:j + w]
        return out


class MixerLayer(nn.Module):
    def __init__(self, dim, kernel_size, transposed_taps=False, norm_outside=False):
        super().__init__()
        self.norm_outside = norm_outside
        self.depthwise = PerChannelConv2d(dim, kernel_size, transposed_taps)
        self.pointwise = nn.Conv2d(dim, dim, kernel_size=1)
        self.norm1 = nn.BatchNorm2d(dim)
        self.norm2 = nn.BatchNorm2d(dim)

    def forward(self, x):
        if self.norm_outside:
            x = self.norm1(x + F.gelu(self.depthwise(x)))
        else:
            x = x + self.norm1(F.gelu(self.depthwise(x)))
        return self.norm2(F.gelu(self.pointwise(x)))


class ConvMixerNet(nn.Module):
    def __init__(self, transposed_taps=False, norm_outside=False):
        super().__init__()
        self.patch_embed = nn.Conv2d(CHANNELS, HIDDEN, kernel_size=PATCH_SIZE, stride=PATCH_SIZE)
        self.embed_norm = nn.BatchNorm2d(HIDDEN)
        self.layers = nn.ModuleList(
            [MixerLayer(HIDDEN, KERNEL_SIZE, transposed_taps, norm_outside) for _ in range(N_LAYERS)])
        self.classifier = nn.Linear(HIDDEN, N_CLASSES)

    def forward(self, img):
        x = self.embed_norm(F.gelu(self.patch_embed(img)))
        for layer in self.layers:
            x = layer(x)
        return self.classifier(x.mean(dim=(2, 3)))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_convmixer torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = ConvMixerNet(transposed_taps=bug == "torch_dw_kernel_transposed",
                     norm_outside=bug == "torch_residual_norm_outside")
    return m.eval()


def _image():
    rng = np.random.default_rng(41)
    return rng.standard_normal((BATCH, CHANNELS, IMAGE_SIZE, IMAGE_SIZE)).astype("float32")


def inputs():
    return (torch.from_numpy(_image()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()

"""Hand-written port, torch side: a tiny FasterNet-style CNN classifier (written by "person B").

The same math as port_fasternet_paddle.py, re-implemented by hand in a timm-like style: input
`images` [2, 3, 32, 32] (positional), a 4x4 / 4 patch stem (3 -> 16) + BN, stage 0 (1 block,
dim 16), a 2x2 / 2 downsample (16 -> 32) + BN, stage 1 (2 blocks, dim 32), then global average
pool -> 1x1 projection (32 -> 64, no bias) -> ReLU -> Linear(64, 10): logits [2, 10].
Block: partial 3x3 conv on the first dim/4 channels, then 1x1 (x2) -> BN -> GELU -> 1x1, plus
the block input as residual. BatchNorm eps 1e-5, eval mode.

Torch idioms on this side:
- root `FasterNetTiny`: `stem` = nn.Sequential(Conv2d(3, 16, 4, 4, bias=False),
  BatchNorm2d(16)), `layers` = nn.ModuleList of `FasterStage`, `head` = `ClassifierHead`.
- `FasterStage` owns its downsample: `downsample` = nn.Sequential(Conv2d(16, 32, 2, 2,
  bias=False), BatchNorm2d(32)) for stage 1, and no module at all for stage 0; `blocks` =
  nn.ModuleList, iterated (never called).
- `FasterNetBlock` registers `fc1` (1x1 Conv2d), `norm_act` (`BatchNormAct`: child `bn`
  BatchNorm2d, the GELU is F.gelu inline), `fc2` (1x1 Conv2d), then `pconv` (the 3x3 Conv2d on
  dim/4 channels) LAST. The partial conv is INLINE in the block forward, in FasterNet's
  "slicing" form, into a copy: y = x.clone(); y[:, :dim/4] = pconv(x[:, :dim/4]).
- `ClassifierHead`: the pooling is x.mean((2, 3)) inline; `pre_logits` is an nn.Linear(32, 64,
  bias=False) on the pooled vector (paddle: a 1x1 Conv2D on the pooled map), `act` nn.ReLU,
  `fc` nn.Linear(64, 10).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_shortcut_after_pconv -> the block takes its residual shortcut AFTER the partial conv
                                (out = pconv(x) + mlp(pconv(x)) instead of x + mlp(pconv(x)))
  torch_gelu_tanh            -> BatchNormAct uses F.gelu(..., approximate="tanh") instead of the
                                exact erf GELU (precision-level)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IN_CHANS, EMBED_DIM, N_DIV, MLP_RATIO, NUM_CLASSES, FEATURE_DIM = 3, 16, 4, 2, 10, 64
DEPTHS = (1, 2)
BATCH, IMG_SIZE = 2, 32
OWN_BUGS = {"torch_shortcut_after_pconv", "torch_gelu_tanh"}
OTHER_BUGS = {"paddle_pconv_concat_order", "paddle_merge_bn_eps"}


class BatchNormAct(nn.Module):
    def __init__(self, channels, gelu_approx="none"):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)
        self.gelu_approx = gelu_approx

    def forward(self, x):
        return F.gelu(self.bn(x), approximate=self.gelu_approx)


class FasterNetBlock(nn.Module):
    def __init__(self, dim, shortcut_after_pconv=False, gelu_approx="none"):
        super().__init__()
        self.dim_conv = dim // N_DIV
        self.shortcut_after_pconv = shortcut_after_pconv
        hidden = int(dim * MLP_RATIO)
        self.fc1 = nn.Conv2d(dim, hidden, 1, bias=False)
        self.norm_act = BatchNormAct(hidden, gelu_approx)
        self.fc2 = nn.Conv2d(hidden, dim, 1, bias=False)
        self.pconv = nn.Conv2d(self.dim_conv, self.dim_conv, 3, padding=1, bias=False)

    def forward(self, x):
        shortcut = x
        # write into a copy, so that neither the shortcut nor the tensor saved by pconv for
        # backward is modified in place
        y = x.clone()
        y[:, : self.dim_conv] = self.pconv(x[:, : self.dim_conv])
        if self.shortcut_after_pconv:
            shortcut = y
        y = self.fc2(self.norm_act(self.fc1(y)))
        return shortcut + y


class FasterStage(nn.Module):
    def __init__(self, in_dim, dim, depth, downsample, **block_kw):
        super().__init__()
        if downsample:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_dim, dim, kernel_size=2, stride=2, bias=False),
                nn.BatchNorm2d(dim),
            )
        else:
            self.downsample = None
        self.blocks = nn.ModuleList([FasterNetBlock(dim, **block_kw) for _ in range(depth)])

    def forward(self, x):
        if self.downsample is not None:
            x = self.downsample(x)
        for blk in self.blocks:
            x = blk(x)
        return x


class ClassifierHead(nn.Module):
    def __init__(self, in_features, feature_dim, num_classes):
        super().__init__()
        self.pre_logits = nn.Linear(in_features, feature_dim, bias=False)
        self.act = nn.ReLU()
        self.fc = nn.Linear(feature_dim, num_classes)

    def forward(self, x):
        x = x.mean((2, 3))
        return self.fc(self.act(self.pre_logits(x)))


class FasterNetTiny(nn.Module):
    def __init__(self, **block_kw):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(IN_CHANS, EMBED_DIM, kernel_size=4, stride=4, bias=False),
            nn.BatchNorm2d(EMBED_DIM),
        )
        layers, prev = [], EMBED_DIM
        for i, depth in enumerate(DEPTHS):
            dim = EMBED_DIM * 2**i
            layers.append(FasterStage(prev, dim, depth, downsample=i > 0, **block_kw))
            prev = dim
        self.layers = nn.ModuleList(layers)
        self.head = ClassifierHead(prev, FEATURE_DIM, NUM_CLASSES)

    def forward(self, images):
        x = self.stem(images)
        for stage in self.layers:
            x = stage(x)
        return self.head(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_fasternet torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = FasterNetTiny(
        shortcut_after_pconv=bug == "torch_shortcut_after_pconv",
        gelu_approx="tanh" if bug == "torch_gelu_tanh" else "none",
    )
    return m.eval()


def _images():
    rng = np.random.default_rng(31)
    return rng.standard_normal((BATCH, IN_CHANS, IMG_SIZE, IMG_SIZE)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()

"""Hand-written port, torch side: a tiny PoolFormer image classifier (written by "person B").

The same function as port_poolformer_paddle.py, re-implemented by hand: input `images`
[2, 3, 32, 32] (positional), stem conv 3 -> 16 (k7 s4 p2), stage 1 (2 blocks, 16 channels, 8x8),
stage 2 (conv 16 -> 32 k3 s2 p1, then 2 blocks, 32 channels, 4x4), final norm, global average
pool, `head` Linear(32, 10): logits [2, 10].

Torch idioms on this side:
- root `PoolFormerNet`: `stem` nn.Conv2d, `stages` = ModuleList of two `PoolFormerStage`, `norm`
  (`GroupNorm1`), `pool` nn.AdaptiveAvgPool2d(1) + flatten, `head` nn.Linear.
- `PoolFormerStage` owns its `downsample` (nn.Identity in stage 1, nn.Conv2d(16, 32, 3, 2, 1) in
  stage 2) and its `blocks` (nn.Sequential).
- `GroupNorm1`: hand-written "GroupNorm with one group" = normalise each sample over (C, H, W)
  with the biased variance (x.var(unbiased=False)), eps 1e-5, then `weight` / `bias` [C]
  broadcast as [C, 1, 1].
- `PoolFormerBlock` registers `norm1`, `mixer` (`PoolMixer`: F.avg_pool2d(x, 3, 1, 1,
  count_include_pad=False) - x, inline), `ls1`, `norm2`, `mlp`, `ls2`. The channel MLP works
  CHANNELS-LAST: the block permutes norm2's output to [B, H, W, C], `mlp` = `Mlp` (`fc1`
  nn.Linear(C, 4C), `act` nn.GELU(), `fc2` nn.Linear(4C, C)), `ls2` scales the last axis, and the
  block permutes back to NCHW before the residual add.
- `LayerScale` modules hold `gamma` [C]; `ls1` (channels-first) views it as [C, 1, 1], `ls2`
  (channels-last) broadcasts it over the last axis.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_var_unbiased -> GroupNorm1 uses x.var(dim=(1, 2, 3), keepdim=True), torch's default
                        UNBIASED variance (divides by C*H*W - 1), in every norm (precision-level:
                        a factor 1024/1023 or 512/511 on the variance)
  torch_mlp_reshape  -> the block returns the channels-last MLP branch to NCHW with
                        .reshape(B, C, H, W) instead of .permute(0, 3, 1, 2), scrambling
                        channels and positions
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

IN_CHANS, EMBED_DIMS, LAYERS, MLP_RATIO, NUM_CLASSES = 3, (16, 32), (2, 2), 4, 10
EPS = 1e-5
BATCH, IMG = 2, 32
OWN_BUGS = {"torch_var_unbiased", "torch_mlp_reshape"}
OTHER_BUGS = {"paddle_pool_include_pad", "paddle_gelu_tanh"}


class GroupNorm1(nn.Module):
    def __init__(self, num_channels, eps=EPS, unbiased=False):
        super().__init__()
        self.eps, self.unbiased = eps, unbiased
        self.weight = nn.Parameter(torch.ones(num_channels))
        self.bias = nn.Parameter(torch.zeros(num_channels))

    def forward(self, x):
        mean = x.mean(dim=(1, 2, 3), keepdim=True)
        if self.unbiased:
            var = x.var(dim=(1, 2, 3), keepdim=True)
        else:
            var = x.var(dim=(1, 2, 3), keepdim=True, unbiased=False)
        x = (x - mean) / torch.sqrt(var + self.eps)
        return x * self.weight[:, None, None] + self.bias[:, None, None]


class PoolMixer(nn.Module):
    def __init__(self, pool_size=3):
        super().__init__()
        self.pool_size = pool_size

    def forward(self, x):
        y = F.avg_pool2d(x, self.pool_size, stride=1, padding=self.pool_size // 2, count_include_pad=False)
        return y - x


class LayerScale(nn.Module):
    def __init__(self, dim, init_values=1e-5, channels_last=False):
        super().__init__()
        self.channels_last = channels_last
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x):
        if self.channels_last:
            return x * self.gamma
        return x * self.gamma.view(1, -1, 1, 1)


class Mlp(nn.Module):
    def __init__(self, in_features, hidden_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden_features, in_features)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class PoolFormerBlock(nn.Module):
    def __init__(self, dim, unbiased=False, mlp_reshape=False):
        super().__init__()
        self.mlp_reshape = mlp_reshape
        self.norm1 = GroupNorm1(dim, unbiased=unbiased)
        self.mixer = PoolMixer(3)
        self.ls1 = LayerScale(dim)
        self.norm2 = GroupNorm1(dim, unbiased=unbiased)
        self.mlp = Mlp(dim, dim * MLP_RATIO)
        self.ls2 = LayerScale(dim, channels_last=True)

    def forward(self, x):
        x = x + self.ls1(self.mixer(self.norm1(x)))
        y = self.norm2(x).permute(0, 2, 3, 1)  # [B, H, W, C]
        y = self.ls2(self.mlp(y))
        if self.mlp_reshape:
            y = y.reshape(x.shape)
        else:
            y = y.permute(0, 3, 1, 2)
        return x + y


class PoolFormerStage(nn.Module):
    def __init__(self, in_dim, dim, depth, downsample, unbiased=False, mlp_reshape=False):
        super().__init__()
        self.downsample = nn.Conv2d(in_dim, dim, 3, stride=2, padding=1) if downsample else nn.Identity()
        self.blocks = nn.Sequential(*[PoolFormerBlock(dim, unbiased, mlp_reshape) for _ in range(depth)])

    def forward(self, x):
        return self.blocks(self.downsample(x))


class PoolFormerNet(nn.Module):
    def __init__(self, unbiased=False, mlp_reshape=False):
        super().__init__()
        self.stem = nn.Conv2d(IN_CHANS, EMBED_DIMS[0], kernel_size=7, stride=4, padding=2)
        stages, prev = [], EMBED_DIMS[0]
        for i, (dim, depth) in enumerate(zip(EMBED_DIMS, LAYERS)):
            stages.append(PoolFormerStage(prev, dim, depth, downsample=i > 0, unbiased=unbiased,
                                          mlp_reshape=mlp_reshape))
            prev = dim
        self.stages = nn.ModuleList(stages)
        self.norm = GroupNorm1(EMBED_DIMS[-1], unbiased=unbiased)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(EMBED_DIMS[-1], NUM_CLASSES)

    def forward(self, images):
        x = self.stem(images)
        for stage in self.stages:
            x = stage(x)
        x = self.pool(self.norm(x)).flatten(1)
        return self.head(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_poolformer torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = PoolFormerNet(unbiased=bug == "torch_var_unbiased", mlp_reshape=bug == "torch_mlp_reshape")
    return m.eval()


def _images():
    rng = np.random.default_rng(23)
    return rng.standard_normal((BATCH, IN_CHANS, IMG, IMG)).astype("float32")


def inputs():
    return (torch.from_numpy(_images()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()

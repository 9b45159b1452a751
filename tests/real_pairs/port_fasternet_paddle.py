"""Hand-written port, paddle side: a tiny FasterNet-style CNN classifier (written by "person A").

Input: positional `images` [2, 3, 32, 32] (NCHW, numpy rng seed 31, standard normal). Output:
logits [2, 10].

Architecture (FasterNet, Chen et al. 2023, shrunk):
  patch embed   Conv 4x4 stride 4 (3 -> 16, no bias) -> BN             -> [2, 16, 8, 8]
  stage 0       1 FasterNet block, dim 16
  merge         Conv 2x2 stride 2 (16 -> 32, no bias) -> BN             -> [2, 32, 4, 4]
  stage 1       2 FasterNet blocks, dim 32
  head          global average pool -> 1x1 conv (32 -> 64, no bias) -> ReLU -> flatten
                -> Linear(64, 10)
FasterNet block (n_div 4, mlp ratio 2):
  y = PConv(x): a 3x3 conv (no bias) on the FIRST dim/4 channels only, the other 3/4 passed
      through untouched;
  out = x + Conv1x1(dim -> 2 dim, no bias) -> BN -> GELU (exact, erf) -> Conv1x1(2 dim -> dim,
        no bias) applied to y.
BatchNorm eps 1e-5 everywhere, eval mode (running statistics).

Paddle idioms on this side:
- root `FasterNetP`: `patch_embed` (PatchEmbed: `proj` Conv2D, `norm` BatchNorm2D), `stages`
  = LayerList of nn.Sequential of `FasterBlock`, `merges` = LayerList of `PatchMerging`
  (`reduction` Conv2D, `norm` BatchNorm2D), `avgpool` nn.AdaptiveAvgPool2D(1), `head_conv`
  Conv2D(32, 64, 1) and `classifier` nn.Linear(64, 10) (weight [in, out]). The head ReLU is
  F.relu inline. The forward runs merges[i - 1] before stages[i].
- `FasterBlock` registers `mlp` FIRST, an nn.Sequential [Conv2D, BatchNorm2D, nn.GELU,
  Conv2D] (so the activation is its own module `mlp.2`), then `spatial_mixing` (PartialConv).
- `PartialConv` (`partial_conv3` Conv2D) uses the "split_cat" form: paddle.split into
  [dim/4, 3 dim/4], conv on the first part, paddle.concat back.
- model() gives every BatchNorm trained-looking affine weights and running statistics (seeded).

The torch side (port_fasternet_torch.py) was written independently (timm-like): an nn.Sequential
stem, a ModuleList of stages that each own their downsample, the partial conv done INLINE in the
block by clone + in-place slice assignment, the BN + GELU as one module, and the head's 1x1 conv
as an nn.Linear on the pooled vector.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_pconv_concat_order -> PartialConv concatenates [untouched, convolved] instead of
                               [convolved, untouched]: the convolved channels land at the end
  paddle_merge_bn_eps       -> PatchMerging's BatchNorm is built with epsilon=1e-3 (a value
                               copied from a TF config) instead of 1e-5 (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_CH, EMBED, N_DIV, MLP_RATIO, NUM_CLASSES, HEAD_DIM = 3, 16, 4, 2, 10, 64
DEPTHS = (1, 2)
BATCH, IMG = 2, 32
OWN_BUGS = {"paddle_pconv_concat_order", "paddle_merge_bn_eps"}
OTHER_BUGS = {"torch_shortcut_after_pconv", "torch_gelu_tanh"}


class PartialConv(nn.Layer):
    def __init__(self, dim, n_div, concat_swapped=False):
        super().__init__()
        self.dim_conv3 = dim // n_div
        self.dim_untouched = dim - self.dim_conv3
        self.concat_swapped = concat_swapped
        self.partial_conv3 = nn.Conv2D(self.dim_conv3, self.dim_conv3, 3, 1, 1, bias_attr=False)

    def forward(self, x):
        x1, x2 = paddle.split(x, [self.dim_conv3, self.dim_untouched], axis=1)
        x1 = self.partial_conv3(x1)
        if self.concat_swapped:
            return paddle.concat([x2, x1], axis=1)
        return paddle.concat([x1, x2], axis=1)


class FasterBlock(nn.Layer):
    def __init__(self, dim, concat_swapped=False):
        super().__init__()
        hidden = dim * MLP_RATIO
        self.mlp = nn.Sequential(
            nn.Conv2D(dim, hidden, 1, bias_attr=False),
            nn.BatchNorm2D(hidden),
            nn.GELU(),
            nn.Conv2D(hidden, dim, 1, bias_attr=False),
        )
        self.spatial_mixing = PartialConv(dim, N_DIV, concat_swapped)

    def forward(self, x):
        shortcut = x
        x = self.spatial_mixing(x)
        return shortcut + self.mlp(x)


class PatchEmbed(nn.Layer):
    def __init__(self, patch, in_ch, dim):
        super().__init__()
        self.proj = nn.Conv2D(in_ch, dim, patch, stride=patch, bias_attr=False)
        self.norm = nn.BatchNorm2D(dim)

    def forward(self, x):
        return self.norm(self.proj(x))


class PatchMerging(nn.Layer):
    def __init__(self, dim, bn_eps=1e-5):
        super().__init__()
        self.reduction = nn.Conv2D(dim, 2 * dim, 2, stride=2, bias_attr=False)
        self.norm = nn.BatchNorm2D(2 * dim, epsilon=bn_eps)

    def forward(self, x):
        return self.norm(self.reduction(x))


class FasterNetP(nn.Layer):
    def __init__(self, concat_swapped=False, merge_eps=1e-5):
        super().__init__()
        self.patch_embed = PatchEmbed(4, IN_CH, EMBED)
        dims = [EMBED * 2**i for i in range(len(DEPTHS))]
        self.stages = nn.LayerList(
            [nn.Sequential(*[FasterBlock(d, concat_swapped) for _ in range(n)]) for d, n in zip(dims, DEPTHS)]
        )
        self.merges = nn.LayerList([PatchMerging(d, merge_eps) for d in dims[:-1]])
        self.avgpool = nn.AdaptiveAvgPool2D(1)
        self.head_conv = nn.Conv2D(dims[-1], HEAD_DIM, 1, bias_attr=False)
        self.classifier = nn.Linear(HEAD_DIM, NUM_CLASSES)

    def forward(self, images):
        x = self.patch_embed(images)
        for i, stage in enumerate(self.stages):
            if i > 0:
                x = self.merges[i - 1](x)
            x = stage(x)
        x = F.relu(self.head_conv(self.avgpool(x)))
        return self.classifier(paddle.flatten(x, 1))


def _trained_look(m):
    rng = np.random.default_rng(47)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))
    m.classifier.bias.set_value(rng.normal(0.0, 0.1, NUM_CLASSES).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_fasternet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = FasterNetP(
        concat_swapped=bug == "paddle_pconv_concat_order",
        merge_eps=1e-3 if bug == "paddle_merge_bn_eps" else 1e-5,
    )
    _trained_look(m)
    m.eval()
    return m


def _images():
    rng = np.random.default_rng(31)
    return rng.standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()

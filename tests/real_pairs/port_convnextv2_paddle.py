"""Hand-written port, paddle side: a tiny ConvNeXt-V2 image classifier (written by "person A").

Input: one image batch [2, 3, 32, 32] (positional, NCHW, numpy rng seed 31, standard normal).
Output: logits [2, 10].

Architecture (ConvNeXt-V2, Woo et al. 2023), dims (16, 32), depths (2, 2):
  stem        4x4 stride-4 patchify conv (3 -> 16, bias) -> LayerNorm over channels (eps 1e-6)
  stage 1     2 blocks of width 16 on the 8x8 map
  transition  LayerNorm over channels (eps 1e-6) -> 2x2 stride-2 conv (16 -> 32, bias)
  stage 2     2 blocks of width 32 on the 4x4 map
  head        global average pool -> LayerNorm (eps 1e-6) -> Linear(32, 10)
One block (width C): depthwise 7x7 conv (padding 3, bias) -> LayerNorm over channels (eps 1e-6)
-> pointwise C -> 4C (bias) -> GELU (erf) -> GRN -> pointwise 4C -> C (bias) -> + input.
GRN (global response normalisation), per sample and channel c:
  G_c = ||x_c||_2 over the spatial positions, N_c = G_c / (mean over channels of G + 1e-6),
  y = gamma_c * (x * N_c) + beta_c + x.

Person A keeps EVERYTHING channels-first (NCHW):
- root `ConvNeXtV2Tiny`: `patch_embed` nn.Sequential(Conv2D(3, 16, 4, 4), ChannelsFirstLayerNorm),
  `stage1` nn.Sequential of 2 `CNXBlock`, `transition` (`TransitionDown`: `norm`, then `reduce`
  Conv2D(16, 32, 2, 2)), `stage2` nn.Sequential of 2 `CNXBlock`, `gap` nn.AdaptiveAvgPool2D(1),
  `head_norm` nn.LayerNorm(32, epsilon=1e-6), `classifier` nn.Linear(32, 10) ([in, out]).
- `ChannelsFirstLayerNorm`: hand-written (create_parameter `weight` / `bias` [C]); mean and
  biased variance over axis 1 of the NCHW map.
- `CNXBlock` registers `dw` (Conv2D(C, C, 7, padding=3, groups=C)), `norm`
  (ChannelsFirstLayerNorm), `expand` (1x1 Conv2D(C, 4C)), `project` (1x1 Conv2D(4C, C)) and then
  the GRN parameters `grn_gamma` / `grn_beta` as flat [4C] vectors (create_parameter). The GELU
  (F.gelu) and the whole GRN are inline code of the block's forward (no module).
- model() gives the norms, the GRN gamma / beta and the biases trained-looking values (seeded):
  no norm is an identity and GRN is not a no-op (its gamma / beta start at zero in the paper).

The torch side (port_convnextv2_torch.py) was written independently, in the layout of the
official ConvNeXt-V2 code: channels-last (NHWC) inside the blocks with nn.Linear pointwise
layers and nn.LayerNorm, a GRN module with [1, 1, 1, C] parameters, an nn.GELU module.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_ln_unbiased_var -> ChannelsFirstLayerNorm takes paddle.var(x, axis=1, keepdim=True),
                            whose default is the UNBIASED estimate (divides by C - 1), in every
                            channels-first norm (stem, blocks, transition)
  paddle_grn_batch_mean  -> the block's inline GRN divides G by its mean over the whole batch
                            and all channels (paddle.mean(G)) instead of per sample over channels
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_CH, DIMS, DEPTHS, NUM_CLASSES = 3, (16, 32), (2, 2), 10
LN_EPS, GRN_EPS = 1e-6, 1e-6
BATCH, IMG = 2, 32
OWN_BUGS = {"paddle_ln_unbiased_var", "paddle_grn_batch_mean"}
OTHER_BUGS = {"torch_gelu_tanh", "torch_stem_permute_hw"}


class ChannelsFirstLayerNorm(nn.Layer):
    def __init__(self, channels, epsilon=LN_EPS, unbiased_bug=False):
        super().__init__()
        self.epsilon = epsilon
        self.unbiased_bug = unbiased_bug
        self.weight = self.create_parameter([channels], default_initializer=nn.initializer.Constant(1.0))
        self.bias = self.create_parameter([channels], is_bias=True)

    def forward(self, x):
        mu = paddle.mean(x, axis=1, keepdim=True)
        if self.unbiased_bug:
            var = paddle.var(x, axis=1, keepdim=True)
        else:
            var = paddle.mean(paddle.square(x - mu), axis=1, keepdim=True)
        x = (x - mu) / paddle.sqrt(var + self.epsilon)
        return x * self.weight.reshape([1, -1, 1, 1]) + self.bias.reshape([1, -1, 1, 1])


class CNXBlock(nn.Layer):
    def __init__(self, dim, unbiased_bug=False, batch_mean_bug=False):
        super().__init__()
        self.batch_mean_bug = batch_mean_bug
        hidden = 4 * dim
        self.dw = nn.Conv2D(dim, dim, 7, padding=3, groups=dim)
        self.norm = ChannelsFirstLayerNorm(dim, unbiased_bug=unbiased_bug)
        self.expand = nn.Conv2D(dim, hidden, 1)
        self.project = nn.Conv2D(hidden, dim, 1)
        self.grn_gamma = self.create_parameter([hidden], default_initializer=nn.initializer.Constant(0.0))
        self.grn_beta = self.create_parameter([hidden], is_bias=True)

    def forward(self, x):
        shortcut = x
        h = self.expand(self.norm(self.dw(x)))
        h = F.gelu(h)
        # GRN on the NCHW map: L2 over H, W; normalise by the channel mean of that norm
        g = paddle.sqrt(paddle.sum(paddle.square(h), axis=[2, 3], keepdim=True))
        if self.batch_mean_bug:
            n = g / (paddle.mean(g) + GRN_EPS)
        else:
            n = g / (paddle.mean(g, axis=1, keepdim=True) + GRN_EPS)
        h = self.grn_gamma.reshape([1, -1, 1, 1]) * (h * n) + self.grn_beta.reshape([1, -1, 1, 1]) + h
        return shortcut + self.project(h)


class TransitionDown(nn.Layer):
    def __init__(self, cin, cout, unbiased_bug=False):
        super().__init__()
        self.norm = ChannelsFirstLayerNorm(cin, unbiased_bug=unbiased_bug)
        self.reduce = nn.Conv2D(cin, cout, 2, stride=2)

    def forward(self, x):
        return self.reduce(self.norm(x))


class ConvNeXtV2Tiny(nn.Layer):
    def __init__(self, unbiased_bug=False, batch_mean_bug=False):
        super().__init__()
        d0, d1 = DIMS
        self.patch_embed = nn.Sequential(
            nn.Conv2D(IN_CH, d0, 4, stride=4),
            ChannelsFirstLayerNorm(d0, unbiased_bug=unbiased_bug),
        )
        self.stage1 = nn.Sequential(*[CNXBlock(d0, unbiased_bug, batch_mean_bug) for _ in range(DEPTHS[0])])
        self.transition = TransitionDown(d0, d1, unbiased_bug)
        self.stage2 = nn.Sequential(*[CNXBlock(d1, unbiased_bug, batch_mean_bug) for _ in range(DEPTHS[1])])
        self.gap = nn.AdaptiveAvgPool2D(1)
        self.head_norm = nn.LayerNorm(d1, epsilon=LN_EPS)
        self.classifier = nn.Linear(d1, NUM_CLASSES)

    def forward(self, images):
        x = self.patch_embed(images)
        x = self.stage1(x)
        x = self.transition(x)
        x = self.stage2(x)
        x = paddle.flatten(self.gap(x), start_axis=1)
        return self.classifier(self.head_norm(x))


def _trained_look(m):
    rng = np.random.default_rng(37)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, (ChannelsFirstLayerNorm, nn.LayerNorm)):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
        elif isinstance(layer, nn.Conv2D) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))
        if isinstance(layer, CNXBlock):
            c = layer.grn_gamma.shape[0]
            layer.grn_gamma.set_value(rng.normal(0.0, 0.6, c).astype("float32"))
            layer.grn_beta.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
    m.classifier.bias.set_value(rng.normal(0.0, 0.1, NUM_CLASSES).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_convnextv2 paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = ConvNeXtV2Tiny(unbiased_bug=bug == "paddle_ln_unbiased_var", batch_mean_bug=bug == "paddle_grn_batch_mean")
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

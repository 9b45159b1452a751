"""Hand-written port, paddle side: a tiny ConvMixer ("Patches Are All You Need?") (written by "person A").

Input: one image batch [2, 3, 32, 32] (positional, NCHW, numpy rng seed 41, standard normal).
  stem:   conv 4x4 / stride 4 (3 -> 16) -> GELU -> BN          [B, 16, 8, 8]
  3 mixer blocks, each:
          x = x + BN(GELU(depthwise conv 5x5, "same" padding, bias)(x))     (residual)
          x = BN(GELU(pointwise conv 1x1 (x)))
  head:   global average pool -> flatten -> Linear(16, 10): logits [2, 10].
GELU is the exact (erf) one; every BN has eps 1e-5 (both frameworks' default) and is used in
eval mode with its running statistics.

Paddle idioms on this side (the paper's nn.Sequential code, with named entries):
- root `ConvMixer`: `stem` = nn.Sequential(("conv", Conv2D), ("act", nn.GELU), ("bn",
  BatchNorm2D)); `blocks` = nn.Sequential of 3 blocks (called ONCE, names "0" .. "2"); `pool`
  nn.AdaptiveAvgPool2D(1); `flatten` nn.Flatten; `head` nn.Linear.
- one block = nn.Sequential(("mix", Residual(nn.Sequential(("dw", Conv2D(16, 16, 5,
  groups=16, padding="same")), ("act", nn.GELU), ("bn", BatchNorm2D)))), ("pw", Conv2D 1x1),
  ("act", nn.GELU), ("bn", BatchNorm2D)).
- `Residual` is a wrapper module: fn(x) + x.
- Every activation is an nn.GELU MODULE; BatchNorm2D uses paddle's convention (momentum 0.9,
  epsilon 1e-5); the depthwise conv is a grouped Conv2D (weight [16, 1, 5, 5]).
- model() gives every BN trained-looking affine weights / running statistics and every conv bias
  trained-looking values (seeded), so that nothing is an identity.

The torch side (port_convmixer_torch.py) was written independently: a MixerLayer module with
an inline residual add, functional F.gelu, a hand-written per-channel depthwise conv (a sum of
shifted copies, no groups), no stem / pool modules.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_bn_eps_keras     -> the residual branch's BN (after the depthwise conv) is built with
                             epsilon=1e-3, the Keras ConvMixer example's default, instead of 1e-5
                             (every block)
  paddle_pw_bn_before_act -> the pointwise stage's Sequential is built (pw, bn, act): BN before
                             GELU, the ResNet habit, instead of (pw, act, bn) (every block)
"""
import os

import numpy as np
import paddle
from paddle import nn

IMG, PATCH, IN_CH = 32, 4, 3
DIM, DEPTH, KERNEL, NUM_CLASSES = 16, 3, 5, 10
BATCH = 2
OWN_BUGS = {"paddle_bn_eps_keras", "paddle_pw_bn_before_act"}
OTHER_BUGS = {"torch_dw_kernel_transposed", "torch_residual_norm_outside"}


class Residual(nn.Layer):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x) + x


def _mixer_block(dim, kernel, dw_eps=1e-5, bn_before_act=False):
    mix = Residual(nn.Sequential(
        ("dw", nn.Conv2D(dim, dim, kernel, groups=dim, padding="same", data_format="NCHW")),
        ("act", nn.GELU()),
        ("bn", nn.BatchNorm2D(dim, epsilon=dw_eps, data_format="NCHW")),
    ))
    pw = nn.Conv2D(dim, dim, 1, data_format="NCHW")
    if bn_before_act:
        return nn.Sequential(("mix", mix), ("pw", pw), ("bn", nn.BatchNorm2D(dim, data_format="NCHW")),
                             ("act", nn.GELU()))
    return nn.Sequential(("mix", mix), ("pw", pw), ("act", nn.GELU()),
                         ("bn", nn.BatchNorm2D(dim, data_format="NCHW")))


class ConvMixer(nn.Layer):
    def __init__(self, dw_eps=1e-5, bn_before_act=False):
        super().__init__()
        self.stem = nn.Sequential(
            ("conv", nn.Conv2D(IN_CH, DIM, PATCH, stride=PATCH, data_format="NCHW")),
            ("act", nn.GELU()),
            ("bn", nn.BatchNorm2D(DIM, data_format="NCHW")),
        )
        self.blocks = nn.Sequential(*[_mixer_block(DIM, KERNEL, dw_eps, bn_before_act) for _ in range(DEPTH)])
        self.pool = nn.AdaptiveAvgPool2D(1, data_format="NCHW")
        self.flatten = nn.Flatten()
        self.head = nn.Linear(DIM, NUM_CLASSES)

    def forward(self, img):
        x = self.stem(img)
        x = self.blocks(x)
        return self.head(self.flatten(self.pool(x)))


def _trained_look(m):
    rng = np.random.default_rng(43)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            layer.weight.set_value(rng.uniform(0.6, 1.4, DIM).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, DIM).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, DIM).astype("float32"))
            layer._variance.set_value(rng.uniform(0.3, 1.5, DIM).astype("float32"))
        elif isinstance(layer, (nn.Conv2D, nn.Linear)):
            layer.bias.set_value(rng.normal(0.0, 0.05, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_convmixer paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = ConvMixer(dw_eps=1e-3 if bug == "paddle_bn_eps_keras" else 1e-5,
                  bn_before_act=bug == "paddle_pw_bn_before_act")
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(41)
    return rng.standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()

"""Hand-written port, paddle side: a tiny normalizer-free ResNet, NFNet style (written by "person A", deepmind haiku style).

Input: one positional image batch [2, 3, 16, 16] (NCHW, numpy rng seed 73, standard normal).
Output: logits [2, 10].

No normalisation layers anywhere. Every conv is a scaled weight-standardised conv (WSConv):
  w_hat = gain * (w - mean(w)) / sqrt(var(w) + 1e-6) / sqrt(fan_in)
with mean / biased var over (in, kh, kw) per output channel, computed inside forward; the gain is a
learnable per-output-channel vector; the conv has a bias.
The activation is GELU (exact, erf) scaled by its gamma constant 1.7015043497085571.

  stem:   WSConv 3 -> 8 (3x3, stride 2, pad 1) -> act -> WSConv 8 -> 16 (3x3, pad 1)     [2, 16, 8, 8]
  blocks: 3 pre-activation residual blocks, alpha = 0.2, beta = expected std of the input:
            out = act(x) / beta
            shortcut = x, or WSConv 1x1 stride s on `out` at the transition block
            out = conv1(act(conv0(out)))          (3x3 convs, conv0 has the stride)
            y = shortcut + alpha * skip_gain * out (skip_gain: a learnable scalar, skip-init)
          expected variance: starts at 1, reset to 1 after the first block of each stage, then
          += alpha ** 2 after every block -> betas sqrt(1), sqrt(1.04), sqrt(1.08)
          stage 1: 16 -> 16, 2 blocks; stage 2: 16 -> 32, 1 block, stride 2    [2, 32, 4, 4]
  head:   act -> mean over H, W -> Linear(32, 10)

Paddle idioms on this side:
- root `NFResNet`: `stem` (a `StemBlock` layer: `conv_a`, `conv_b`, the activation inline between
  them), `blocks` = a FLAT LayerList of 3 `NFBlock`s, the final activation and the global average
  pooling inline (paddle.mean), then `fc` nn.Linear(32, 10).
- `WSConv2D`: a hand-written nn.Layer with create_parameter `weight` [out, in, 3, 3], `bias` [out]
  and `gain` [out] (in that order); the variance is the mean of squares of (w - mean).
  The standardisation is written deepmind style: scale = rsqrt(var + eps) * fan_in ** -0.5 * gain,
  w_hat = w * scale - mean * scale.
- `NFBlock` registers `conv0`, `conv1`, then `conv_shortcut` (transition block only), then the
  scalar `skip_gain` (0-d, shape [], create_parameter, as haiku's shape ()); it stores beta as
  the expected STD and divides by it.
- the activation is a module-level helper `gamma_gelu(x)` = F.gelu(x) * gamma, no layer.
- model() gives every gain, conv bias and skip gain trained-looking values (seeded).

The torch side (port_nfnet_torch.py) was written independently (timm style): an nn.Sequential
stem with GammaAct modules, nested nn.Sequential stages, ScaledStdConv2d (an nn.Conv2d subclass
with a [out, 1, 1, 1] gain and torch.var(unbiased=False)), a DownsampleConv module, a scalar
skipinit_gain, beta stored as 1 / expected std, and a ClassifierHead module.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_expected_var_alpha -> the expected-variance bookkeeping adds alpha instead of alpha ** 2
                               after each block (betas sqrt(1), sqrt(1.2), sqrt(1.4))
  paddle_gelu_tanh          -> gamma_gelu uses the tanh approximation of GELU (jax.nn.gelu's
                               default) instead of the exact erf GELU
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

ALPHA, WS_EPS = 0.2, 1e-6
GELU_GAMMA = 1.7015043497085571
STEM_CH, WIDTHS, DEPTHS, STRIDES, N_CLASSES = 8, (16, 32), (2, 1), (1, 2), 10
BATCH, IMG = 2, 16
OWN_BUGS = {"paddle_expected_var_alpha", "paddle_gelu_tanh"}
OTHER_BUGS = {"torch_ws_var_unbiased", "torch_skipinit_missing"}

_APPROX = {"tanh": False}


def gamma_gelu(x):
    return F.gelu(x, approximate=_APPROX["tanh"]) * GELU_GAMMA


class WSConv2D(nn.Layer):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0):
        super().__init__()
        self.stride, self.padding = stride, padding
        self.weight = self.create_parameter([out_channels, in_channels, kernel_size, kernel_size])
        self.bias = self.create_parameter([out_channels], is_bias=True)
        self.gain = self.create_parameter([out_channels], default_initializer=nn.initializer.Constant(1.0))
        self.fan_in = in_channels * kernel_size * kernel_size

    def standardized_weight(self):
        mean = paddle.mean(self.weight, axis=[1, 2, 3], keepdim=True)
        var = paddle.mean(paddle.square(self.weight - mean), axis=[1, 2, 3], keepdim=True)
        scale = paddle.rsqrt(var + WS_EPS) * (self.fan_in**-0.5) * self.gain.reshape([-1, 1, 1, 1])
        shift = mean * scale
        return self.weight * scale - shift

    def forward(self, x):
        return F.conv2d(x, self.standardized_weight(), self.bias, stride=self.stride, padding=self.padding)


class StemBlock(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv_a = WSConv2D(3, STEM_CH, 3, stride=2, padding=1)
        self.conv_b = WSConv2D(STEM_CH, WIDTHS[0], 3, stride=1, padding=1)

    def forward(self, x):
        return self.conv_b(gamma_gelu(self.conv_a(x)))


class NFBlock(nn.Layer):
    def __init__(self, in_ch, out_ch, stride, beta, alpha):
        super().__init__()
        self.beta, self.alpha = beta, alpha
        self.conv0 = WSConv2D(in_ch, out_ch, 3, stride=stride, padding=1)
        self.conv1 = WSConv2D(out_ch, out_ch, 3, stride=1, padding=1)
        self.use_projection = stride > 1 or in_ch != out_ch
        if self.use_projection:
            self.conv_shortcut = WSConv2D(in_ch, out_ch, 1, stride=stride, padding=0)
        self.skip_gain = self.create_parameter([], default_initializer=nn.initializer.Constant(0.0))

    def forward(self, x):
        out = gamma_gelu(x) / self.beta
        shortcut = self.conv_shortcut(out) if self.use_projection else x
        out = self.conv0(out)
        out = self.conv1(gamma_gelu(out))
        return shortcut + out * self.skip_gain * self.alpha


class NFResNet(nn.Layer):
    def __init__(self, var_adds_alpha=False):
        super().__init__()
        self.stem = StemBlock()
        blocks, in_ch, expected_var = [], WIDTHS[0], 1.0
        for width, depth, stride in zip(WIDTHS, DEPTHS, STRIDES):
            for i in range(depth):
                blocks.append(NFBlock(in_ch, width, stride if i == 0 else 1, expected_var**0.5, ALPHA))
                if i == 0:
                    expected_var = 1.0
                expected_var += ALPHA if var_adds_alpha else ALPHA**2
                in_ch = width
        self.blocks = nn.LayerList(blocks)
        self.fc = nn.Linear(WIDTHS[-1], N_CLASSES)

    def forward(self, x):
        h = self.stem(x)
        for block in self.blocks:
            h = block(h)
        pooled = paddle.mean(gamma_gelu(h), axis=[2, 3])
        return self.fc(pooled)


def _trained_look(m):
    rng = np.random.default_rng(731)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, WSConv2D):
            n = layer.gain.shape[0]
            layer.gain.set_value(rng.uniform(0.7, 1.3, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, n).astype("float32"))
        elif isinstance(layer, NFBlock):
            layer.skip_gain.set_value(np.array(rng.uniform(0.25, 0.6), dtype="float32"))
    m.fc.bias.set_value(rng.normal(0.0, 0.1, N_CLASSES).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_nfnet paddle: unknown PADIFF_BUG {bug!r}")
    _APPROX["tanh"] = bug == "paddle_gelu_tanh"
    paddle.seed(0)
    m = NFResNet(var_adds_alpha=bug == "paddle_expected_var_alpha")
    _trained_look(m)
    m.eval()
    return m


def _images():
    rng = np.random.default_rng(73)
    return rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()

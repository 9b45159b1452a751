"""Hand-written port, paddle side: a tiny EfficientNet-style CNN (written by "person A").

lukemelas/EfficientNet-PyTorch-style code, written by hand in paddle. Sizes: 32x32 RGB images,
batch 2, 10 classes, eval mode, fp32.
- `_conv_stem` Conv2D(3, 8, 3, stride 2, padding 1, no bias) -> 16x16, `_bn0`, swish.
- `_blocks` = LayerList of 3 `MBConvBlock`s (expand ratio 4, SE ratio 0.25 of the block input):
    0: 8 -> 8,   3x3 depthwise, stride 1, residual
    1: 8 -> 16,  3x3 depthwise, stride 2 (-> 8x8), no residual
    2: 16 -> 16, 5x5 depthwise, stride 1, residual
- `_conv_head` Conv2D(16, 64, 1, no bias), `_bn1`, swish, `_avg_pooling` AdaptiveAvgPool2D(1),
  `_dropout` Dropout(0.2) (identity in eval), `_fc` Linear(64, 10).

Paddle idioms on this side:
- every BatchNorm is paddle.nn.BatchNorm2D(momentum=0.9, epsilon=1e-3) (TF's BN convention:
  keep 0.9 of the running statistics; torch writes the same thing as momentum=0.1). The running
  statistics (`_mean` ~ N(0, 0.2), `_variance` ~ U(1, 3)) and the affine weights are set to
  random values in model() so that eval-mode BN is not an identity; the SE expand biases are
  random too (N(0, 1)), so that the SE gates are spread over the sigmoid.
- every conv uses EfficientNet's own initialiser, Normal(0, sqrt(2 / fan_out)) (`_conv`).
- swish is a `paddle.nn.Swish` module (`_swish`), one shared instance per block and one in the
  root, called several times.
- `MBConvBlock` registers `_expand_conv`, `_bn0`, `_depthwise_conv`, `_bn1`, `_se`,
  `_project_conv`, `_bn2`, `_swish` (each conv followed by its BN).
- `SqueezeExcite` (`_se`): F.adaptive_avg_pool2d inline, then `_se_reduce` Conv2D(C, S, 1) ->
  `_act` Swish -> `_se_expand` Conv2D(S, C, 1), the gate F.sigmoid inline, x * gate. The SE
  "linear layers" are 1x1 convs with weights [out, in, 1, 1].

The torch side (port_efficientnet_torch.py) was written independently: nn.Sequential stem /
head, Linear layers in the SE, the BNs of a block in a separate ModuleList, nn.SiLU.

PADIFF_BUG=paddle_se_hardsigmoid plants this side's bug: the SE gate is F.hardsigmoid (paddle's
slope 1/6, offset 0.5) instead of F.sigmoid, in every block.
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BATCH, IN_CHANS, IMG, CLASSES = 2, 3, 32, 10
STEM, HEAD = 8, 64
# (in, out, kernel, stride, expand ratio)
BLOCKS = ((8, 8, 3, 1, 4), (8, 16, 3, 2, 4), (16, 16, 5, 1, 4))
SE_RATIO = 0.25
OWN_BUGS = {"paddle_se_hardsigmoid"}
OTHER_BUGS = {"residual_skipped", "torch_bn_eps"}


def _conv(cin, cout, kernel, stride=1, groups=1, bias=False):
    """Conv2D with EfficientNet's own initialiser: Normal(0, sqrt(2 / fan_out))."""
    fan_out = kernel * kernel * cout // groups
    w = paddle.ParamAttr(initializer=nn.initializer.Normal(0.0, (2.0 / fan_out) ** 0.5))
    return nn.Conv2D(cin, cout, kernel, stride=stride, padding=kernel // 2, groups=groups,
                     weight_attr=w, bias_attr=None if bias else False)


def _bn(c):
    return nn.BatchNorm2D(c, momentum=0.9, epsilon=1e-3)


class SqueezeExcite(nn.Layer):
    def __init__(self, channels, squeezed, hard_gate=False):
        super().__init__()
        self.hard_gate = hard_gate
        self._se_reduce = _conv(channels, squeezed, 1, bias=True)
        self._act = nn.Swish()
        self._se_expand = _conv(squeezed, channels, 1, bias=True)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        s = self._se_expand(self._act(self._se_reduce(s)))
        gate = F.hardsigmoid(s) if self.hard_gate else F.sigmoid(s)
        return x * gate


class MBConvBlock(nn.Layer):
    def __init__(self, cin, cout, kernel, stride, expand, hard_gate=False):
        super().__init__()
        hidden = cin * expand
        self.id_skip = stride == 1 and cin == cout
        self._expand_conv = _conv(cin, hidden, 1)
        self._bn0 = _bn(hidden)
        self._depthwise_conv = _conv(hidden, hidden, kernel, stride=stride, groups=hidden)
        self._bn1 = _bn(hidden)
        self._se = SqueezeExcite(hidden, max(1, int(cin * SE_RATIO)), hard_gate)
        self._project_conv = _conv(hidden, cout, 1)
        self._bn2 = _bn(cout)
        self._swish = nn.Swish()

    def forward(self, inputs):
        x = self._swish(self._bn0(self._expand_conv(inputs)))
        x = self._swish(self._bn1(self._depthwise_conv(x)))
        x = self._se(x)
        x = self._bn2(self._project_conv(x))
        if self.id_skip:
            x = x + inputs
        return x


class EfficientNet(nn.Layer):
    def __init__(self, hard_gate=False):
        super().__init__()
        self._conv_stem = _conv(IN_CHANS, STEM, 3, stride=2)
        self._bn0 = _bn(STEM)
        self._blocks = nn.LayerList([MBConvBlock(*cfg, hard_gate=hard_gate) for cfg in BLOCKS])
        self._conv_head = _conv(BLOCKS[-1][1], HEAD, 1)
        self._bn1 = _bn(HEAD)
        self._avg_pooling = nn.AdaptiveAvgPool2D(1)
        self._dropout = nn.Dropout(0.2)
        self._fc = nn.Linear(HEAD, CLASSES)
        self._swish = nn.Swish()

    def forward(self, inputs):
        x = self._swish(self._bn0(self._conv_stem(inputs)))
        for block in self._blocks:
            x = block(x)
        x = self._swish(self._bn1(self._conv_head(x)))
        x = self._avg_pooling(x).flatten(1)
        return self._fc(self._dropout(x))


def _randomize_bn(m):
    """Trained-looking statistics (seeded): random BN affine weights and running statistics, and
    random SE expand biases (so that the SE gates are spread over the sigmoid, not all ~0.5)."""
    rng = np.random.default_rng(11)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, SqueezeExcite):
            c = layer._se_expand.bias.shape[0]
            layer._se_expand.bias.set_value(rng.normal(0.0, 1.0, c).astype("float32"))
        if isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.5, 1.5, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(1.0, 3.0, c).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_efficientnet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = EfficientNet(hard_gate=bug == "paddle_se_hardsigmoid")
    _randomize_bn(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(7)
    return rng.standard_normal((BATCH, IN_CHANS, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # logits [B, 10]
    return (output**2).mean()

"""Hand-written port, paddle side: a small Glow normalizing flow, 2 levels x 2 steps (written by "person A").

Input (positional): `x` [2, 3, 8, 8] float32 (numpy rng seed 13, uniform in [-0.5, 0.5)).
Output: a tuple (z, logdet): z [2, 192] = concat(z1.flatten(1), z2.flatten(1)) with z1 the half
factored out after level 0 ([2, 6, 4, 4]) and z2 the output of level 1 ([2, 24, 2, 2]);
logdet [2], the log-determinant of the whole transform per sample.

Per level: squeeze (space-to-depth x2, channel index c * 4 + 2 * i + j, openai / pixel_unshuffle
order), then 2 flow steps, then (level 0 only) split: the first half of the channels goes on,
the second half is factored out. One flow step (openai glow, "affine" coupling):
  actnorm    y = (x + bias) * exp(logs)                      logdet += H W sum(logs)
  invconv    y_o = sum_c x_c W[c, o]  (1x1 conv)             logdet += H W log|det W|
  coupling   xa, xb = channel halves; h = NN(xa);
             shift = h[:, 0::2], scale = sigmoid(h[:, 1::2] + 2)
             yb = (xb + shift) * scale; y = concat(xa, yb)   logdet += sum(log scale)
NN = conv3x3 (C/2 -> 16) + relu, conv1x1 (16 -> 16) + relu, Conv2dZeros 3x3 (16 -> C) whose
output is multiplied by exp(3 * logs) (openai's logscale_factor 3).

Paddle idioms on this side (openai glow, NCHW):
- root `Glow`: `levels` LayerList of `FlowLevel` (iterated); z parts are collected and
  concatenated in the root forward.
- `FlowLevel` (squeeze and split INLINE in its forward, no module): `steps` LayerList of
  `FlowStep`; forward(x, logdet) -> (x, z or None, logdet).
- `FlowStep`: `actnorm`, `invconv`, `coupling`; forward(x, logdet) -> (x, logdet) (the running
  logdet is threaded through every module call).
- `ActNorm`: `bias` [1, C, 1, 1] and `logs` [1, C, 1, 1] (a LOG-scale).
- `InvConv1x1`: ONE plain `weight` [C_in, C_out] (the channel-mixing matrix as a Linear would
  store it), applied by transposing to NHWC and matmul; log|det| via paddle.linalg.slogdet.
- `AffineCoupling`: `nn_in` Conv2D 3x3, `nn_mid` Conv2D 1x1 (F.relu inline), `nn_out`
  (`Conv2dZeros`: `conv` Conv2D 3x3 padding 1 + `logs` [C]); shift / scale are the EVEN / ODD
  output channels.
- model() gives every ActNorm, Conv2dZeros and 1x1 weight trained-looking values (seeded): no
  identity or zero init survives.

The torch side (port_glow_torch.py) was written independently (rosinality glow-pytorch style).

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_squeeze_hwc_order         -> the inline squeeze permutes to (i, j, c) channel order
                                      ((2 i + j) * C + c) instead of (c, i, j)
  paddle_coupling_shift_after_scale -> the coupling computes xb * scale + shift (RealNVP
                                      order) instead of (xb + shift) * scale
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_CH, SIZE, N_LEVELS, N_STEPS, HIDDEN = 3, 8, 2, 2, 16
LOGSCALE_FACTOR = 3.0
BATCH = 2
OWN_BUGS = {"paddle_squeeze_hwc_order", "paddle_coupling_shift_after_scale"}
OTHER_BUGS = {"torch_zeroconv_pad_one", "torch_lu_mask_diag"}


class ActNorm(nn.Layer):
    def __init__(self, channels):
        super().__init__()
        zeros = nn.initializer.Constant(0.0)
        self.bias = self.create_parameter([1, channels, 1, 1], default_initializer=zeros)
        self.logs = self.create_parameter([1, channels, 1, 1], default_initializer=zeros)

    def forward(self, x, logdet):
        y = (x + self.bias) * paddle.exp(self.logs)
        return y, logdet + x.shape[2] * x.shape[3] * paddle.sum(self.logs)


class InvConv1x1(nn.Layer):
    def __init__(self, channels):
        super().__init__()
        w = np.linalg.qr(np.random.default_rng(channels).standard_normal((channels, channels)))[0]
        self.weight = self.create_parameter(
            [channels, channels], default_initializer=nn.initializer.Assign(w.astype("float32")))

    def forward(self, x, logdet):
        y = paddle.matmul(x.transpose([0, 2, 3, 1]), self.weight).transpose([0, 3, 1, 2])
        _sign, logabsdet = paddle.linalg.slogdet(self.weight)
        return y, logdet + x.shape[2] * x.shape[3] * logabsdet


class Conv2dZeros(nn.Layer):
    def __init__(self, in_ch, out_ch):
        super().__init__()
        zeros = nn.initializer.Constant(0.0)
        self.conv = nn.Conv2D(in_ch, out_ch, 3, padding=1, weight_attr=paddle.ParamAttr(initializer=zeros),
                              bias_attr=paddle.ParamAttr(initializer=zeros))
        self.logs = self.create_parameter([out_ch], default_initializer=zeros)

    def forward(self, x):
        return self.conv(x) * paddle.exp(self.logs * LOGSCALE_FACTOR).reshape([1, -1, 1, 1])


class AffineCoupling(nn.Layer):
    def __init__(self, channels, shift_after_scale=False):
        super().__init__()
        self.shift_after_scale = shift_after_scale
        self.nn_in = nn.Conv2D(channels // 2, HIDDEN, 3, padding=1)
        self.nn_mid = nn.Conv2D(HIDDEN, HIDDEN, 1)
        self.nn_out = Conv2dZeros(HIDDEN, channels)

    def forward(self, x, logdet):
        c = x.shape[1]
        xa, xb = x[:, : c // 2], x[:, c // 2 :]
        h = self.nn_out(F.relu(self.nn_mid(F.relu(self.nn_in(xa)))))
        shift = h[:, 0::2]
        scale = F.sigmoid(h[:, 1::2] + 2.0)
        if self.shift_after_scale:
            yb = xb * scale + shift
        else:
            yb = (xb + shift) * scale
        logdet = logdet + paddle.sum(paddle.log(scale), axis=[1, 2, 3])
        return paddle.concat([xa, yb], axis=1), logdet


class FlowStep(nn.Layer):
    def __init__(self, channels, shift_after_scale=False):
        super().__init__()
        self.actnorm = ActNorm(channels)
        self.invconv = InvConv1x1(channels)
        self.coupling = AffineCoupling(channels, shift_after_scale)

    def forward(self, x, logdet):
        x, logdet = self.actnorm(x, logdet)
        x, logdet = self.invconv(x, logdet)
        return self.coupling(x, logdet)


class FlowLevel(nn.Layer):
    def __init__(self, in_channels, split, hwc_squeeze=False, shift_after_scale=False):
        super().__init__()
        self.split, self.hwc_squeeze = split, hwc_squeeze
        self.steps = nn.LayerList([FlowStep(4 * in_channels, shift_after_scale) for _ in range(N_STEPS)])

    def forward(self, x, logdet):
        b, c, h, w = x.shape
        x = x.reshape([b, c, h // 2, 2, w // 2, 2])
        if self.hwc_squeeze:
            x = x.transpose([0, 3, 5, 1, 2, 4])
        else:
            x = x.transpose([0, 1, 3, 5, 2, 4])
        x = x.reshape([b, 4 * c, h // 2, w // 2])
        for step in self.steps:
            x, logdet = step(x, logdet)
        if not self.split:
            return x, None, logdet
        half = x.shape[1] // 2
        return x[:, :half], x[:, half:], logdet


class Glow(nn.Layer):
    def __init__(self, hwc_squeeze=False, shift_after_scale=False):
        super().__init__()
        levels, ch = [], IN_CH
        for i in range(N_LEVELS):
            levels.append(FlowLevel(ch, split=i < N_LEVELS - 1, hwc_squeeze=hwc_squeeze,
                                    shift_after_scale=shift_after_scale))
            ch = 2 * ch
        self.levels = nn.LayerList(levels)

    def forward(self, x):
        logdet = paddle.zeros([x.shape[0]], dtype=x.dtype)
        zs = []
        for level in self.levels:
            x, z, logdet = level(x, logdet)
            if z is not None:
                zs.append(z.flatten(1))
        zs.append(x.flatten(1))
        return paddle.concat(zs, axis=1), logdet


def _trained_look(m):
    rng = np.random.default_rng(23)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, ActNorm):
            c = layer.bias.shape[1]
            layer.bias.set_value(rng.normal(0.0, 0.3, (1, c, 1, 1)).astype("float32"))
            layer.logs.set_value(rng.normal(0.0, 0.2, (1, c, 1, 1)).astype("float32"))
        elif isinstance(layer, InvConv1x1):
            w = layer.weight.numpy()
            layer.weight.set_value((w + rng.normal(0.0, 0.15, w.shape)).astype("float32"))
        elif isinstance(layer, Conv2dZeros):
            wt = layer.conv.weight
            layer.conv.weight.set_value(rng.normal(0.0, 0.05, wt.shape).astype("float32"))
            layer.conv.bias.set_value(rng.normal(0.0, 0.1, layer.conv.bias.shape).astype("float32"))
            layer.logs.set_value(rng.normal(0.0, 0.1, layer.logs.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_glow paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = Glow(hwc_squeeze=bug == "paddle_squeeze_hwc_order",
             shift_after_scale=bug == "paddle_coupling_shift_after_scale")
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(13)
    return (rng.random((BATCH, IN_CH, SIZE, SIZE)) - 0.5).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # (z [2, 192], logdet [2]): a Gaussian negative log-likelihood up to constants
    z, logdet = output
    return (0.5 * (z**2).sum(axis=1) - logdet).mean() / z.shape[1]

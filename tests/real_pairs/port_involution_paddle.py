"""Hand-written port, paddle side: a tiny RedNet (involution bottlenecks) classifier (written by "person A").

Input: one image batch [2, 3, 16, 16] (positional, NCHW, numpy rng seed 35, standard normal).
Output: logits [2, 10].

Network:
  stem   conv 3x3 (3 -> 16, pad 1, no bias) -> BN -> ReLU                        [2, 16, 16, 16]
  block0 RedNet bottleneck 16 -> 8 -> 16, involution K=3, stride 1, 2 groups     [2, 16, 16, 16]
  block1 RedNet bottleneck 16 -> 16 -> 32, involution K=5, stride 2, 4 groups,
         projection shortcut conv 1x1 stride 2 + BN                              [2, 32, 8, 8]
  head   global average pool -> Linear(32, 10)
Bottleneck: conv1x1 -> BN -> ReLU -> involution -> BN -> ReLU -> conv1x1 -> BN, + shortcut, ReLU.

Involution (Li et al. 2021, mmcv style), on C channels, G = C / 4 groups, kernel K, stride s:
  kernel = span(relu(bn(reduce(x if s == 1 else avgpool_s(x)))))   # [B, G*K*K, Ho, Wo]
           reduce: 1x1 conv C -> C/2 (no bias); span: 1x1 conv C/2 -> G*K*K (bias);
           span channel index = g*K*K + t, tap t = i*K + j (row-major over the K x K window)
  out[b, g*C/G + c, y, x] = sum_t kernel[b, g*K*K + t, y, x] * x_pad[b, g*C/G + c, s*y + i, s*x + j]
  with pad (K - 1) / 2 on each side.

Paddle idioms on this side:
- root `RedNet`: `stem` (ConvBNLayer), `blocks` (LayerList of RedBottleneck, iterated, never
  called), `pool` nn.AdaptiveAvgPool2D(1), `fc` nn.Linear(32, 10).
- `ConvBNLayer`: `conv` Conv2D (no bias) + `bn` BatchNorm2D; the ReLU is F.relu inline (act flag).
- `RedBottleneck` registers `conv1` (ConvBNLayer), `involution`, `bn2`, `conv3` (ConvBNLayer, no
  act) and, in block1, `shortcut` (ConvBNLayer stride 2, no act); ReLUs inline.
- `Involution` registers `avgpool` (nn.AvgPool2D(s, s), only when s > 1), `reduce` Conv2D,
  `bn` BatchNorm2D, `span` Conv2D, in that order; the ReLU is inline; the K x K neighbourhoods come
  from ONE F.unfold call, reshaped to [B, G, C/G, K*K, Ho, Wo].
- model() gives every BN trained-looking affine weights (seeded) and running statistics
  calibrated on a separate seeded batch of 8 images, layer by layer, then jittered.

The torch side (port_involution_torch.py) was written independently: a torchvision-style
Bottleneck with `conv2` = Involution2d whose reduce / BN / ReLU / span are ONE nn.Sequential
`kernel_gen`, and the neighbourhoods gathered by padding and stacking K*K shifted slices.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_kernel_tap_major -> Involution reads the span output as [B, K*K, G, Ho, Wo] (tap-major)
                             and transposes to [B, G, K*K, ...], instead of group-major
                             [B, G, K*K, Ho, Wo]: the kernels are shuffled between groups / taps
  paddle_reduce_bn_eps    -> Involution's `bn` is built with epsilon=1e-3 instead of the default
                             1e-5 (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BATCH, IMG, NUM_CLASSES = 2, 16, 10
GROUP_CHANNELS, REDUCTION = 4, 2
OWN_BUGS = {"paddle_kernel_tap_major", "paddle_reduce_bn_eps"}
OTHER_BUGS = {"torch_taps_col_major", "torch_stride_subsample"}


class ConvBNLayer(nn.Layer):
    def __init__(self, cin, cout, k, stride=1, act=True):
        super().__init__()
        self.act = act
        self.conv = nn.Conv2D(cin, cout, k, stride=stride, padding=(k - 1) // 2, bias_attr=False)
        self.bn = nn.BatchNorm2D(cout)

    def forward(self, x):
        x = self.bn(self.conv(x))
        return F.relu(x) if self.act else x


class Involution(nn.Layer):
    def __init__(self, channels, kernel_size, stride, bn_eps=1e-5, tap_major=False):
        super().__init__()
        self.channels, self.k, self.stride = channels, kernel_size, stride
        self.groups = channels // GROUP_CHANNELS
        self.tap_major = tap_major
        red = channels // REDUCTION
        if stride > 1:
            self.avgpool = nn.AvgPool2D(stride, stride)
        self.reduce = nn.Conv2D(channels, red, 1, bias_attr=False)
        self.bn = nn.BatchNorm2D(red, epsilon=bn_eps)
        self.span = nn.Conv2D(red, kernel_size * kernel_size * self.groups, 1)

    def forward(self, x):
        g, kk = self.groups, self.k * self.k
        src = self.avgpool(x) if self.stride > 1 else x
        weight = self.span(F.relu(self.bn(self.reduce(src))))
        b, _, h, w = weight.shape
        if self.tap_major:
            weight = weight.reshape([b, kk, g, h, w]).transpose([0, 2, 1, 3, 4])
        else:
            weight = weight.reshape([b, g, kk, h, w])
        weight = weight.unsqueeze(2)  # [B, G, 1, K*K, Ho, Wo]
        patches = F.unfold(x, self.k, strides=self.stride, paddings=(self.k - 1) // 2)
        patches = patches.reshape([b, g, self.channels // g, kk, h, w])
        out = (weight * patches).sum(axis=3)
        return out.reshape([b, self.channels, h, w])


class RedBottleneck(nn.Layer):
    def __init__(self, cin, mid, cout, kernel_size, stride, inv_kw):
        super().__init__()
        self.conv1 = ConvBNLayer(cin, mid, 1)
        self.involution = Involution(mid, kernel_size, stride, **inv_kw)
        self.bn2 = nn.BatchNorm2D(mid)
        self.conv3 = ConvBNLayer(mid, cout, 1, act=False)
        self.has_shortcut = stride != 1 or cin != cout
        if self.has_shortcut:
            self.shortcut = ConvBNLayer(cin, cout, 1, stride=stride, act=False)

    def forward(self, x):
        y = self.conv1(x)
        y = F.relu(self.bn2(self.involution(y)))
        y = self.conv3(y)
        sc = self.shortcut(x) if self.has_shortcut else x
        return F.relu(y + sc)


class RedNet(nn.Layer):
    def __init__(self, inv_kw):
        super().__init__()
        self.stem = ConvBNLayer(3, 16, 3)
        self.blocks = nn.LayerList([
            RedBottleneck(16, 8, 16, kernel_size=3, stride=1, inv_kw=inv_kw),
            RedBottleneck(16, 16, 32, kernel_size=5, stride=2, inv_kw=inv_kw),
        ])
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.fc = nn.Linear(32, NUM_CLASSES)

    def forward(self, x):
        x = self.stem(x)
        for blk in self.blocks:
            x = blk(x)
        x = paddle.flatten(self.pool(x), 1)
        return self.fc(x)


def _trained_look(m):
    """BN affine weights / biases trained-looking (seeded); running statistics calibrated on a
    separate seeded batch ("training data"), layer by layer, then jittered, so every BN sees
    statistics close to, but not equal to, its real input statistics."""
    rng = np.random.default_rng(351)
    hooks = []

    def calibrate(layer, inp):
        x = inp[0].numpy().astype("float64")
        mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
        c = mean.shape[0]
        layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
        layer.bias.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
        layer._mean.set_value((mean + rng.normal(0.0, 0.1, c) * np.sqrt(var)).astype("float32"))
        layer._variance.set_value((var * rng.uniform(0.8, 1.25, c)).astype("float32"))

    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            hooks.append(layer.register_forward_pre_hook(calibrate))
    calib = np.random.default_rng(3501).standard_normal((8, 3, IMG, IMG)).astype("float32")
    m.eval()
    with paddle.no_grad():
        m(paddle.to_tensor(calib))
    for h in hooks:
        h.remove()


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_involution paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    inv_kw = {
        "bn_eps": 1e-3 if bug == "paddle_reduce_bn_eps" else 1e-5,
        "tap_major": bug == "paddle_kernel_tap_major",
    }
    # the trained-looking values come from the CLEAN network (calibration included), then are
    # loaded into the one that is returned, so a planted bug changes nothing but its own code
    clean = RedNet({})
    _trained_look(clean)
    paddle.seed(0)
    m = RedNet(inv_kw)
    m.set_state_dict(clean.state_dict())
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(35)
    return rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()

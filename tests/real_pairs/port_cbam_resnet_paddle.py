"""Hand-written port, paddle side: a tiny ResNet with CBAM attention in every basic block (written by "person A").

Input: positional `x` [2, 3, 16, 16] NCHW (numpy rng seed 61, standard normal). Output: class
logits [2, 10].

Network (official CBAM code layout, Jongchan/attention-module):
  stem conv 3x3 (3 -> 16, no bias) -> BN -> ReLU
  layer1: 2 basic blocks, 16 channels, 16x16
  layer2: 1 basic block 16 -> 32, stride 2 (8x8), shortcut = conv 1x1 stride 2 (no bias) + BN
  global average pool -> fc (32 -> 10)
basic block: out = bn2(conv2(relu(bn1(conv1(x))))); out = cbam(out); relu(out + shortcut(x))
CBAM (reduction 4):
  channel gate: a = mlp(avgpool(x)), m = mlp(maxpool(x)) with ONE shared 2-layer MLP
                (C -> C/4, ReLU, C/4 -> C, biases); x = x * sigmoid(a + m)
  spatial gate: s = cat([max over channels, mean over channels]) (2 maps, max FIRST);
                x = x * sigmoid(conv7x7(s)) (2 -> 1, padding 3, with bias)
BatchNorm eps 1e-5 everywhere.

Paddle idioms on this side:
- root `ResNetCBAM`: `conv1`, `bn1`, `relu` (ONE nn.ReLU module), `layer1`, `layer2`
  (nn.Sequential of `BasicBlock`), `fc`; global pooling is F.adaptive_avg_pool2d inline.
- `BasicBlock`: `conv1`, `bn1`, `relu` (one nn.ReLU called TWICE per block), `conv2`, `bn2`,
  `downsample` (nn.Sequential(Conv2D, BatchNorm2D), only in layer2.0), `cbam`.
- `CBAM`: `ChannelGate`, `SpatialGate` (the official attribute names).
- `ChannelGate`: `mlp` = nn.Sequential(nn.Flatten(), nn.Linear(C, C/4), nn.ReLU(), nn.Linear(C/4, C));
  the avg / max pooling (F.adaptive_avg_pool2d / F.adaptive_max_pool2d), the sum and the sigmoid
  are inline.
- `SpatialGate`: `compress` (`ChannelPool`: cat(max, mean) on axis 1), `spatial` Conv2D(2, 1, 7,
  padding=3); the sigmoid is inline.
- model() gives every BN trained-looking affine weights / running statistics, and the linear /
  conv biases seeded values.

The torch side (port_cbam_resnet_torch.py) was written independently (timm style): a stem
Sequential, Sequential stages, the channel MLP as two 1x1 convs, nn.Sigmoid gate modules, the
spatial pool in [mean, max] order, and an nn.Identity shortcut where no projection is needed.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_channel_max_as_avg -> ChannelGate computes its "max" descriptor with
                               F.adaptive_avg_pool2d (copy-paste of the avg line), in every block
  paddle_downsample_bn_eps  -> the shortcut's BatchNorm2D is built with epsilon=1e-3 instead of
                               1e-5 (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

NUM_CLASSES, REDUCTION = 10, 4
BATCH, IMG = 2, 16
OWN_BUGS = {"paddle_channel_max_as_avg", "paddle_downsample_bn_eps"}
OTHER_BUGS = {"torch_gate_order_swapped", "torch_cbam_after_residual"}


class ChannelGate(nn.Layer):
    def __init__(self, gate_channels, reduction_ratio=REDUCTION, max_as_avg=False):
        super().__init__()
        self.max_as_avg = max_as_avg
        self.mlp = nn.Sequential(
            nn.Flatten(),
            nn.Linear(gate_channels, gate_channels // reduction_ratio),
            nn.ReLU(),
            nn.Linear(gate_channels // reduction_ratio, gate_channels),
        )

    def forward(self, x):
        att_avg = self.mlp(F.adaptive_avg_pool2d(x, 1))
        if self.max_as_avg:
            att_max = self.mlp(F.adaptive_avg_pool2d(x, 1))
        else:
            att_max = self.mlp(F.adaptive_max_pool2d(x, 1))
        scale = F.sigmoid(att_avg + att_max).unsqueeze(-1).unsqueeze(-1)
        return x * scale


class ChannelPool(nn.Layer):
    def forward(self, x):
        return paddle.concat([paddle.max(x, axis=1, keepdim=True), paddle.mean(x, axis=1, keepdim=True)], axis=1)


class SpatialGate(nn.Layer):
    def __init__(self, kernel_size=7):
        super().__init__()
        self.compress = ChannelPool()
        self.spatial = nn.Conv2D(2, 1, kernel_size, padding=(kernel_size - 1) // 2)

    def forward(self, x):
        scale = F.sigmoid(self.spatial(self.compress(x)))
        return x * scale


class CBAM(nn.Layer):
    def __init__(self, gate_channels, max_as_avg=False):
        super().__init__()
        self.ChannelGate = ChannelGate(gate_channels, REDUCTION, max_as_avg)
        self.SpatialGate = SpatialGate()

    def forward(self, x):
        return self.SpatialGate(self.ChannelGate(x))


class BasicBlock(nn.Layer):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, max_as_avg=False):
        super().__init__()
        self.conv1 = nn.Conv2D(inplanes, planes, 3, stride=stride, padding=1, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(planes)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2D(planes, planes, 3, stride=1, padding=1, bias_attr=False)
        self.bn2 = nn.BatchNorm2D(planes)
        self.downsample = downsample
        self.cbam = CBAM(planes, max_as_avg)

    def forward(self, x):
        residual = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            residual = self.downsample(x)
        out = self.cbam(out)
        out = out + residual
        return self.relu(out)


class ResNetCBAM(nn.Layer):
    def __init__(self, layers=(2, 1), widths=(16, 32), max_as_avg=False, ds_eps=1e-5):
        super().__init__()
        self.inplanes = widths[0]
        self.max_as_avg, self.ds_eps = max_as_avg, ds_eps
        self.conv1 = nn.Conv2D(3, widths[0], 3, stride=1, padding=1, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(widths[0])
        self.relu = nn.ReLU()
        self.layer1 = self._make_layer(widths[0], layers[0], stride=1)
        self.layer2 = self._make_layer(widths[1], layers[1], stride=2)
        self.fc = nn.Linear(widths[1], NUM_CLASSES)

    def _make_layer(self, planes, blocks, stride):
        downsample = None
        if stride != 1 or self.inplanes != planes:
            downsample = nn.Sequential(
                nn.Conv2D(self.inplanes, planes, 1, stride=stride, bias_attr=False),
                nn.BatchNorm2D(planes, epsilon=self.ds_eps),
            )
        layers = [BasicBlock(self.inplanes, planes, stride, downsample, self.max_as_avg)]
        self.inplanes = planes
        for _ in range(1, blocks):
            layers.append(BasicBlock(self.inplanes, planes, max_as_avg=self.max_as_avg))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer1(x)
        x = self.layer2(x)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


def _trained_look(m):
    rng = np.random.default_rng(1471)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))
        elif isinstance(layer, (nn.Linear, nn.Conv2D)) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.2, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_cbam_resnet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = ResNetCBAM(max_as_avg=bug == "paddle_channel_max_as_avg",
                   ds_eps=1e-3 if bug == "paddle_downsample_bn_eps" else 1e-5)
    _trained_look(m)
    m.eval()
    return m


def _image():
    return np.random.default_rng(61).standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()

"""Hand-written port, paddle side: a tiny HRNet stage for keypoint heatmaps (written by "person A",
PaddleSeg-flavoured names).

Input [2, 3, 32, 32] -> 5 keypoint heatmaps [2, 5, 8, 8]. BatchNorm2D(momentum=0.9,
epsilon=1e-5) everywhere, eval mode (running statistics), convs without bias before a BN.

    root `HRNetTiny`
      conv_layer1_1   ConvBNLayer(3 -> 16, 3x3, stride 2, relu)        32 -> 16
      conv_layer1_2   ConvBNLayer(16 -> 16, 3x3, stride 2, relu)       16 -> 8
      keypoint_head   `KeypointHead` (registered here, called last): the low branch bilinearly
                      upsampled to the high branch size (F.interpolate(size=), align_corners=False),
                      concat([high, low_up]) (24 channels), `last_conv` Conv2D(24, 5, 1) with bias
      tr1             `TransitionLayer`: `conv_bn_func_list` LayerList [ConvBNLayer(16 -> 8, 3x3,
                      stride 1, relu), ConvBNLayer(16 -> 16, 3x3, stride 2, relu)]: high 8x8 C=8,
                      low 4x4 C=16
      st2             `Stage`: `fuse` (FuseLayers) registered BEFORE `branches`
                        branches  LayerList [BasicBlock(8), BasicBlock(16)]; BasicBlock = conv1
                                  (ConvBNLayer, relu), conv2 (ConvBNLayer, no act), + identity,
                                  F.relu inline
                        fuse      `FuseLayers`: NESTED LayerLists `fuse_layers[i][k]`, only the
                                  off-diagonal entries exist: fuse_layers[0][0] = ConvBNLayer(16 -> 8,
                                  1x1, no act) (low -> high), fuse_layers[1][0] = ConvBNLayer(8 -> 16,
                                  3x3, stride 2, no act) (high -> low). The nearest x2 upsample of
                                  low -> high is F.interpolate inline; each fused sum goes through
                                  F.relu inline.
ConvBNLayer = `_conv` (Conv2D, bias_attr=False) + `_batch_norm` (BatchNorm2D) + F.relu inline
when act="relu".

BN statistics and affine parameters are randomised (numpy rng seed 5) so that eval-mode BN is
not an identity; verify_truth copies them (`_mean` / `_variance` pair with torch's
running_mean / running_var).

PADIFF_BUG (this side's bugs; the torch side's names are accepted and ignored, any other name
raises ValueError):
  paddle_fuse_bilinear          -> the low -> high upsample in FuseLayers uses mode="bilinear"
                                   instead of "nearest"
  paddle_block_relu_before_add  -> BasicBlock applies the ReLU to conv2's output and then adds
                                   the identity (relu(y) + x instead of relu(y + x))
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

STEM_C, HIGH_C, LOW_C, N_KPT = 16, 8, 16, 5
BN_MOMENTUM, BN_EPS = 0.9, 1e-5
OWN_BUGS = {"paddle_fuse_bilinear", "paddle_block_relu_before_add"}
OTHER_BUGS = {"torch_bn_eps_1e3", "torch_head_concat_order"}


class ConvBNLayer(nn.Layer):
    def __init__(self, in_c, out_c, k, stride=1, act=None):
        super().__init__()
        self.act = act
        self._conv = nn.Conv2D(in_c, out_c, k, stride=stride, padding=(k - 1) // 2, bias_attr=False)
        self._batch_norm = nn.BatchNorm2D(out_c, momentum=BN_MOMENTUM, epsilon=BN_EPS)

    def forward(self, x):
        y = self._batch_norm(self._conv(x))
        return F.relu(y) if self.act == "relu" else y


class BasicBlock(nn.Layer):
    def __init__(self, c, relu_before_add=False):
        super().__init__()
        self.relu_before_add = relu_before_add
        self.conv1 = ConvBNLayer(c, c, 3, act="relu")
        self.conv2 = ConvBNLayer(c, c, 3)

    def forward(self, x):
        y = self.conv2(self.conv1(x))
        if self.relu_before_add:
            return F.relu(y) + x
        return F.relu(y + x)


class TransitionLayer(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv_bn_func_list = nn.LayerList([
            ConvBNLayer(STEM_C, HIGH_C, 3, 1, act="relu"),
            ConvBNLayer(STEM_C, LOW_C, 3, 2, act="relu"),
        ])

    def forward(self, x):
        return [layer(x) for layer in self.conv_bn_func_list]


class FuseLayers(nn.Layer):
    def __init__(self, up_mode="nearest"):
        super().__init__()
        self.up_mode = up_mode
        self.fuse_layers = nn.LayerList([
            nn.LayerList([ConvBNLayer(LOW_C, HIGH_C, 1)]),  # into branch 0, from branch 1
            nn.LayerList([ConvBNLayer(HIGH_C, LOW_C, 3, 2)]),  # into branch 1, from branch 0
        ])

    def forward(self, xs):
        high, low = xs
        y_high = high + F.interpolate(self.fuse_layers[0][0](low), scale_factor=2, mode=self.up_mode)
        y_low = self.fuse_layers[1][0](high) + low
        return [F.relu(y_high), F.relu(y_low)]


class Stage(nn.Layer):
    def __init__(self, up_mode="nearest", relu_before_add=False):
        super().__init__()
        self.fuse = FuseLayers(up_mode)
        self.branches = nn.LayerList([BasicBlock(HIGH_C, relu_before_add), BasicBlock(LOW_C, relu_before_add)])

    def forward(self, xs):
        return self.fuse([branch(x) for branch, x in zip(self.branches, xs)])


class KeypointHead(nn.Layer):
    def __init__(self):
        super().__init__()
        self.last_conv = nn.Conv2D(HIGH_C + LOW_C, N_KPT, 1)

    def forward(self, xs):
        high, low = xs
        low_up = F.interpolate(low, size=high.shape[2:], mode="bilinear", align_corners=False)
        return self.last_conv(paddle.concat([high, low_up], axis=1))


class HRNetTiny(nn.Layer):
    def __init__(self, up_mode="nearest", relu_before_add=False):
        super().__init__()
        self.conv_layer1_1 = ConvBNLayer(3, STEM_C, 3, 2, act="relu")
        self.conv_layer1_2 = ConvBNLayer(STEM_C, STEM_C, 3, 2, act="relu")
        self.keypoint_head = KeypointHead()
        self.tr1 = TransitionLayer()
        self.st2 = Stage(up_mode, relu_before_add)

    def forward(self, x):
        x = self.conv_layer1_2(self.conv_layer1_1(x))
        return self.keypoint_head(self.st2(self.tr1(x)))


def _randomise_bn(m):
    rng = np.random.default_rng(5)
    for layer in m.sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.5, 1.5, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.3, 1.5, c).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_hrnet_tiny paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = HRNetTiny(up_mode="bilinear" if bug == "paddle_fuse_bilinear" else "nearest",
                  relu_before_add=bug == "paddle_block_relu_before_add")
    _randomise_bn(m)
    m.eval()
    return m


def _image():
    return np.random.default_rng(3).standard_normal((2, 3, 32, 32)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # heatmaps [2, 5, 8, 8]
    return (output**2).mean()

"""Hand-written port, paddle side: a tiny GoogLeNet / Inception-v1-style image classifier (written by "person A").

Input: images [2, 3, 32, 32] (positional, NCHW, numpy rng seed 34, standard normal). Output:
logits [2, 10].

Network (BN + ReLU after every conv, convs without bias):
  stem      conv 3x3 3 -> 16 (stride 1, padding 1), BN, ReLU; max-pool 3x3 stride 2 padding 1
            -> [B, 16, 16, 16]
  block 3a  in 16, four branches concatenated on channels in the order
            [1x1 (8) | 1x1 (8) -> 3x3 (12) | 1x1 (4) -> 5x5 (6) | max-pool 3x3 s1 p1 -> 1x1 (6)]
            -> [B, 32, 16, 16]
  pool      max-pool 3x3 stride 2 padding 1 -> [B, 32, 8, 8]
  block 3b  in 32: [1x1 (12) | 1x1 (12) -> 3x3 (16) | 1x1 (6) -> 3x3 (8) -> 3x3 (8) |
            max-pool -> 1x1 (8)] -> [B, 44, 8, 8] (the "5x5" branch is factorised into two 3x3,
            Inception-v2 style)
  head      global average pool -> [B, 44], dropout p = 0.4 (identity in eval), Linear(44, 10)

Paddle idioms on this side (PaddleClas flavour):
- root `GoogLeNetTiny` registers `conv1` (ConvBNLayer), `_pool` (ONE nn.MaxPool2D(3, 2,
  padding=1), called twice: after the stem and between the blocks), `_ince3a`, `_ince3b`
  (Inception), `_pool_5` nn.AdaptiveAvgPool2D(1), `_drop` nn.Dropout(p=0.4), `_fc_out`
  Linear(44, 10). The flatten is inline (paddle.squeeze).
- `ConvBNLayer`: `_conv` Conv2D(bias_attr=False) and `_batch_norm` = the fluid-style
  **paddle.nn.BatchNorm(num_filters, act="relu")**: the ReLU lives INSIDE the batch-norm module
  (its output is relu(bn(x))); there is no separate activation anywhere.
- `Inception` registers one ConvBNLayer per conv, in branch order: `_conv1`, `_conv3r`,
  `_conv3`, `_conv5r`, `_conv5` (+ `_conv5b` for the factorised branch), then `_pool`
  nn.MaxPool2D(3, 1, padding=1) and `_convprj`; the concat (paddle.concat, axis=1) is inline.
- model() gives every BatchNorm trained-looking affine weights and running statistics, and the
  head bias a trained-looking value (seeded), so that nothing is an identity.

The torch side (port_inception_torch.py) was written independently (torchvision flavour): every
conv is an nn.Sequential(Conv2d, BatchNorm2d, ReLU) block, the three 1x1 convs that read the block
input are FUSED into one conv whose output is split, the branches are registered in another order,
the pools are two modules and the global pool is inline.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_branch_avgpool     -> the Inception pool branch is built with nn.AvgPool2D(3, 1, padding=1)
                               instead of nn.MaxPool2D (in both blocks)
  paddle_dropout_downscale  -> the head dropout is nn.Dropout(p=0.4, mode="downscale_in_infer")
                               (the PaddleClas GoogLeNet setting): in eval it scales by 0.6
"""
import os

import numpy as np
import paddle
from paddle import nn

NUM_CLASSES = 10
BATCH, IMG = 2, 32
OWN_BUGS = {"paddle_branch_avgpool", "paddle_dropout_downscale"}
OTHER_BUGS = {"torch_concat_order", "torch_bn_eps_tv"}


class ConvBNLayer(nn.Layer):
    def __init__(self, num_channels, num_filters, filter_size, stride=1, act="relu"):
        super().__init__()
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride=stride,
                               padding=(filter_size - 1) // 2, bias_attr=False)
        self._batch_norm = nn.BatchNorm(num_filters, act=act)

    def forward(self, inputs):
        return self._batch_norm(self._conv(inputs))


class Inception(nn.Layer):
    def __init__(self, input_channels, filter1, filter3R, filter3, filter5R, filter5, proj,
                 factorize5=False, avg_pool=False):
        super().__init__()
        self._conv1 = ConvBNLayer(input_channels, filter1, 1)
        self._conv3r = ConvBNLayer(input_channels, filter3R, 1)
        self._conv3 = ConvBNLayer(filter3R, filter3, 3)
        self._conv5r = ConvBNLayer(input_channels, filter5R, 1)
        if factorize5:
            self._conv5 = ConvBNLayer(filter5R, filter5, 3)
            self._conv5b = ConvBNLayer(filter5, filter5, 3)
        else:
            self._conv5 = ConvBNLayer(filter5R, filter5, 5)
            self._conv5b = None
        if avg_pool:
            self._pool = nn.AvgPool2D(kernel_size=3, stride=1, padding=1)
        else:
            self._pool = nn.MaxPool2D(kernel_size=3, stride=1, padding=1)
        self._convprj = ConvBNLayer(input_channels, proj, 1)

    def forward(self, inputs):
        conv1 = self._conv1(inputs)
        conv3 = self._conv3(self._conv3r(inputs))
        conv5 = self._conv5(self._conv5r(inputs))
        if self._conv5b is not None:
            conv5 = self._conv5b(conv5)
        convprj = self._convprj(self._pool(inputs))
        return paddle.concat([conv1, conv3, conv5, convprj], axis=1)


class GoogLeNetTiny(nn.Layer):
    def __init__(self, class_num=NUM_CLASSES, avg_pool=False, dropout_mode="upscale_in_train"):
        super().__init__()
        self.conv1 = ConvBNLayer(3, 16, 3)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self._ince3a = Inception(16, 8, 8, 12, 4, 6, 6, avg_pool=avg_pool)
        self._ince3b = Inception(32, 12, 12, 16, 6, 8, 8, factorize5=True, avg_pool=avg_pool)
        self._pool_5 = nn.AdaptiveAvgPool2D(1)
        self._drop = nn.Dropout(p=0.4, mode=dropout_mode)
        self._fc_out = nn.Linear(44, class_num)

    def forward(self, inputs):
        x = self._pool(self.conv1(inputs))
        x = self._ince3a(x)
        x = self._pool(x)
        x = self._ince3b(x)
        x = self._pool_5(x)
        x = paddle.squeeze(x, axis=[2, 3])
        x = self._drop(x)
        return self._fc_out(x)


def _trained_look(m):
    rng = np.random.default_rng(134)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, n).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, n).astype("float32"))
    m._fc_out.bias.set_value(rng.normal(0.0, 0.2, NUM_CLASSES).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_inception paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = GoogLeNetTiny(
        avg_pool=bug == "paddle_branch_avgpool",
        dropout_mode="downscale_in_infer" if bug == "paddle_dropout_downscale" else "upscale_in_train",
    )
    _trained_look(m)
    m.eval()
    return m


def _images():
    rng = np.random.default_rng(34)
    return rng.standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()

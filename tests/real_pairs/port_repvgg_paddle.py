"""Hand-written port, paddle side: a tiny RepVGG-style classifier with training-time blocks (written by "person A").

Input: one image batch x [2, 3, 32, 32] (positional, NCHW, numpy rng seed 31, standard normal).
Output: logits [2, 10].

RepVGG block (training-time form, no re-parameterisation):
  y = relu(BN(conv3x3(x)) + BN(conv1x1(x)) + BN_id(x))
with the identity branch BN_id only where in_channels == out_channels and stride == 1. The
3x3 branch has padding 1, the 1x1 branch padding 0, both with the block's stride and no conv
bias; every BN has eps 1e-5.

Network: stage0 = one block 3 -> 8, stride 2 (32 -> 16); stage1 = 8 -> 16 stride 2, then
16 -> 16 (16 -> 8); stage2 = 16 -> 32 stride 2, then two 32 -> 32 blocks (8 -> 4); global
average pool, flatten, Linear(32, 10). So the first, stride-2 block of every stage has NO
identity branch, and 3 of the 6 blocks have one (stage1.1, stage2.1, stage2.2).

Paddle idioms on this side (PaddleClas RepVGG style):
- root `RepVGG`: `stage0` (a RepVGGBlock), `stage1`, `stage2` (nn.Sequential of blocks),
  `gap` nn.AdaptiveAvgPool2D(1), `linear` nn.Linear(32, 10) ([in, out] weight); the flatten is
  inline.
- `RepVGGBlock` registers, in this order, `nonlinearity` (nn.ReLU), `rbr_identity`
  (nn.BatchNorm2D or None), `rbr_dense`, `rbr_1x1` (ConvBN): every branch is a named attribute.
- `ConvBN`: `conv` nn.Conv2D(bias_attr=False), `bn` nn.BatchNorm2D.
- model() gives every BN trained-looking affine weights and running statistics (seeded), so no
  branch is an identity.

The torch side (port_repvgg_torch.py) was written independently (timm style): the branches of a
block live in ONE nn.ModuleDict (identity first), the ReLU / pool live elsewhere.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_id_bn_eps     -> the identity-branch BN is built with epsilon=1e-3 (a detection
                          config's value) instead of 1e-5, in every block that has one
  paddle_id_after_relu -> the block adds the identity branch AFTER the ReLU:
                          relu(dense + 1x1) + BN_id(x), in every block with an identity branch
"""
import os

import numpy as np
import paddle
from paddle import nn

NUM_CLASSES = 10
BATCH = 2
OWN_BUGS = {"paddle_id_bn_eps", "paddle_id_after_relu"}
OTHER_BUGS = {"torch_head_max_pool", "torch_act_silu"}


class ConvBN(nn.Layer):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.Conv2D(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                              bias_attr=False)
        self.bn = nn.BatchNorm2D(out_channels, epsilon=1e-5)

    def forward(self, x):
        return self.bn(self.conv(x))


class RepVGGBlock(nn.Layer):
    def __init__(self, in_channels, out_channels, stride=1, id_eps=1e-5, id_after_act=False):
        super().__init__()
        self.id_after_act = id_after_act
        self.nonlinearity = nn.ReLU()
        if in_channels == out_channels and stride == 1:
            self.rbr_identity = nn.BatchNorm2D(in_channels, epsilon=id_eps)
        else:
            self.rbr_identity = None
        self.rbr_dense = ConvBN(in_channels, out_channels, 3, stride, padding=1)
        self.rbr_1x1 = ConvBN(in_channels, out_channels, 1, stride, padding=0)

    def forward(self, inputs):
        if self.rbr_identity is None:
            id_out = 0
        else:
            id_out = self.rbr_identity(inputs)
        if self.id_after_act:
            return self.nonlinearity(self.rbr_dense(inputs) + self.rbr_1x1(inputs)) + id_out
        return self.nonlinearity(self.rbr_dense(inputs) + self.rbr_1x1(inputs) + id_out)


class RepVGG(nn.Layer):
    def __init__(self, num_blocks=(2, 3), widths=(8, 16, 32), class_num=NUM_CLASSES, **block_kw):
        super().__init__()
        self.in_planes = widths[0]
        self.stage0 = RepVGGBlock(3, widths[0], stride=2, **block_kw)
        self.stage1 = self._make_stage(widths[1], num_blocks[0], 2, block_kw)
        self.stage2 = self._make_stage(widths[2], num_blocks[1], 2, block_kw)
        self.gap = nn.AdaptiveAvgPool2D(output_size=1)
        self.linear = nn.Linear(widths[2], class_num)

    def _make_stage(self, planes, num_blocks, stride, block_kw):
        strides = [stride] + [1] * (num_blocks - 1)
        blocks = []
        for s in strides:
            blocks.append(RepVGGBlock(self.in_planes, planes, stride=s, **block_kw))
            self.in_planes = planes
        return nn.Sequential(*blocks)

    def forward(self, x):
        out = self.stage0(x)
        out = self.stage1(out)
        out = self.stage2(out)
        out = self.gap(out)
        out = paddle.flatten(out, start_axis=1)
        return self.linear(out)


def _trained_look(m):
    rng = np.random.default_rng(23)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.4, 1.2, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))
    lin = m.linear
    lin.bias.set_value(rng.normal(0.0, 0.2, lin.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_repvgg paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = RepVGG(id_eps=1e-3 if bug == "paddle_id_bn_eps" else 1e-5, id_after_act=bug == "paddle_id_after_relu")
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(31)
    return rng.standard_normal((BATCH, 3, 32, 32)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()

"""Hand-written port, paddle side: a MobileOne-style CNN in its train-time (un-reparameterized) form (written by "person A").

Input: one image `x` [1, 3, 32, 32] (positional, NCHW, numpy rng seed 4502, standard normal).
Output: class logits [1, 5].

A MobileOne block (Apple ml-mobileone, train-time form) with kernel k, stride s, groups g:
  out = relu( scale(x) + skip(x) + sum_i conv_i(x) )
  conv_i = k x k conv (padding k // 2, stride s, groups g, no bias) + BN, i = 1 .. n
  scale  = 1 x 1 conv (stride s, groups g, no bias) + BN            -- only when k > 1
  skip   = BN(x)                                                    -- only when in == out and s == 1
Network (tiny):
  stage0  stem block 3 -> 8, 3x3, stride 2, n = 1 (no skip: 3 != 8)            [1, 8, 16, 16]
  stage1  depthwise block 8, 3x3, stride 2, groups 8, n = 2 (no skip: stride 2) [1, 8, 8, 8]
          pointwise block 8 -> 16, 1x1, n = 2 (no scale: k = 1; no skip: 8 != 16) [1, 16, 8, 8]
  stage2  depthwise block 16, 3x3, stride 1, groups 16, n = 2, WITH skip BN      [1, 16, 8, 8]
          pointwise block 16 -> 16, 1x1, n = 2, WITH skip BN (no scale)          [1, 16, 8, 8]
  gap     global average pool -> [1, 16]; linear Linear(16, 5)
All BN: eps 1e-5, eval mode (running statistics).

Paddle idioms on this side (ml-mobileone naming):
- root `MobileOneNet`: `stage0` (one MobileOneBlock), `stage1`, `stage2` (nn.Sequential of a
  depthwise and a pointwise MobileOneBlock: a FLAT list of blocks), `gap`
  (nn.AdaptiveAvgPool2D(1)), `linear`; the flatten is inline.
- `MobileOneBlock` registers `activation` (nn.ReLU module) first, then `rbr_skip`
  (nn.BatchNorm2D, or None where the shapes forbid it), `rbr_conv` (a LayerList of
  nn.Sequential(("conv", Conv2D), ("bn", BatchNorm2D))), and `rbr_scale` (the same conv-bn
  Sequential with a 1x1 kernel, or None for k = 1). The forward sums scale + skip first, then
  the conv branches in list order, then calls `activation`.
- model() gives every BN trained-looking weights / biases / running statistics (seeded).

The torch side (port_mobileone_torch.py) was written independently: a `stem` unit, `stages` =
nn.Sequential of two depthwise-separable modules each holding a `dw` and a `pw` unit, the conv
branches as NAMED attributes (`kxk_a`, `kxk_b`), the sum in another order, F.relu inline, and a
`head` module that pools inline.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_skip_bn_eps     -> the identity (skip) BN is built with epsilon=1e-3 instead of 1e-5
                            (precision-level; only the two stage2 blocks have one)
  paddle_branch_assign   -> the branch loop assigns instead of accumulating
                            (out = self.rbr_conv[ix](x) instead of out = out + ...), so each block
                            returns relu(last conv branch) and drops scale / skip / earlier
                            branches
"""
import os

import numpy as np
import paddle
from paddle import nn

BN_EPS = 1e-5
N_CLASSES = 5
OWN_BUGS = {"paddle_skip_bn_eps", "paddle_branch_assign"}
OTHER_BUGS = {"torch_branch_copy_paste", "torch_head_maxpool"}


class MobileOneBlock(nn.Layer):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, groups=1, num_conv_branches=1, bug=""):
        super().__init__()
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.groups = kernel_size, stride, groups
        self.num_conv_branches = num_conv_branches
        self.assign_bug = bug == "paddle_branch_assign"

        self.activation = nn.ReLU()
        if out_channels == in_channels and stride == 1:
            skip_eps = 1e-3 if bug == "paddle_skip_bn_eps" else BN_EPS
            self.rbr_skip = nn.BatchNorm2D(in_channels, epsilon=skip_eps)
        else:
            self.rbr_skip = None
        self.rbr_conv = nn.LayerList(
            [self._conv_bn(kernel_size, kernel_size // 2) for _ in range(num_conv_branches)]
        )
        self.rbr_scale = self._conv_bn(1, 0) if kernel_size > 1 else None

    def _conv_bn(self, kernel_size, padding):
        return nn.Sequential(
            ("conv", nn.Conv2D(self.in_channels, self.out_channels, kernel_size, stride=self.stride,
                               padding=padding, groups=self.groups, bias_attr=False)),
            ("bn", nn.BatchNorm2D(self.out_channels, epsilon=BN_EPS)),
        )

    def forward(self, x):
        scale_out = 0
        if self.rbr_scale is not None:
            scale_out = self.rbr_scale(x)
        identity_out = 0
        if self.rbr_skip is not None:
            identity_out = self.rbr_skip(x)
        out = scale_out + identity_out
        for ix in range(self.num_conv_branches):
            if self.assign_bug:
                out = self.rbr_conv[ix](x)
            else:
                out = out + self.rbr_conv[ix](x)
        return self.activation(out)


class MobileOneNet(nn.Layer):
    def __init__(self, bug=""):
        super().__init__()
        self.stage0 = MobileOneBlock(3, 8, 3, stride=2, num_conv_branches=1, bug=bug)
        self.stage1 = nn.Sequential(
            MobileOneBlock(8, 8, 3, stride=2, groups=8, num_conv_branches=2, bug=bug),
            MobileOneBlock(8, 16, 1, stride=1, num_conv_branches=2, bug=bug),
        )
        self.stage2 = nn.Sequential(
            MobileOneBlock(16, 16, 3, stride=1, groups=16, num_conv_branches=2, bug=bug),
            MobileOneBlock(16, 16, 1, stride=1, num_conv_branches=2, bug=bug),
        )
        self.gap = nn.AdaptiveAvgPool2D(output_size=1)
        self.linear = nn.Linear(16, N_CLASSES)

    def forward(self, x):
        x = self.stage0(x)
        x = self.stage1(x)
        x = self.stage2(x)
        x = self.gap(x)
        x = x.flatten(1)
        return self.linear(x)


def _trained_look(m):
    rng = np.random.default_rng(4503)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))
    m.linear.bias.set_value(rng.normal(0.0, 0.2, N_CLASSES).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_mobileone paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = MobileOneNet(bug if bug in OWN_BUGS else "")
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(4502)
    return rng.standard_normal((1, 3, 32, 32)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # class logits [1, 5]
    return (output**2).mean()

"""Hand-written port, paddle side: a tiny Dual Path Network (DPN) image classifier (written by
"person A").

Input: positional `x` [2, 3, 16, 16] NCHW (numpy rng seed 34, standard normal). Output: logits
[2, 10].

Shared architecture (all BatchNorms eps 1e-3, the DPN checkpoints' value):
  stem      conv 3x3 (3 -> 16, no bias) -> BN -> ReLU -> max-pool 3x3 stride 2 pad 1 -> [16, 8, 8]
  4 dual-path blocks (pre-activation BN-ReLU-conv units):
    block  kind    in  R(bottleneck) groups  out_c  inc  stride
    0      proj    16  16             4       16     8    1
    1      normal  40  16             4       16     8    1
    2      down    48  32             4       32     8    2
    3      normal  56  32             4       32     8    1
  One block: x = concat(resid, dense) (the stem output for block 0);
    main = BRC_1x1(x; R) -> BRC_3x3(groups 4, stride; R) -> BRC_1x1(out_c + inc)
    (BRC = BN -> ReLU -> conv, no bias); main is split into main_res [out_c] | main_dense [inc].
    proj / down blocks project the shortcut: s = ReLU(BN(x)), short_res = 1x1 conv(s; out_c,
    stride), short_dense = 1x1 conv(s; 2 * inc, stride); normal blocks take short_res = resid,
    short_dense = dense.
    resid' = short_res + main_res            (the residual path: added)
    dense' = concat(short_dense, main_dense) (the dense path: old channels first, concatenated)
  head: concat(resid, dense) [64, 4, 4] -> BN -> ReLU -> global average pool -> linear 64 -> 10.

Paddle idioms on this side:
- root `DPNTiny`: `stem_conv`, `stem_bn`, `blocks` (LayerList of 4 `DualPathBlock`, iterated),
  `head_bn`, `fc` (nn.Linear(64, 10), [in, out] weight). The stem ReLU, F.max_pool2d, the head
  ReLU and the average pool are inline in the root forward.
- `DualPathBlock.forward(resid, dense=None)` takes the two paths as two tensors and returns two.
  It registers `conv_a`, `conv_b`, `conv_c` (each a `BNReLUConv`) first and then, in proj / down
  blocks only, the shortcut as THREE pieces: `proj_bn`, `proj_res` (Conv2D -> out_c) and
  `proj_dense` (Conv2D -> 2 * inc), the ReLU between them inline. It runs the main path first,
  then the shortcut. The split is paddle.split, the concats paddle.concat.
- `BNReLUConv`: `bn`, `conv`, with F.relu inline.
- model() gives every BN trained-looking affine weights / running statistics (seeded).

The torch side (port_dpn_torch.py) was written independently (timm DPN style): one nn.Sequential
`features` passing (resid, dense) tuples, one fused projection conv per projecting block, ReLU
modules, and a 1x1-conv classifier.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_dense_concat_order -> the block concatenates the NEW dense channels before the old ones
                               (concat(main_dense, short_dense)), in every block
  paddle_bn_eps_default     -> BNReLUConv builds its BatchNorm2D with paddle's default epsilon
                               1e-5 instead of 1e-3 (precision-level; stem / shortcut / head BNs
                               keep 1e-3)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_CH, STEM_CH, NUM_CLASSES, BN_EPS = 3, 16, 10, 1e-3
# (kind, in_ch, bottleneck, groups, out_c, inc, stride)
BLOCKS = (
    ("proj", 16, 16, 4, 16, 8, 1),
    ("normal", 40, 16, 4, 16, 8, 1),
    ("down", 48, 32, 4, 32, 8, 2),
    ("normal", 56, 32, 4, 32, 8, 1),
)
HEAD_CH = 64
BATCH, SIZE = 2, 16
OWN_BUGS = {"paddle_dense_concat_order", "paddle_bn_eps_default"}
OTHER_BUGS = {"torch_stride_on_1x1", "torch_proj_no_relu"}


class BNReLUConv(nn.Layer):
    def __init__(self, in_ch, out_ch, kernel, stride=1, groups=1, default_eps=False):
        super().__init__()
        if default_eps:
            self.bn = nn.BatchNorm2D(in_ch)
        else:
            self.bn = nn.BatchNorm2D(in_ch, epsilon=BN_EPS)
        self.conv = nn.Conv2D(in_ch, out_ch, kernel, stride=stride, padding=kernel // 2, groups=groups,
                              bias_attr=False)

    def forward(self, x):
        return self.conv(F.relu(self.bn(x)))


class DualPathBlock(nn.Layer):
    def __init__(self, kind, in_ch, mid, groups, out_c, inc, stride, new_first=False, default_eps=False):
        super().__init__()
        self.out_c, self.inc, self.new_first = out_c, inc, new_first
        self.has_proj = kind in ("proj", "down")
        self.conv_a = BNReLUConv(in_ch, mid, 1, default_eps=default_eps)
        self.conv_b = BNReLUConv(mid, mid, 3, stride=stride, groups=groups, default_eps=default_eps)
        self.conv_c = BNReLUConv(mid, out_c + inc, 1, default_eps=default_eps)
        if self.has_proj:
            self.proj_bn = nn.BatchNorm2D(in_ch, epsilon=BN_EPS)
            self.proj_res = nn.Conv2D(in_ch, out_c, 1, stride=stride, bias_attr=False)
            self.proj_dense = nn.Conv2D(in_ch, 2 * inc, 1, stride=stride, bias_attr=False)

    def forward(self, resid, dense=None):
        x = resid if dense is None else paddle.concat([resid, dense], axis=1)
        main = self.conv_c(self.conv_b(self.conv_a(x)))
        main_res, main_dense = paddle.split(main, [self.out_c, self.inc], axis=1)
        if self.has_proj:
            s = F.relu(self.proj_bn(x))
            short_res, short_dense = self.proj_res(s), self.proj_dense(s)
        else:
            short_res, short_dense = resid, dense
        new_resid = short_res + main_res
        if self.new_first:
            new_dense = paddle.concat([main_dense, short_dense], axis=1)
        else:
            new_dense = paddle.concat([short_dense, main_dense], axis=1)
        return new_resid, new_dense


class DPNTiny(nn.Layer):
    def __init__(self, new_first=False, default_eps=False):
        super().__init__()
        self.stem_conv = nn.Conv2D(IN_CH, STEM_CH, 3, padding=1, bias_attr=False)
        self.stem_bn = nn.BatchNorm2D(STEM_CH, epsilon=BN_EPS)
        self.blocks = nn.LayerList([DualPathBlock(*cfg, new_first=new_first, default_eps=default_eps)
                                    for cfg in BLOCKS])
        self.head_bn = nn.BatchNorm2D(HEAD_CH, epsilon=BN_EPS)
        self.fc = nn.Linear(HEAD_CH, NUM_CLASSES)

    def forward(self, x):
        x = F.relu(self.stem_bn(self.stem_conv(x)))
        x = F.max_pool2d(x, kernel_size=3, stride=2, padding=1)
        resid, dense = x, None
        for block in self.blocks:
            resid, dense = block(resid, dense)
        x = F.relu(self.head_bn(paddle.concat([resid, dense], axis=1)))
        x = x.mean(axis=[2, 3])
        return self.fc(x)


def _trained_look(m):
    rng = np.random.default_rng(35)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))
    m.fc.bias.set_value(rng.normal(0.0, 0.1, NUM_CLASSES).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dpn paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = DPNTiny(new_first=bug == "paddle_dense_concat_order", default_eps=bug == "paddle_bn_eps_default")
    _trained_look(m)
    m.eval()
    return m


def _image():
    return np.random.default_rng(34).standard_normal((BATCH, IN_CH, SIZE, SIZE)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()

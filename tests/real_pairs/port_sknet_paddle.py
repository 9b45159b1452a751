"""Hand-written port, paddle side: a tiny Selective Kernel network (SKNet) classifier (written by "person A").

Input: images [2, 3, 16, 16] (positional, NCHW, numpy rng seed 33, standard normal).
Output: logits [2, 10].

  stem    conv 3x3 (3 -> 16, no bias) -> BN -> ReLU                        [2, 16, 16, 16]
  block 0 SK bottleneck 16 -> 16, stride 1, identity shortcut, 2 branches   [2, 16, 16, 16]
  block 1 SK bottleneck 16 -> 32, stride 2, projection shortcut, 3 branches [2, 32, 8, 8]
  head    global average pool -> Linear(32, 10)

SK bottleneck: relu(bn_out(conv_out(SK(relu(bn_in(conv_in(x)))))) + shortcut(x)), conv_in /
conv_out 1x1 without bias; the stride sits on the SK branches (ResNet v1.5 style).
SK unit over C channels with M branches (branch m: grouped conv 3x3, 4 groups, no bias, dilation
m + 1, padding m + 1, the block's stride; then BN; then ReLU):
  U_m = branch_m(x);  U = sum_m U_m;  s = mean_{H,W}(U)                   [B, C]
  z = relu(BN1d(s W_squeeze)),  W_squeeze [C, d] (no bias),  d = max(C // 2, 8)
  a = softmax over the branch axis of [z W_m + b_m]_m                      [B, M, C]
  V = sum_m a_m * U_m
All BN eps 1e-5.

Paddle idioms on this side:
- root `SKNetTiny`: `stem_conv`, `stem_bn`, `blocks` = LayerList of `SKBlock` (iterated), `head`
  nn.Linear(32, 10); the ReLU after the stem and the global pool (paddle.mean) are inline.
- `SKBlock` registers `shortcut` FIRST (None for block 0, else `ProjShortcut` = `conv` + `bn`),
  then `conv_in`, `bn_in`, `sk`, `conv_out`, `bn_out`; the ReLUs are F.relu inline.
- `SKConv`: `branches` = LayerList of `BranchConv` (`conv` + `bn`, F.relu inline); the squeeze
  is a Linear `squeeze_fc` [C, d] + BatchNorm1D `squeeze_bn`; the attention is ONE Linear PER
  BRANCH, `select_fcs` (LayerList of Linear(d, C) with bias); the branch softmax is F.softmax
  inline on the stacked logits [B, M, C], axis 1; the global pool is paddle.mean inline.
- model() gives every BN trained-looking affine weights and running statistics (seeded).

The torch side (port_sknet_torch.py) was written independently: nn.Sequential conv-BN-ReLU
branches, an nn.AdaptiveAvgPool2d module, the squeeze as a 1x1 Conv2d + BatchNorm2d + ReLU
Sequential, ONE fused 1x1 conv for all branch attentions and an nn.Softmax(dim=1) module.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_softmax_over_channels -> the selection softmax is taken over the channel axis (axis -1)
                                  of the [B, M, C] logits instead of the branch axis
  paddle_squeeze_bn_eps        -> the squeeze BatchNorm1D is built with epsilon=1e-3 (a Keras
                                  default) instead of 1e-5 (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

NUM_CLASSES, STEM_CH, GROUPS = 10, 16, 4
BATCH, IMG = 2, 16
BLOCKS = ((16, 16, 1, 2), (16, 32, 2, 3))  # (in, out, stride, branches)
OWN_BUGS = {"paddle_softmax_over_channels", "paddle_squeeze_bn_eps"}
OTHER_BUGS = {"torch_gap_max", "torch_stride_on_1x1"}


class BranchConv(nn.Layer):
    def __init__(self, ch, stride, dilation):
        super().__init__()
        self.conv = nn.Conv2D(ch, ch, 3, stride=stride, padding=dilation, dilation=dilation, groups=GROUPS,
                              bias_attr=False)
        self.bn = nn.BatchNorm2D(ch)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class SKConv(nn.Layer):
    def __init__(self, ch, stride, n_branches, softmax_axis=1, squeeze_eps=1e-5):
        super().__init__()
        d = max(ch // 2, 8)
        self.softmax_axis = softmax_axis
        self.branches = nn.LayerList([BranchConv(ch, stride, m + 1) for m in range(n_branches)])
        self.squeeze_fc = nn.Linear(ch, d, bias_attr=False)
        self.squeeze_bn = nn.BatchNorm1D(d, epsilon=squeeze_eps)
        self.select_fcs = nn.LayerList([nn.Linear(d, ch) for _ in range(n_branches)])

    def forward(self, x):
        feats = [branch(x) for branch in self.branches]
        u = feats[0]
        for f in feats[1:]:
            u = u + f
        s = paddle.mean(u, axis=[2, 3])  # [B, C]
        z = F.relu(self.squeeze_bn(self.squeeze_fc(s)))  # [B, d]
        logits = paddle.stack([fc(z) for fc in self.select_fcs], axis=1)  # [B, M, C]
        attn = F.softmax(logits, axis=self.softmax_axis)
        out = feats[0] * attn[:, 0].unsqueeze([2, 3])
        for m in range(1, len(feats)):
            out = out + feats[m] * attn[:, m].unsqueeze([2, 3])
        return out


class ProjShortcut(nn.Layer):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv = nn.Conv2D(cin, cout, 1, stride=stride, bias_attr=False)
        self.bn = nn.BatchNorm2D(cout)

    def forward(self, x):
        return self.bn(self.conv(x))


class SKBlock(nn.Layer):
    def __init__(self, cin, cout, stride, n_branches, **sk_kw):
        super().__init__()
        self.shortcut = ProjShortcut(cin, cout, stride) if (stride != 1 or cin != cout) else None
        self.conv_in = nn.Conv2D(cin, cout, 1, bias_attr=False)
        self.bn_in = nn.BatchNorm2D(cout)
        self.sk = SKConv(cout, stride, n_branches, **sk_kw)
        self.conv_out = nn.Conv2D(cout, cout, 1, bias_attr=False)
        self.bn_out = nn.BatchNorm2D(cout)

    def forward(self, x):
        identity = x if self.shortcut is None else self.shortcut(x)
        h = F.relu(self.bn_in(self.conv_in(x)))
        h = self.sk(h)
        h = self.bn_out(self.conv_out(h))
        return F.relu(h + identity)


class SKNetTiny(nn.Layer):
    def __init__(self, **sk_kw):
        super().__init__()
        self.stem_conv = nn.Conv2D(3, STEM_CH, 3, padding=1, bias_attr=False)
        self.stem_bn = nn.BatchNorm2D(STEM_CH)
        self.blocks = nn.LayerList([SKBlock(ci, co, s, m, **sk_kw) for ci, co, s, m in BLOCKS])
        self.head = nn.Linear(BLOCKS[-1][1], NUM_CLASSES)

    def forward(self, x):
        x = F.relu(self.stem_bn(self.stem_conv(x)))
        for block in self.blocks:
            x = block(x)
        return self.head(paddle.mean(x, axis=[2, 3]))


def _trained_look(m):
    rng = np.random.default_rng(133)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, (nn.BatchNorm2D, nn.BatchNorm1D)):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, n).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            if isinstance(layer, nn.BatchNorm1D):  # the squeeze statistics: small pooled activations
                layer._variance.set_value(rng.uniform(0.05, 0.2, n).astype("float32"))
            else:
                layer._variance.set_value(rng.uniform(0.5, 2.0, n).astype("float32"))
        if isinstance(layer, nn.Linear) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.2, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_sknet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = SKNetTiny(softmax_axis=-1 if bug == "paddle_softmax_over_channels" else 1,
                  squeeze_eps=1e-3 if bug == "paddle_squeeze_bn_eps" else 1e-5)
    _trained_look(m)
    m.eval()
    return m


def _images():
    return np.random.default_rng(33).standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()

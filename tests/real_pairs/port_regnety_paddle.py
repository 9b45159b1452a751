"""Hand-written port, paddle side: a tiny RegNetY-style CNN (written by "person A", timm / pycls style).

Input: positional `images` [2, 3, 32, 32] (NCHW, numpy rng seed 43, standard normal). Output:
logits [2, 10].

Architecture (shared with port_regnety_torch.py):
  stem  conv 3x3 stride 2 (3 -> 16, no bias) - BN - ReLU                        -> [2, 16, 16, 16]
  s1    2 Y blocks, width 24, group width 8 (groups 3), first block stride 2   -> [2, 24, 8, 8]
  s2    2 Y blocks, width 48, group width 8 (groups 6), first block stride 2   -> [2, 48, 4, 4]
  head  global average pool -> Linear(48, 10)
Y block (bottleneck ratio 1, so the inner width is the output width w):
  1x1 conv-BN-ReLU (w_in -> w) -> 3x3 GROUP conv (stride s, groups w / 8)-BN-ReLU
  -> Squeeze-Excitation (mean over H, W -> 1x1 conv w -> se -> ReLU -> 1x1 conv se -> w ->
     sigmoid -> scale), se = round(0.25 * w_in): the reduction is relative to the block INPUT
     width (4, 6, 6, 12 for the four blocks)
  -> 1x1 conv-BN (no act); residual: + x, or + BN(1x1 conv stride s (x)) (projection shortcut)
     where the shape changes (first block of each stage); then ReLU.
BatchNorm eps 1e-5 everywhere; convs have no bias except the SE convs.

Paddle idioms on this side (timm RegNet style):
- root `RegNetY` registers `stem` (ConvNormAct), `s1`, `s2` (RegStage), `head` (ClassifierHead,
  whose only sublayer is `fc` nn.Linear(48, 10), weight [in, out]; the global pool is an inline
  `paddle.mean` in the head's forward).
- `RegStage` adds its blocks with add_sublayer as `b1`, `b2` and iterates them.
- `ConvNormAct`: `conv` (Conv2D, bias_attr=False), `bn` (BatchNorm2D); the ReLU is F.relu inline
  when `apply_act`.
- `Bottleneck` registers `conv1`, `conv2`, `se`, `conv3`, then `downsample` (a ConvNormAct without
  act, only in the first block of a stage) and `act3` (nn.ReLU); the forward runs the main path
  first and the shortcut projection after it.
- `SEModule`: `fc1`, `fc2` (Conv2D 1x1 with bias); the squeeze (paddle.mean), ReLU and sigmoid
  are inline.
- model() gives every BN trained-looking affine weights / running statistics and every bias
  (SE convs, classifier) trained-looking values (seeded), so nothing is an identity.

The torch side (port_regnety_torch.py) was written independently in torchvision style
(Sequential conv-BN-act blocks, `f` = Sequential(a, b, se, c), `SqueezeExcitation` with
`avgpool`, `fc1`, `fc2`, `activation`, `scale_activation` modules, projection `proj` called
BEFORE the main path).

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_proj_bn_eps -> the projection shortcut's ConvNormAct is built with BatchNorm epsilon
                        1e-3 instead of 1e-5 (precision-level; both stages' first blocks)
  paddle_se_silu     -> SEModule's inner activation is F.silu instead of F.relu (copied from an
                        EfficientNet SE), in every block
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

STEM_W, NUM_CLASSES, GROUP_W, SE_RATIO = 16, 10, 8, 0.25
STAGES = ((24, 2), (48, 2))  # (width, depth); first block of each stage has stride 2
BN_EPS = 1e-5
BATCH = 2
OWN_BUGS = {"paddle_proj_bn_eps", "paddle_se_silu"}
OTHER_BUGS = {"torch_stride_on_1x1", "torch_c_has_relu"}


class ConvNormAct(nn.Layer):
    def __init__(self, cin, cout, k=1, stride=1, groups=1, apply_act=True, eps=BN_EPS):
        super().__init__()
        self.apply_act = apply_act
        self.conv = nn.Conv2D(cin, cout, k, stride=stride, padding=k // 2, groups=groups, bias_attr=False)
        self.bn = nn.BatchNorm2D(cout, epsilon=eps)

    def forward(self, x):
        x = self.bn(self.conv(x))
        return F.relu(x) if self.apply_act else x


class SEModule(nn.Layer):
    def __init__(self, channels, rd_channels, silu=False):
        super().__init__()
        self.silu = silu
        self.fc1 = nn.Conv2D(channels, rd_channels, 1)
        self.fc2 = nn.Conv2D(rd_channels, channels, 1)

    def forward(self, x):
        s = paddle.mean(x, axis=[2, 3], keepdim=True)
        s = self.fc1(s)
        s = F.silu(s) if self.silu else F.relu(s)
        s = self.fc2(s)
        return x * F.sigmoid(s)


class Bottleneck(nn.Layer):
    def __init__(self, in_chs, out_chs, stride, bug=""):
        super().__init__()
        groups = out_chs // GROUP_W
        rd = round(in_chs * SE_RATIO)
        self.conv1 = ConvNormAct(in_chs, out_chs, 1)
        self.conv2 = ConvNormAct(out_chs, out_chs, 3, stride=stride, groups=groups)
        self.se = SEModule(out_chs, rd, silu=bug == "paddle_se_silu")
        self.conv3 = ConvNormAct(out_chs, out_chs, 1, apply_act=False)
        if stride != 1 or in_chs != out_chs:
            proj_eps = 1e-3 if bug == "paddle_proj_bn_eps" else BN_EPS
            self.downsample = ConvNormAct(in_chs, out_chs, 1, stride=stride, apply_act=False, eps=proj_eps)
        else:
            self.downsample = None
        self.act3 = nn.ReLU()

    def forward(self, x):
        shortcut = x
        x = self.conv1(x)
        x = self.conv2(x)
        x = self.se(x)
        x = self.conv3(x)
        if self.downsample is not None:
            shortcut = self.downsample(shortcut)
        return self.act3(x + shortcut)


class RegStage(nn.Layer):
    def __init__(self, in_chs, out_chs, depth, bug=""):
        super().__init__()
        self.depth = depth
        for i in range(depth):
            self.add_sublayer(f"b{i + 1}", Bottleneck(in_chs if i == 0 else out_chs, out_chs, 2 if i == 0 else 1, bug))

    def forward(self, x):
        for i in range(self.depth):
            x = getattr(self, f"b{i + 1}")(x)
        return x


class ClassifierHead(nn.Layer):
    def __init__(self, cin, num_classes):
        super().__init__()
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        return self.fc(paddle.mean(x, axis=[2, 3]))


class RegNetY(nn.Layer):
    def __init__(self, bug=""):
        super().__init__()
        self.stem = ConvNormAct(3, STEM_W, 3, stride=2)
        prev = STEM_W
        for i, (w, d) in enumerate(STAGES):
            self.add_sublayer(f"s{i + 1}", RegStage(prev, w, d, bug))
            prev = w
        self.head = ClassifierHead(prev, NUM_CLASSES)

    def forward(self, images):
        x = self.stem(images)
        x = self.s1(x)
        x = self.s2(x)
        return self.head(x)


def _trained_look(m):
    rng = np.random.default_rng(17)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, n).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, n).astype("float32"))
        elif isinstance(layer, (nn.Conv2D, nn.Linear)) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.2, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_regnety paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = RegNetY(bug if bug in OWN_BUGS else "")
    _trained_look(m)
    m.eval()
    return m


def _images():
    rng = np.random.default_rng(43)
    return rng.standard_normal((BATCH, 3, 32, 32)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()

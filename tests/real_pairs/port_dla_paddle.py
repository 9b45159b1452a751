"""Hand-written port, paddle side: a tiny Deep Layer Aggregation classifier, DLA-34 style (written by "person A").

Input: one image batch [2, 3, 32, 32] (positional, NCHW, numpy rng seed 34, standard normal).
Output: class logits [2, 10].

Network (BN eps 1e-5 everywhere, convs without bias):
  stem      7x7 conv 3 -> 8, BN, ReLU                                   [2, 8, 32, 32]
  level 0   3x3 conv 8 -> 8, BN, ReLU                                   [2, 8, 32, 32]
  level 1   3x3 stride-2 conv 8 -> 16, BN, ReLU                         [2, 16, 16, 16]
  level 2   aggregation stage of depth 1, 16 -> 24, stride 2            [2, 24, 8, 8]
  level 3   aggregation stage of depth 2, 24 -> 32, stride 2, the stage input (pooled) also
            aggregated at the top node, residual aggregation nodes       [2, 32, 4, 4]
  head      global average pool, Linear 32 -> 10
A residual unit is conv3x3(stride) - BN - ReLU - conv3x3 - BN, + identity, ReLU; the first unit
of a stage takes as identity the level-specific downsampling: max-pool(stride) of the stage
input, then a 1x1 projection conv + BN. An aggregation node concatenates its inputs on channels,
1x1 conv + BN, optionally + its first input, ReLU.

Stage wiring (a, b, c, d are the residual units 0..3, down = pool(x), res = proj(down)):
  depth 1:  a = u0(x, res); b = u1(a); out = agg0(b, a)
  depth 2:  a = u0(x, res); b = u1(a); n1 = agg0(b, a)
            c = u2(n1);      d = u3(c); out = agg1(d, c, down, n1)      (down only when the
                                                                        stage aggregates its input)

Paddle idioms on this side: the hierarchy is FLAT.
- root `DLA` registers `classifier` (nn.Linear(32, 10), weight [in, out]) first, then `stem`
  (ConvBNReLU), `conv_levels` (LayerList of two ConvBNReLU), `stages` (LayerList of two
  `AggregationStage`). The global average pool is an inline mean.
- `ConvBNReLU`: `conv`, `bn`, ReLU inline (F.relu).
- `AggregationStage` registers `units` (LayerList of 2**depth `ResUnit`), `aggs` (LayerList of
  2**(depth-1) `AggNode`), then the downsampling `pool` (nn.MaxPool2D(stride, stride)) and the
  projection `proj_conv` / `proj_bn` directly on the stage; the wiring above is explicit code of
  its forward. The pool is called ONCE per stage (its output feeds both the projection and the
  top aggregation node).
- `ResUnit`: `conv_a`, `bn_a`, `conv_b`, `bn_b`; ReLU inline; forward(x, identity=None).
- `AggNode`: `agg_bn` registered BEFORE `agg_conv`; forward(*feats); ReLU inline.
- model() gives every BN trained-looking affine weights (seeded) and the running statistics of a
  seeded calibration batch (train-mode forward with momentum 0), computed on a CLEAN build whose
  state a bugged build then loads, so that a bug never changes the weights.

The torch side (port_dla_torch.py) was written independently (ucbdrive/dla style): recursive
nested Tree modules (tree1 / tree2 / root / downsample / project), nn.ReLU(inplace=True)
modules, Sequential levels, a 1x1-conv classifier.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_agg_children_order -> the depth-2 stage feeds its top aggregation node
                               (d, c, n1, down) instead of (d, c, down, n1): the two extra
                               children swapped against the conv weight's input channels
  paddle_downsample_avgpool -> the stage's downsampling is nn.AvgPool2D instead of
                               nn.MaxPool2D (both stages)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BATCH, IMG, NUM_CLASSES = 2, 32, 10
OWN_BUGS = {"paddle_agg_children_order", "paddle_downsample_avgpool"}
OTHER_BUGS = {"torch_block_residual_after_relu", "torch_root_bn_eps"}


class ConvBNReLU(nn.Layer):
    def __init__(self, ch_in, ch_out, k=3, stride=1):
        super().__init__()
        self.conv = nn.Conv2D(ch_in, ch_out, k, stride=stride, padding=k // 2, bias_attr=False)
        self.bn = nn.BatchNorm2D(ch_out)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class ResUnit(nn.Layer):
    def __init__(self, ch_in, ch_out, stride=1):
        super().__init__()
        self.conv_a = nn.Conv2D(ch_in, ch_out, 3, stride=stride, padding=1, bias_attr=False)
        self.bn_a = nn.BatchNorm2D(ch_out)
        self.conv_b = nn.Conv2D(ch_out, ch_out, 3, stride=1, padding=1, bias_attr=False)
        self.bn_b = nn.BatchNorm2D(ch_out)

    def forward(self, x, identity=None):
        if identity is None:
            identity = x
        y = F.relu(self.bn_a(self.conv_a(x)))
        y = self.bn_b(self.conv_b(y))
        return F.relu(y + identity)


class AggNode(nn.Layer):
    def __init__(self, ch_in, ch_out, residual=False):
        super().__init__()
        self.agg_bn = nn.BatchNorm2D(ch_out)
        self.agg_conv = nn.Conv2D(ch_in, ch_out, 1, bias_attr=False)
        self.residual = residual

    def forward(self, *feats):
        y = self.agg_bn(self.agg_conv(paddle.concat(list(feats), axis=1)))
        if self.residual:
            y = y + feats[0]
        return F.relu(y)


class AggregationStage(nn.Layer):
    def __init__(self, depth, ch_in, ch_out, stride=2, aggregate_input=False, residual_agg=False,
                 avg_pool=False, swap_children=False):
        super().__init__()
        assert depth in (1, 2)
        self.depth, self.aggregate_input, self.swap_children = depth, aggregate_input, swap_children
        self.units = nn.LayerList(
            [ResUnit(ch_in, ch_out, stride)] + [ResUnit(ch_out, ch_out) for _ in range(2**depth - 1)])
        extra = ch_in if aggregate_input else 0
        if depth == 1:
            aggs = [AggNode(2 * ch_out + extra, ch_out, residual_agg)]
        else:
            aggs = [AggNode(2 * ch_out, ch_out, residual_agg),
                    AggNode(3 * ch_out + extra, ch_out, residual_agg)]
        self.aggs = nn.LayerList(aggs)
        self.pool = nn.AvgPool2D(stride, stride) if avg_pool else nn.MaxPool2D(stride, stride)
        self.proj_conv = nn.Conv2D(ch_in, ch_out, 1, bias_attr=False)
        self.proj_bn = nn.BatchNorm2D(ch_out)

    def forward(self, x):
        down = self.pool(x)
        res = self.proj_bn(self.proj_conv(down))
        a = self.units[0](x, res)
        b = self.units[1](a)
        extra = [down] if self.aggregate_input else []
        if self.depth == 1:
            return self.aggs[0](b, a, *extra)
        n1 = self.aggs[0](b, a)
        c = self.units[2](n1)
        d = self.units[3](c)
        children = extra + [n1]
        if self.swap_children:
            children = children[::-1]
        return self.aggs[1](d, c, *children)


class DLA(nn.Layer):
    def __init__(self, widths=(8, 8, 16, 24, 32), avg_pool=False, swap_children=False):
        super().__init__()
        self.classifier = nn.Linear(widths[-1], NUM_CLASSES)
        self.stem = ConvBNReLU(3, widths[0], 7)
        self.conv_levels = nn.LayerList([ConvBNReLU(widths[0], widths[1], 3, 1),
                                         ConvBNReLU(widths[1], widths[2], 3, 2)])
        self.stages = nn.LayerList([
            AggregationStage(1, widths[2], widths[3], 2, aggregate_input=False, residual_agg=False,
                             avg_pool=avg_pool),
            AggregationStage(2, widths[3], widths[4], 2, aggregate_input=True, residual_agg=True,
                             avg_pool=avg_pool, swap_children=swap_children),
        ])

    def forward(self, x):
        x = self.stem(x)
        for level in self.conv_levels:
            x = level(x)
        for stage in self.stages:
            x = stage(x)
        return self.classifier(x.mean(axis=[2, 3]))


def _trained_look(m):
    """Trained-looking BN: affine weights / biases drawn (seeded), running statistics those of a
    separate calibration batch (seeded, not the test input), as a trained network has them."""
    rng = np.random.default_rng(134)
    bns = [layer for _name, layer in m.named_sublayers() if isinstance(layer, nn.BatchNorm2D)]
    for bn in bns:
        c = bn.weight.shape[0]
        bn.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
        bn.bias.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
    m.classifier.bias.set_value(rng.normal(0.0, 0.1, NUM_CLASSES).astype("float32"))
    momenta = [bn._momentum for bn in bns]
    for bn in bns:
        bn._momentum = 0.0  # running statistics := this batch's statistics
    m.train()
    with paddle.no_grad():
        m(paddle.to_tensor(rng.standard_normal((8, 3, IMG, IMG)).astype("float32")))
    for bn, mom in zip(bns, momenta):
        bn._momentum = mom


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dla paddle: unknown PADIFF_BUG {bug!r}")
    # the "trained" weights belong to the clean network: calibrate a clean build, load its state
    paddle.seed(0)
    ref = DLA()
    _trained_look(ref)
    m = DLA(avg_pool=bug == "paddle_downsample_avgpool", swap_children=bug == "paddle_agg_children_order")
    m.set_state_dict(ref.state_dict())
    m.eval()
    return m


def _image():
    return np.random.default_rng(34).standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()

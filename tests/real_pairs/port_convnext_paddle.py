"""Hand-written port, paddle side: a tiny ConvNeXt written the way a Paddle user would write it
(the "original" model, following the official facebookresearch layout). 32x32 RGB in, 10 classes.

    downsample_layers[0] = stem: Conv2D 3->32 (4x4, stride 4) + channels-first LayerNorm  (8x8)
    stages[0]: 2 blocks at width 32
    downsample_layers[1]: channels-first LayerNorm + Conv2D 32->64 (2x2, stride 2)         (4x4)
    stages[1]: 2 blocks at width 64
    global average pool, `norm` (nn.LayerNorm), `head` (Linear 64->10)

Block: depthwise 7x7 Conv2D (`dwconv`), `norm`, `pwconv1` (1x1 Conv2D, x4), `act` (nn.GELU),
`pwconv2` (1x1 Conv2D), layer scale `gamma` [C, 1, 1], residual.

Paddle idioms on this side: the whole network stays NCHW. The pointwise MLP is done with 1x1
`nn.Conv2D` (weights [out, in, 1, 1]) and the LayerNorm over channels is a hand-written
`LayerNorm2D` (mean / biased variance over axis 1, its own `weight` / `bias` parameters created
with `create_parameter`, epsilon 1e-6). The layer scale `gamma` is a [C, 1, 1] parameter so that
it broadcasts over NCHW.

PADIFF_BUG=paddle_ln_eps plants this side's bug (see port_convnext_truth.json); the torch side's
bug names are accepted and ignored, any other name raises.
"""
import os

import numpy as np
import paddle
from paddle import nn

IMG, DIMS, DEPTHS, CLASSES = 32, (32, 64), (2, 2), 10

PADDLE_BUGS = ("paddle_ln_eps",)
TORCH_BUGS = ("no_layer_scale", "ds_permute")


class LayerNorm2D(nn.Layer):
    """LayerNorm over the channel axis of an NCHW tensor, written by hand."""

    def __init__(self, num_channels, epsilon=1e-6):
        super().__init__()
        self.epsilon = epsilon
        self.weight = self.create_parameter(
            [num_channels], default_initializer=nn.initializer.Constant(1.0))
        self.bias = self.create_parameter([num_channels], is_bias=True)

    def forward(self, x):
        u = x.mean(axis=1, keepdim=True)
        s = (x - u).pow(2).mean(axis=1, keepdim=True)
        x = (x - u) / paddle.sqrt(s + self.epsilon)
        return self.weight.reshape([1, -1, 1, 1]) * x + self.bias.reshape([1, -1, 1, 1])


class Block(nn.Layer):
    def __init__(self, dim, layer_scale_init_value=1e-6):
        super().__init__()
        self.dwconv = nn.Conv2D(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.norm = LayerNorm2D(dim)
        self.pwconv1 = nn.Conv2D(dim, 4 * dim, kernel_size=1)
        self.act = nn.GELU()
        self.pwconv2 = nn.Conv2D(4 * dim, dim, kernel_size=1)
        self.gamma = self.create_parameter(
            [dim, 1, 1], default_initializer=nn.initializer.Constant(layer_scale_init_value))

    def forward(self, x):
        h = self.dwconv(x)
        h = self.norm(h)
        h = self.pwconv2(self.act(self.pwconv1(h)))
        return x + self.gamma * h


class ConvNeXt(nn.Layer):
    def __init__(self, in_chans=3, num_classes=CLASSES, dims=DIMS, depths=DEPTHS):
        super().__init__()
        self.downsample_layers = nn.LayerList()
        self.downsample_layers.append(nn.Sequential(
            nn.Conv2D(in_chans, dims[0], kernel_size=4, stride=4), LayerNorm2D(dims[0])))
        for i in range(1, len(dims)):
            self.downsample_layers.append(nn.Sequential(
                LayerNorm2D(dims[i - 1]), nn.Conv2D(dims[i - 1], dims[i], kernel_size=2, stride=2)))
        self.stages = nn.LayerList(
            [nn.Sequential(*[Block(dims[i]) for _ in range(depths[i])]) for i in range(len(dims))])
        self.norm = nn.LayerNorm(dims[-1], epsilon=1e-6)
        self.head = nn.Linear(dims[-1], num_classes)

    def forward(self, x):
        for downsample, stage in zip(self.downsample_layers, self.stages):
            x = stage(downsample(x))
        x = self.norm(x.mean(axis=[-2, -1]))
        return self.head(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in PADDLE_BUGS + TORCH_BUGS:
        raise ValueError(f"port_convnext: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = ConvNeXt()
    m.eval()
    _perturb(m)
    if bug == "paddle_ln_eps":
        # the hand-written LayerNorm of stage 0's first block uses epsilon 1e-5 (paddle's
        # nn.LayerNorm default) instead of ConvNeXt's 1e-6
        m.stages[0][0].norm.epsilon = 1e-5
    return m


def _perturb(m):
    """Random init leaves every bias 0, every norm at (1, 0) and the layer scale at 1e-6: give them
    random values (fixed numpy rng) so that a bias, norm or layer-scale parameter ported wrongly
    shows, and so that the blocks are not near-identities."""
    rng = np.random.default_rng(1)
    norms = {id(layer) for layer in m.sublayers() if isinstance(layer, (LayerNorm2D, nn.LayerNorm))}
    owner = {}
    for layer in m.sublayers():
        for p in layer.parameters(include_sublayers=False):
            owner[id(p)] = layer
    for name, p in m.named_parameters():
        if name.endswith("gamma"):
            p.set_value(rng.uniform(0.2, 0.8, p.shape).astype("float32"))
        elif name.endswith("bias"):
            p.set_value(rng.normal(0.0, 0.05, p.shape).astype("float32"))
        elif id(owner.get(id(p))) in norms and name.endswith("weight"):
            p.set_value((1.0 + rng.normal(0.0, 0.1, p.shape)).astype("float32"))


def inputs():
    x = np.random.default_rng(0).standard_normal((2, 3, IMG, IMG)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(output):
    # logits [2, 10] of a Linear on the LayerNormed pooled features: a mean of squares depends on all of it
    return (output**2).mean()

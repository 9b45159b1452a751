"""Hand-written port, paddle side: a tiny PoolFormer image classifier (written by "person A").

Input: `images` [2, 3, 32, 32] float32 (positional, numpy rng seed 23, standard normal).
Output: class logits [2, 10].

  patch embedding  Conv 3 -> 16, kernel 7, stride 4, padding 2         -> [2, 16, 8, 8]
  stage 1          2 PoolFormer blocks, 16 channels
  downsampling     Conv 16 -> 32, kernel 3, stride 2, padding 1         -> [2, 32, 4, 4]
  stage 2          2 PoolFormer blocks, 32 channels
  final norm       GroupNorm(1 group), global average pool over H, W, head Linear(32, 10)

One block (MetaFormer with a pooling token mixer):
  x = x + ls1[c] * (avgpool3x3(n1) - n1),   n1 = GroupNorm1(x)     (stride 1, pad 1, padded
                                                                  cells NOT counted)
  x = x + ls2[c] * fc2(gelu(fc1(GroupNorm1(x))))                  (hidden 4x, exact erf GELU)
GroupNorm with one group normalises each sample over (C, H, W) (biased variance, eps 1e-5), then
a per-channel affine.

Paddle idioms on this side (the official PoolFormer layout):
- root `PoolFormer`: `patch_embed` (a `PatchEmbed`: child `proj` Conv2D), `network` = LayerList
  [nn.Sequential(block, block), PatchEmbed(16 -> 32, k3 s2 p1), nn.Sequential(block, block)]
  (iterated, never called itself), `norm` nn.GroupNorm(1, 32), `head` nn.Linear(32, 10); the
  global pool is an inline mean over axes [-2, -1].
- `PoolFormerBlock`: `norm1`, `token_mixer` (a `Pooling` with child `pool` =
  nn.AvgPool2D(3, 1, 1, exclusive=True), returning pool(x) - x), `norm2`, `mlp` (`ConvMlp`: 1x1
  Conv2D `fc1`, inline F.gelu, 1x1 Conv2D `fc2`, NCHW throughout), then the LayerScale
  parameters `layer_scale_1`, `layer_scale_2` [C] (create_parameter), unsqueezed to [C, 1, 1]
  inline in the forward.
- model() gives the norms, conv biases and layer scales trained-looking seeded values (rng seed
  31); real PoolFormer starts its layer scales at 1e-5, which would hide every block.

The torch side (port_poolformer_torch.py) was written independently: a hand-written GroupNorm
over (C, H, W), F.avg_pool2d inline in the mixer, the channel MLP as Linears over channels-last
with LayerScale modules, stages that own their downsampling.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_pool_include_pad -> `Pooling` builds nn.AvgPool2D(3, 1, 1, exclusive=False), reading
                             paddle's `exclusive` as if it were torch's count_include_pad: the
                             border cells divide by 9 instead of by their 4 / 6 real cells
  paddle_gelu_tanh        -> ConvMlp calls F.gelu(x, approximate=True) (tanh form) instead of the
                             exact erf GELU (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_CH, DIMS, DEPTHS, MLP_RATIO, N_CLASSES = 3, (16, 32), (2, 2), 4, 10
GN_EPS = 1e-5
BATCH, IMG = 2, 32
OWN_BUGS = {"paddle_pool_include_pad", "paddle_gelu_tanh"}
OTHER_BUGS = {"torch_var_unbiased", "torch_mlp_reshape"}


class PatchEmbed(nn.Layer):
    def __init__(self, patch_size, stride, padding, in_chans, embed_dim):
        super().__init__()
        self.proj = nn.Conv2D(in_chans, embed_dim, patch_size, stride=stride, padding=padding,
                              data_format="NCHW")

    def forward(self, x):
        return self.proj(x)


class Pooling(nn.Layer):
    def __init__(self, pool_size=3, exclusive=True):
        super().__init__()
        self.pool = nn.AvgPool2D(pool_size, stride=1, padding=pool_size // 2, exclusive=exclusive)

    def forward(self, x):
        return self.pool(x) - x


class ConvMlp(nn.Layer):
    def __init__(self, dim, hidden, approximate=False):
        super().__init__()
        self.approximate = approximate
        self.fc1 = nn.Conv2D(dim, hidden, 1)
        self.fc2 = nn.Conv2D(hidden, dim, 1)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x), approximate=self.approximate))


class PoolFormerBlock(nn.Layer):
    def __init__(self, dim, exclusive=True, approximate=False):
        super().__init__()
        self.norm1 = nn.GroupNorm(1, dim, epsilon=GN_EPS)
        self.token_mixer = Pooling(3, exclusive=exclusive)
        self.norm2 = nn.GroupNorm(1, dim, epsilon=GN_EPS)
        self.mlp = ConvMlp(dim, dim * MLP_RATIO, approximate=approximate)
        init = nn.initializer.Constant(1e-5)
        self.layer_scale_1 = self.create_parameter([dim], default_initializer=init)
        self.layer_scale_2 = self.create_parameter([dim], default_initializer=init)

    def forward(self, x):
        x = x + self.layer_scale_1.unsqueeze(-1).unsqueeze(-1) * self.token_mixer(self.norm1(x))
        x = x + self.layer_scale_2.unsqueeze(-1).unsqueeze(-1) * self.mlp(self.norm2(x))
        return x


class PoolFormer(nn.Layer):
    def __init__(self, exclusive=True, approximate=False):
        super().__init__()
        self.patch_embed = PatchEmbed(7, 4, 2, IN_CH, DIMS[0])
        network = []
        for i, (dim, depth) in enumerate(zip(DIMS, DEPTHS)):
            network.append(nn.Sequential(*[PoolFormerBlock(dim, exclusive, approximate) for _ in range(depth)]))
            if i + 1 < len(DIMS):
                network.append(PatchEmbed(3, 2, 1, dim, DIMS[i + 1]))
        self.network = nn.LayerList(network)
        self.norm = nn.GroupNorm(1, DIMS[-1], epsilon=GN_EPS)
        self.head = nn.Linear(DIMS[-1], N_CLASSES)

    def forward(self, x):
        x = self.patch_embed(x)
        for stage in self.network:
            x = stage(x)
        x = self.norm(x)
        return self.head(x.mean([-2, -1]))


def _trained_look(m):
    rng = np.random.default_rng(31)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.GroupNorm):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
        elif isinstance(layer, (nn.Conv2D, nn.Linear)):
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))
        elif isinstance(layer, PoolFormerBlock):
            for p in (layer.layer_scale_1, layer.layer_scale_2):
                p.set_value(rng.uniform(0.2, 0.9, p.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_poolformer paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = PoolFormer(exclusive=bug != "paddle_pool_include_pad", approximate=bug == "paddle_gelu_tanh")
    _trained_look(m)
    m.eval()
    return m


def _images():
    rng = np.random.default_rng(23)
    return rng.standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()

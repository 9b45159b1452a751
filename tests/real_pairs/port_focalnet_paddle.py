"""Hand-written port, paddle side: a tiny FocalNet image classifier (written by "person A").

Input: `images` [2, 3, 16, 16] (positional, NCHW, numpy rng seed 37, standard normal). Output:
logits [2, 10].

Architecture (official FocalNet, microsoft/FocalNet, channels-last tokens):
  patch_embed : Conv2D(3, 16, 2, stride 2) -> tokens [B, 64, 16] -> LayerNorm      (8 x 8)
  stage 0     : 2 FocalNetBlocks of dim 16, then downsample = PatchEmbed
                (Conv2D(16, 32, 2, stride 2) -> LayerNorm)                        (4 x 4)
  stage 1     : 1 FocalNetBlock of dim 32
  norm        : LayerNorm(32), mean over the 16 tokens, head Linear(32, 10)

FocalNetBlock (layer scale, pre-norm):
  x = x + gamma_1 * modulation(norm1(x));  x = x + gamma_2 * mlp(norm2(x))
FocalModulation (focal_level 2, focal_window 3, focal_factor 2, normalize_modulator=True):
  q | ctx | gates = f(x)                     (one fused Linear(C, 2C + 3), split C / C / 3)
  ctx_l = GELU(dwconv_l(ctx_{l-1}))          (depthwise, no bias, kernel 3 then 5)
  ctx_all = sum_l ctx_l * gates[l] + GELU(mean_hw(ctx_2)) * gates[2]
  out = proj(q * h(ctx_all / 3))             (h = 1x1 Conv2D with bias)
Mlp: fc1 (C -> 4C), GELU, fc2 (4C -> C). All GELUs are exact (erf).

Paddle idioms on this side:
- root `FocalNet`: `patch_embed`, `layers` (LayerList of `BasicLayer`, iterated), `norm`,
  `avgpool` (nn.AdaptiveAvgPool1D(1) over the token axis), `head`.
- `PatchEmbed` returns (tokens, H, W); the stage-0 `BasicLayer` owns the downsample (at its END).
- `FocalNetBlock` registers norm1, modulation, norm2, mlp, then `gamma_1` / `gamma_2`
  (create_parameter); the layer scale is inline code of the block.
- `FocalModulation`: fused `f` Linear; `focal_layers` = LayerList of nn.Sequential(depthwise
  Conv2D, nn.GELU()); the global context is inline (mean, F.gelu); `h` Conv2D 1x1 (NCHW);
  `proj` Linear. It takes [B, H, W, C] and permutes to NCHW internally.
- `Mlp`: `fc1`, `fc2` Linears with F.gelu inline (no activation module).
- model() gives LayerNorm weights / biases, the layer-scale gammas and the `h` / `f` biases
  trained-looking values (seeded), so nothing is an identity.

The torch side (port_focalnet_torch.py) was written independently (timm-like, channels-first
throughout): separate 1x1-conv q / ctx / gate projections, LayerNorm2d, 1x1-conv MLP and proj,
LayerScale modules, the downsample at the START of stage 1, a shared GELU module for the focal
levels and a global-context nn.Sequential(AdaptiveAvgPool2d, GELU).

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_layerscale_swapped -> FocalNetBlock.forward scales the modulation branch by gamma_2 and
                               the MLP branch by gamma_1 (one line pair of the block forward)
  paddle_mlp_gelu_tanh      -> Mlp.forward calls F.gelu(..., approximate=True) (the tanh
                               approximation) instead of the exact erf GELU, in every block;
                               precision-level
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_CH, EMBED_DIMS, DEPTHS = 3, (16, 32), (2, 1)
FOCAL_LEVEL, FOCAL_WINDOW, FOCAL_FACTOR = 2, 3, 2
MLP_RATIO, NUM_CLASSES = 4, 10
BATCH, IMG = 2, 16
OWN_BUGS = {"paddle_layerscale_swapped", "paddle_mlp_gelu_tanh"}
OTHER_BUGS = {"torch_ln2d_groupnorm", "torch_global_maxpool"}


class PatchEmbed(nn.Layer):
    def __init__(self, in_chans, embed_dim, patch_size=2):
        super().__init__()
        self.proj = nn.Conv2D(in_chans, embed_dim, patch_size, stride=patch_size)
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x):
        x = self.proj(x)  # [B, C, H, W]
        H, W = x.shape[2], x.shape[3]
        x = x.flatten(2).transpose([0, 2, 1])  # [B, HW, C]
        return self.norm(x), H, W


class Mlp(nn.Layer):
    def __init__(self, dim, hidden, gelu_tanh=False):
        super().__init__()
        self.gelu_tanh = gelu_tanh
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x), approximate=self.gelu_tanh))


class FocalModulation(nn.Layer):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.f = nn.Linear(dim, 2 * dim + FOCAL_LEVEL + 1)
        self.h = nn.Conv2D(dim, dim, 1, stride=1)
        self.proj = nn.Linear(dim, dim)
        self.focal_layers = nn.LayerList()
        for k in range(FOCAL_LEVEL):
            ks = FOCAL_FACTOR * k + FOCAL_WINDOW
            self.focal_layers.append(
                nn.Sequential(
                    nn.Conv2D(dim, dim, ks, stride=1, padding=ks // 2, groups=dim, bias_attr=False),
                    nn.GELU(),
                )
            )

    def forward(self, x):  # x: [B, H, W, C]
        C = x.shape[-1]
        x = self.f(x).transpose([0, 3, 1, 2])  # [B, 2C + L + 1, H, W]
        q, ctx, gates = paddle.split(x, [C, C, FOCAL_LEVEL + 1], axis=1)
        ctx_all = 0
        for level in range(FOCAL_LEVEL):
            ctx = self.focal_layers[level](ctx)
            ctx_all = ctx_all + ctx * gates[:, level:level + 1]
        ctx_global = F.gelu(ctx.mean(2, keepdim=True).mean(3, keepdim=True))
        ctx_all = ctx_all + ctx_global * gates[:, FOCAL_LEVEL:]
        ctx_all = ctx_all / (FOCAL_LEVEL + 1)  # normalize_modulator
        modulator = self.h(ctx_all)
        x_out = (q * modulator).transpose([0, 2, 3, 1])  # [B, H, W, C]
        return self.proj(x_out)


class FocalNetBlock(nn.Layer):
    def __init__(self, dim, swap_ls=False, gelu_tanh=False):
        super().__init__()
        self.swap_ls = swap_ls
        self.norm1 = nn.LayerNorm(dim)
        self.modulation = FocalModulation(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, dim * MLP_RATIO, gelu_tanh=gelu_tanh)
        init = nn.initializer.Constant(1e-4)
        self.gamma_1 = self.create_parameter([dim], default_initializer=init)
        self.gamma_2 = self.create_parameter([dim], default_initializer=init)

    def forward(self, x, H, W):
        B, _L, C = x.shape
        shortcut = x
        x = self.norm1(x).reshape([B, H, W, C])
        x = self.modulation(x).reshape([B, H * W, C])
        if self.swap_ls:
            x = shortcut + self.gamma_2 * x
            x = x + self.gamma_1 * self.mlp(self.norm2(x))
        else:
            x = shortcut + self.gamma_1 * x
            x = x + self.gamma_2 * self.mlp(self.norm2(x))
        return x


class BasicLayer(nn.Layer):
    def __init__(self, dim, depth, out_dim=None, swap_ls=False, gelu_tanh=False):
        super().__init__()
        self.blocks = nn.LayerList([FocalNetBlock(dim, swap_ls, gelu_tanh) for _ in range(depth)])
        self.downsample = PatchEmbed(dim, out_dim, 2) if out_dim is not None else None

    def forward(self, x, H, W):
        for blk in self.blocks:
            x = blk(x, H, W)
        if self.downsample is not None:
            B, _L, C = x.shape
            x = x.transpose([0, 2, 1]).reshape([B, C, H, W])
            x, H, W = self.downsample(x)
        return x, H, W


class FocalNet(nn.Layer):
    def __init__(self, swap_ls=False, gelu_tanh=False):
        super().__init__()
        self.patch_embed = PatchEmbed(IN_CH, EMBED_DIMS[0], 2)
        self.layers = nn.LayerList()
        for i, (dim, depth) in enumerate(zip(EMBED_DIMS, DEPTHS)):
            out_dim = EMBED_DIMS[i + 1] if i + 1 < len(EMBED_DIMS) else None
            self.layers.append(BasicLayer(dim, depth, out_dim, swap_ls, gelu_tanh))
        self.norm = nn.LayerNorm(EMBED_DIMS[-1])
        self.avgpool = nn.AdaptiveAvgPool1D(1)
        self.head = nn.Linear(EMBED_DIMS[-1], NUM_CLASSES)

    def forward(self, images):
        x, H, W = self.patch_embed(images)
        for layer in self.layers:
            x, H, W = layer(x, H, W)
        x = self.norm(x)  # [B, L, C]
        x = self.avgpool(x.transpose([0, 2, 1])).flatten(1)  # [B, C]
        return self.head(x)


def _trained_look(m):
    rng = np.random.default_rng(371)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
        if isinstance(layer, FocalNetBlock):
            for g in (layer.gamma_1, layer.gamma_2):
                g.set_value(rng.uniform(0.2, 0.9, g.shape).astype("float32"))
        if isinstance(layer, FocalModulation):
            layer.h.bias.set_value(rng.normal(0.0, 0.3, layer.h.bias.shape).astype("float32"))
            layer.f.bias.set_value(rng.normal(0.0, 0.3, layer.f.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_focalnet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = FocalNet(swap_ls=bug == "paddle_layerscale_swapped", gelu_tanh=bug == "paddle_mlp_gelu_tanh")
    _trained_look(m)
    m.eval()
    return m


def _images():
    rng = np.random.default_rng(37)
    return rng.standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # class logits [2, 10]
    return (output**2).mean()

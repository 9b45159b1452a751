"""Hand-written port, paddle side: a tiny ResMLP (written by "person A").

Input: `images` [2, 3, 16, 16] (positional, NCHW, numpy rng seed 31, standard normal).
Patch 4 -> 16 patches, width 24, 2 residual blocks, channel-MLP hidden 96 (exact GELU),
10 classes. Output: logits [2, 10].

One block (Touvron et al., ResMLP), x: [B, N=16, C=24]:
  x = x + ls1 * cross_patch(Aff1(x))     cross_patch = Linear(N, N) along the TOKEN axis
  x = x + ls2 * MLP(Aff2(x))             MLP = Linear(C, 4C) -> GELU -> Linear(4C, C)
Aff(x) = alpha * x + beta (per channel, no statistics); after the blocks: Aff -> mean over the
tokens -> Linear(C, 10).

Paddle idioms on this side (the official / timm layout):
- root `ResMLP`: `patch_embed` Conv2D(3, 24, 4, stride 4) (flatten / transpose inline),
  `blocks` (LayerList of `ResMLPBlock`, iterated), `norm` (Affine), `head` Linear(24, 10); the
  token average is inline.
- `Affine` is a Layer of its own: `alpha`, `beta` [24] (create_parameter).
- `ResMLPBlock` registers `norm1` (Affine), `linear_tokens` (nn.Linear(16, 16), applied to the
  transposed tensor [B, C, N] and transposed back), `norm2` (Affine), `mlp` (`Mlp`), then the
  LayerScale vectors `gamma_1`, `gamma_2` [24] (create_parameter).
- `Mlp`: `fc1`, `act` (an nn.GELU layer), `fc2`.
- model() gives the Affine alphas / betas, the LayerScale vectors and every bias
  trained-looking (non-identity, seeded) values, and the channel MLPs' fc1 a wider
  trained-looking weight (N(0, 0.35), pre-activation std ~2.6 - 3.4).

The torch side (port_resmlp_torch.py) was written independently: the Affine parameters inline in
each layer, the cross-patch mixing as an nn.Conv1d(16, 16, kernel_size=1) over the untransposed
[B, N, C] tensor (tokens as channels), the channel MLP as two Linears with F.gelu inline.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_reshape_not_transpose -> the block moves the token axis last with reshape([B, C, N]) /
                                  reshape([B, N, C]) instead of transpose, so the cross-patch
                                  Linear mixes scrambled features
  paddle_ls1_twice             -> copy-paste: the channel-MLP branch is scaled by gamma_1 (the
                                  token branch's LayerScale) instead of gamma_2
"""
import os

import numpy as np
import paddle
from paddle import nn

IMG, PATCH, IN_CH = 16, 4, 3
DIM, DEPTH, MLP_RATIO, NUM_CLASSES = 24, 2, 4, 10
NUM_PATCHES = (IMG // PATCH) ** 2
BATCH = 2
OWN_BUGS = {"paddle_reshape_not_transpose", "paddle_ls1_twice"}
OTHER_BUGS = {"torch_quick_gelu", "torch_aff2_uses_alpha1"}


class Affine(nn.Layer):
    def __init__(self, dim):
        super().__init__()
        self.alpha = self.create_parameter([dim], default_initializer=nn.initializer.Constant(1.0))
        self.beta = self.create_parameter([dim], default_initializer=nn.initializer.Constant(0.0))

    def forward(self, x):
        return self.alpha * x + self.beta


class Mlp(nn.Layer):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class ResMLPBlock(nn.Layer):
    def __init__(self, dim, num_patches, reshape_bug=False, ls1_twice=False):
        super().__init__()
        self.reshape_bug = reshape_bug
        self.ls1_twice = ls1_twice
        self.norm1 = Affine(dim)
        self.linear_tokens = nn.Linear(num_patches, num_patches)
        self.norm2 = Affine(dim)
        self.mlp = Mlp(dim, MLP_RATIO * dim)
        init = nn.initializer.Constant(0.1)
        self.gamma_1 = self.create_parameter([dim], default_initializer=init)
        self.gamma_2 = self.create_parameter([dim], default_initializer=init)

    def forward(self, x):
        b, n, c = x.shape
        y = self.norm1(x)
        if self.reshape_bug:
            y = self.linear_tokens(y.reshape([b, c, n])).reshape([b, n, c])
        else:
            y = self.linear_tokens(y.transpose([0, 2, 1])).transpose([0, 2, 1])
        x = x + self.gamma_1 * y
        gamma = self.gamma_1 if self.ls1_twice else self.gamma_2
        x = x + gamma * self.mlp(self.norm2(x))
        return x


class ResMLP(nn.Layer):
    def __init__(self, reshape_bug=False, ls1_twice=False):
        super().__init__()
        self.patch_embed = nn.Conv2D(IN_CH, DIM, PATCH, stride=PATCH, data_format="NCHW")
        self.blocks = nn.LayerList([ResMLPBlock(DIM, NUM_PATCHES, reshape_bug, ls1_twice) for _ in range(DEPTH)])
        self.norm = Affine(DIM)
        self.head = nn.Linear(DIM, NUM_CLASSES)

    def forward(self, images):
        x = self.patch_embed(images).flatten(2).transpose([0, 2, 1])  # [B, 16, 24]
        for blk in self.blocks:
            x = blk(x)
        x = self.norm(x)
        return self.head(x.mean(axis=1))


def _trained_look(m):
    rng = np.random.default_rng(37)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, Affine):
            layer.alpha.set_value(rng.uniform(0.6, 1.4, DIM).astype("float32"))
            layer.beta.set_value(rng.normal(0.0, 0.3, DIM).astype("float32"))
        elif isinstance(layer, nn.Linear):
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))
        elif isinstance(layer, Mlp):
            # trained channel MLPs have wider pre-activations than the xavier init gives
            layer.fc1.weight.set_value(rng.normal(0.0, 0.35, layer.fc1.weight.shape).astype("float32"))
        elif isinstance(layer, ResMLPBlock):
            layer.gamma_1.set_value(rng.uniform(0.1, 0.5, DIM).astype("float32"))
            layer.gamma_2.set_value(rng.uniform(0.1, 0.5, DIM).astype("float32"))
    m.patch_embed.bias.set_value(rng.normal(0.0, 0.1, DIM).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_resmlp paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = ResMLP(reshape_bug=bug == "paddle_reshape_not_transpose", ls1_twice=bug == "paddle_ls1_twice")
    _trained_look(m)
    m.eval()
    return m


def _image():
    rng = np.random.default_rng(31)
    return rng.standard_normal((BATCH, IN_CH, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_image()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()

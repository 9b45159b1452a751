"""Hand-written port, paddle side: a tiny XCiT (written by "person A").

Written after the facebookresearch XCiT code, by hand. Sizes: 32x32 RGB images, a conv patch
embedding (3x3 stride-2 conv + BN, GELU, 3x3 stride-2 conv + BN: 3 -> 16 -> 32) giving an 8x8
token grid of width 32, plus a Fourier positional encoding (hidden 8 per axis: 16 sin / cos
features, 1x1 conv to 32); 2 XCA blocks (4 heads of 8 channels, MLP 32 -> 64 -> 32), final
LayerNorm, mean over the tokens, Linear(32, 10): logits [2, 10]. LayerNorm eps 1e-6, exact GELU.

One XCA block (LayerScale on every branch):
  x = x + gamma1 * XCA(norm1(x))
  x = x + gamma3 * LPI(norm3(x), H, W)
  x = x + gamma2 * MLP(norm2(x))
XCA (cross-covariance attention): q, k, v per head as [B, h, c, N] (channels x tokens); q and
k are L2-normalised over the TOKENS; attn = softmax(q k^T * temperature[h]) is [c, c]; out =
attn v, back to [B, N, C], proj. LPI: depthwise 3x3 conv, GELU, BN, depthwise 3x3 conv on the
8x8 token grid.

Paddle idioms on this side:
- root `XCiT`: `patch_embed` (`ConvPatchEmbed`, `proj` = nn.Sequential(conv3x3, nn.GELU,
  conv3x3), conv3x3 = nn.Sequential(Conv2D no bias, BatchNorm2D)), `pos_embeder`
  (`PositionalEncodingFourier`: the sin / cos features computed inline in every forward(B, H, W),
  then `token_projection` Conv2D(16, 32, 1)), `blocks` (LayerList, iterated), `norm`, `head`.
- `XCABlock` registers `norm1`, `attn`, `norm3`, `local_mp`, `norm2`, `mlp` (the official
  names: norm3 / gamma3 belong to the LPI branch, which runs SECOND), then the LayerScale vectors
  `gamma1`, `gamma3`, `gamma2` as raw parameters (create_parameter), multiplied inline.
- `XCA`: SEPARATE `q_proj`, `k_proj`, `v_proj` Linear(32, 32) (with bias), `proj`, and the
  `temperature` parameter [heads, 1, 1] (a plain multiplier).
- `LPI`: `conv1` (depthwise, bias), `act` (nn.GELU module), `bn` (BatchNorm2D), `conv2`.
- `Mlp`: `fc1`, `fc2`, with F.gelu inline.
- model() gives the BN / LayerNorm layers trained-looking values, the temperatures U(0.5, 2) and
  the LayerScale vectors U(0.3, 1.0) (seeded), so that nothing is an identity.

The torch side (port_xcit_torch.py) was written independently (timm-like): a stem module with
inline GELU, a precomputed Fourier-feature buffer with a Linear projection, a fused qkv, the
temperature kept in LOG space (see port_xcit_hook.py), LayerScale modules and the block's
norms numbered in call order.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_xca_norm_channels -> XCA L2-normalises q and k over the channel axis (before the
                              transpose to [B, h, c, N]) instead of over the tokens
  paddle_fourier_scale_628 -> the Fourier encoding's scale is hard-coded as 6.28 instead of
                              2 * pi (precision-level: every angle is 5.1e-4 relative too small)
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IMG, DIM, HEADS, N_CLASSES, BATCH, DEPTH = 32, 32, 4, 10, 2, 2
POS_HIDDEN = 8
OWN_BUGS = {"paddle_xca_norm_channels", "paddle_fourier_scale_628"}
OTHER_BUGS = {"torch_lpi_bn_before_act", "torch_fourier_no_floor"}


def conv3x3(a, b, stride=2):
    return nn.Sequential(nn.Conv2D(a, b, 3, stride, 1, bias_attr=False), nn.BatchNorm2D(b))


class ConvPatchEmbed(nn.Layer):
    def __init__(self, embed_dim=DIM):
        super().__init__()
        self.proj = nn.Sequential(conv3x3(3, embed_dim // 2), nn.GELU(), conv3x3(embed_dim // 2, embed_dim))

    def forward(self, x):
        x = self.proj(x)
        Hp, Wp = x.shape[2], x.shape[3]
        return x.flatten(2).transpose([0, 2, 1]), (Hp, Wp)


class PositionalEncodingFourier(nn.Layer):
    def __init__(self, hidden_dim=POS_HIDDEN, dim=DIM, temperature=10000, scale_628=False):
        super().__init__()
        self.token_projection = nn.Conv2D(hidden_dim * 2, dim, 1)
        self.scale = 6.28 if scale_628 else 2 * math.pi
        self.temperature, self.hidden_dim = temperature, hidden_dim

    def forward(self, B, H, W):
        not_mask = paddle.ones([B, H, W], dtype="float32")
        y_embed = not_mask.cumsum(1)
        x_embed = not_mask.cumsum(2)
        eps = 1e-6
        y_embed = y_embed / (y_embed[:, -1:, :] + eps) * self.scale
        x_embed = x_embed / (x_embed[:, :, -1:] + eps) * self.scale
        dim_t = paddle.arange(self.hidden_dim, dtype="float32")
        dim_t = self.temperature ** (2 * paddle.floor(dim_t / 2) / self.hidden_dim)
        pos_x = x_embed.unsqueeze(-1) / dim_t
        pos_y = y_embed.unsqueeze(-1) / dim_t
        pos_x = paddle.stack([pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()], axis=4).flatten(3)
        pos_y = paddle.stack([pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()], axis=4).flatten(3)
        pos = paddle.concat([pos_y, pos_x], axis=3).transpose([0, 3, 1, 2])
        return self.token_projection(pos)


class XCA(nn.Layer):
    def __init__(self, dim, num_heads, norm_channels=False):
        super().__init__()
        self.num_heads, self.norm_channels = num_heads, norm_channels
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)
        self.temperature = self.create_parameter([num_heads, 1, 1], default_initializer=nn.initializer.Constant(1.0))

    def forward(self, x):
        B, N, C = x.shape
        h = self.num_heads
        q = self.q_proj(x).reshape([B, N, h, C // h])
        k = self.k_proj(x).reshape([B, N, h, C // h])
        v = self.v_proj(x).reshape([B, N, h, C // h]).transpose([0, 2, 3, 1])
        if self.norm_channels:
            q, k = F.normalize(q, axis=-1), F.normalize(k, axis=-1)
            q, k = q.transpose([0, 2, 3, 1]), k.transpose([0, 2, 3, 1])
        else:
            q, k = q.transpose([0, 2, 3, 1]), k.transpose([0, 2, 3, 1])  # [B, h, c, N]
            q, k = F.normalize(q, axis=-1), F.normalize(k, axis=-1)
        attn = paddle.matmul(q, k, transpose_y=True) * self.temperature
        attn = F.softmax(attn, axis=-1)
        x = paddle.matmul(attn, v).transpose([0, 3, 1, 2]).reshape([B, N, C])
        return self.proj(x)


class LPI(nn.Layer):
    def __init__(self, dim):
        super().__init__()
        self.conv1 = nn.Conv2D(dim, dim, 3, padding=1, groups=dim)
        self.act = nn.GELU()
        self.bn = nn.BatchNorm2D(dim)
        self.conv2 = nn.Conv2D(dim, dim, 3, padding=1, groups=dim)

    def forward(self, x, H, W):
        B, N, C = x.shape
        x = x.transpose([0, 2, 1]).reshape([B, C, H, W])
        x = self.conv2(self.bn(self.act(self.conv1(x))))
        return x.reshape([B, C, N]).transpose([0, 2, 1])


class Mlp(nn.Layer):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class XCABlock(nn.Layer):
    def __init__(self, dim, num_heads, norm_channels=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, epsilon=1e-6)
        self.attn = XCA(dim, num_heads, norm_channels)
        self.norm3 = nn.LayerNorm(dim, epsilon=1e-6)
        self.local_mp = LPI(dim)
        self.norm2 = nn.LayerNorm(dim, epsilon=1e-6)
        self.mlp = Mlp(dim, dim * 2)
        one = nn.initializer.Constant(1.0)
        self.gamma1 = self.create_parameter([dim], default_initializer=one)
        self.gamma3 = self.create_parameter([dim], default_initializer=one)
        self.gamma2 = self.create_parameter([dim], default_initializer=one)

    def forward(self, x, H, W):
        x = x + self.gamma1 * self.attn(self.norm1(x))
        x = x + self.gamma3 * self.local_mp(self.norm3(x), H, W)
        x = x + self.gamma2 * self.mlp(self.norm2(x))
        return x


class XCiT(nn.Layer):
    def __init__(self, norm_channels=False, scale_628=False):
        super().__init__()
        self.patch_embed = ConvPatchEmbed(DIM)
        self.pos_embeder = PositionalEncodingFourier(POS_HIDDEN, DIM, scale_628=scale_628)
        self.blocks = nn.LayerList([XCABlock(DIM, HEADS, norm_channels) for _ in range(DEPTH)])
        self.norm = nn.LayerNorm(DIM, epsilon=1e-6)
        self.head = nn.Linear(DIM, N_CLASSES)

    def forward(self, x):
        B = x.shape[0]
        x, (Hp, Wp) = self.patch_embed(x)
        pos = self.pos_embeder(B, Hp, Wp).reshape([B, -1, x.shape[1]]).transpose([0, 2, 1])
        x = x + pos
        for blk in self.blocks:
            x = blk(x, Hp, Wp)
        x = self.norm(x)
        return self.head(x.mean(1))


def _trained_look(m):
    rng = np.random.default_rng(41)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))
        if isinstance(layer, nn.LayerNorm):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.7, 1.3, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
        if isinstance(layer, XCA):
            layer.temperature.set_value(rng.uniform(0.5, 2.0, [HEADS, 1, 1]).astype("float32"))
        if isinstance(layer, XCABlock):
            for g in (layer.gamma1, layer.gamma3, layer.gamma2):
                g.set_value(rng.uniform(0.3, 1.0, DIM).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_xcit paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = XCiT(norm_channels=bug == "paddle_xca_norm_channels", scale_628=bug == "paddle_fourier_scale_628")
    _trained_look(m)
    m.eval()
    return m


def _images():
    return np.random.default_rng(43).standard_normal((BATCH, 3, IMG, IMG)).astype("float32")


def inputs():
    return (paddle.to_tensor(_images()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()

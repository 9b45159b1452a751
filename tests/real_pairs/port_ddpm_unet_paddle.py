"""Hand-written port, paddle side: a tiny DDPM noise-prediction U-Net (written by "person A").

Inputs (positional): a noisy image `x` [2, 3, 16, 12] (NCHW, numpy rng seed 31, standard normal)
and integer timesteps `t` [2] = [17, 642] (int64). Output: the predicted noise [2, 3, 16, 12].

Shared architecture (both sides, Ho et al. 2020 layout, tiny):
- time embedding: sinusoidal, 16 dims, [sin | cos] with frequencies
  exp(-log(10000) * k / (8 - 1)), k = 0..7; then Linear(16, 64) -> SiLU -> Linear(64, 64);
- ResBlock(in, out): h = conv3x3(SiLU(GN(x))); h += Linear(SiLU(temb))[:, :, None, None];
  h = conv3x3(SiLU(GN(h))); return shortcut(x) + h, shortcut = 1x1 conv when in != out;
- GroupNorm: 8 groups, eps 1e-6 (DDPM's Normalize), affine;
- down-sampling: pad (0, 1, 0, 1) (bottom / right only) then conv 3x3 stride 2, no padding;
- up-sampling: nearest x2 then conv 3x3 pad 1;
- self-attention (1 head, C ** -0.5 scale, q / k / v / out projections with bias) with a
  pre-GroupNorm and a residual, at the lowest resolution only;
- layout: conv_in 3 -> 16 (16 x 12); ResBlock 16 -> 16 (skip s0), down (8 x 6); ResBlock
  16 -> 32 (skip s1), down (4 x 3); mid ResBlock 32 -> 32, attention, ResBlock 32 -> 32; up
  (8 x 6), concat s1, ResBlock 64 -> 32; up (16 x 12), concat s0, ResBlock 48 -> 16; GN, SiLU,
  conv_out 16 -> 3.

Paddle idioms on this side (the original DDPM / pesser `diffusion` code layout):
- root `DDPMUNet` registers `time_embed` (a `TimeEmbedding` layer: the sinusoid is a module-level
  helper `get_timestep_embedding` called inline, then `dense0`, `dense1` with F.silu inline),
  `conv_in`, `down_blocks` / `downsamplers` (LayerLists), `mid_block1`, `mid_attn`, `mid_block2`,
  `upsamplers` / `up_blocks` (LayerLists), `norm_out`, `conv_out`. The skip concatenation and
  the output SiLU are inline.
- `GroupNorm` is HAND-WRITTEN (create_parameter `weight`, `bias`; reshape to [B, 8, -1],
  mean, paddle.var(unbiased=False), eps 1e-6); the helper `Normalize(c)` builds it.
- `ResnetBlock(x, temb)` takes the FULL [B, 64] time embedding and owns its projection
  `temb_proj` Linear(64, out) (SiLU inline before it).
- `Downsample` is ONE Conv2D(c, c, 3, stride=2, padding=[0, 1, 0, 1]) (paddle's 4-element
  padding: top, bottom, left, right).
- `Upsample` = F.interpolate(nearest) inline, then its `conv`.
- `AttnBlock` (DDPM NIN style): `norm`, then FOUR 1x1 Conv2D `q`, `k`, `v`, `proj_out`;
  bmm / softmax on [B, C, H*W].
- model() gives the GroupNorms trained-looking affine weights and every conv / Linear bias a
  trained-looking value (seeded); paddle initialises biases to zero.

The torch side (port_ddpm_unet_torch.py) was written independently in the style of lucidrains'
denoising-diffusion-pytorch: an nn.Sequential time MLP with a SinusoidalPosEmb module, ONE packed
Linear projecting the time embedding for all six ResBlocks at once (sliced in the root forward),
nn.MultiheadAttention for the attention block, F.pad + conv for the down-sampling.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_temb_cos_sin  -> get_timestep_embedding concatenates [cos | sin] instead of [sin | cos]
                          (the tensor2tensor order)
  paddle_gn_unbiased_var -> the hand-written GroupNorm takes the group variance with
                          paddle.var's default unbiased=True (divides by N - 1): every normalised
                          value is scaled by sqrt((N - 1) / N), N = channels per group * H * W
                          (384 at 16 x 12 ... 48 at 4 x 3), in every GroupNorm (precision-level)
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

BATCH, IMG_H, IMG_W = 2, 16, 12
CH, TEMB_IN, TEMB_CH, GROUPS = 16, 16, 64, 8
GN_EPS = 1e-6
TIMESTEPS = (17, 642)
OWN_BUGS = {"paddle_temb_cos_sin", "paddle_gn_unbiased_var"}
OTHER_BUGS = {"torch_down_pad_symmetric", "torch_attn_reshape_no_transpose"}

def get_timestep_embedding(timesteps, embedding_dim, cos_first=False):
    half_dim = embedding_dim // 2
    emb = math.log(10000) / (half_dim - 1)
    emb = paddle.exp(paddle.arange(half_dim, dtype="float32") * -emb)
    emb = timesteps.astype("float32")[:, None] * emb[None, :]
    if cos_first:
        return paddle.concat([paddle.cos(emb), paddle.sin(emb)], axis=1)
    return paddle.concat([paddle.sin(emb), paddle.cos(emb)], axis=1)


class GroupNorm(nn.Layer):
    """Hand-written GroupNorm (8 groups, eps 1e-6, per-channel affine), statistics in float32."""

    def __init__(self, num_groups, num_channels, eps=GN_EPS, unbiased=False):
        super().__init__()
        self.num_groups, self.eps, self.unbiased = num_groups, eps, unbiased
        self.weight = self.create_parameter([num_channels], default_initializer=nn.initializer.Constant(1.0))
        self.bias = self.create_parameter([num_channels], is_bias=True)

    def forward(self, x):
        b, c, h, w = x.shape
        g = x.reshape([b, self.num_groups, -1])
        mean = g.mean(axis=-1, keepdim=True)
        if self.unbiased:
            var = paddle.var(g, axis=-1, keepdim=True)
        else:
            var = paddle.var(g, axis=-1, keepdim=True, unbiased=False)
        g = (g - mean) / paddle.sqrt(var + self.eps)
        return g.reshape([b, c, h, w]) * self.weight[None, :, None, None] + self.bias[None, :, None, None]


def Normalize(channels, unbiased=False):
    return GroupNorm(GROUPS, channels, eps=GN_EPS, unbiased=unbiased)


class TimeEmbedding(nn.Layer):
    def __init__(self, cos_first=False):
        super().__init__()
        self.cos_first = cos_first
        self.dense0 = nn.Linear(TEMB_IN, TEMB_CH)
        self.dense1 = nn.Linear(TEMB_CH, TEMB_CH)

    def forward(self, t):
        temb = get_timestep_embedding(t, TEMB_IN, self.cos_first)
        return self.dense1(F.silu(self.dense0(temb)))


class ResnetBlock(nn.Layer):
    def __init__(self, in_channels, out_channels, unbiased=False):
        super().__init__()
        self.norm1 = Normalize(in_channels, unbiased)
        self.conv1 = nn.Conv2D(in_channels, out_channels, 3, padding=1)
        self.temb_proj = nn.Linear(TEMB_CH, out_channels)
        self.norm2 = Normalize(out_channels, unbiased)
        self.conv2 = nn.Conv2D(out_channels, out_channels, 3, padding=1)
        self.nin_shortcut = nn.Conv2D(in_channels, out_channels, 1) if in_channels != out_channels else None

    def forward(self, x, temb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb_proj(F.silu(temb))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        if self.nin_shortcut is not None:
            x = self.nin_shortcut(x)
        return x + h


class Downsample(nn.Layer):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2D(channels, channels, 3, stride=2, padding=[0, 1, 0, 1])

    def forward(self, x):
        return self.conv(x)


class Upsample(nn.Layer):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2D(channels, channels, 3, padding=1)

    def forward(self, x):
        return self.conv(F.interpolate(x, scale_factor=2, mode="nearest"))


class AttnBlock(nn.Layer):
    def __init__(self, channels, unbiased=False):
        super().__init__()
        self.norm = Normalize(channels, unbiased)
        self.q = nn.Conv2D(channels, channels, 1)
        self.k = nn.Conv2D(channels, channels, 1)
        self.v = nn.Conv2D(channels, channels, 1)
        self.proj_out = nn.Conv2D(channels, channels, 1)

    def forward(self, x):
        h_ = self.norm(x)
        q, k, v = self.q(h_), self.k(h_), self.v(h_)
        b, c, h, w = q.shape
        q = q.reshape([b, c, h * w]).transpose([0, 2, 1])  # [B, HW, C]
        k = k.reshape([b, c, h * w])  # [B, C, HW]
        w_ = paddle.bmm(q, k) * (int(c) ** (-0.5))  # [B, HW(query), HW(key)]
        w_ = F.softmax(w_, axis=2)
        v = v.reshape([b, c, h * w])
        h_ = paddle.bmm(v, w_.transpose([0, 2, 1]))  # [B, C, HW(query)]
        h_ = self.proj_out(h_.reshape([b, c, h, w]))
        return x + h_


class DDPMUNet(nn.Layer):
    def __init__(self, cos_first=False, unbiased=False):
        super().__init__()
        e = unbiased
        self.time_embed = TimeEmbedding(cos_first)
        self.conv_in = nn.Conv2D(3, CH, 3, padding=1)
        self.down_blocks = nn.LayerList([ResnetBlock(CH, CH, e), ResnetBlock(CH, 2 * CH, e)])
        self.downsamplers = nn.LayerList([Downsample(CH), Downsample(2 * CH)])
        self.mid_block1 = ResnetBlock(2 * CH, 2 * CH, e)
        self.mid_attn = AttnBlock(2 * CH, e)
        self.mid_block2 = ResnetBlock(2 * CH, 2 * CH, e)
        self.upsamplers = nn.LayerList([Upsample(2 * CH), Upsample(2 * CH)])
        self.up_blocks = nn.LayerList([ResnetBlock(4 * CH, 2 * CH, e), ResnetBlock(3 * CH, CH, e)])
        self.norm_out = Normalize(CH, e)
        self.conv_out = nn.Conv2D(CH, 3, 3, padding=1)

    def forward(self, x, t):
        temb = self.time_embed(t)
        h = self.conv_in(x)
        skips = []
        for block, down in zip(self.down_blocks, self.downsamplers):
            h = block(h, temb)
            skips.append(h)
            h = down(h)
        h = self.mid_block1(h, temb)
        h = self.mid_attn(h)
        h = self.mid_block2(h, temb)
        for up, block in zip(self.upsamplers, self.up_blocks):
            h = up(h)
            h = block(paddle.concat([h, skips.pop()], axis=1), temb)
        return self.conv_out(F.silu(self.norm_out(h)))


def _trained_look(m):
    rng = np.random.default_rng(41)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, GroupNorm):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
        elif isinstance(layer, (nn.Conv2D, nn.Linear)) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_ddpm_unet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = DDPMUNet(cos_first=bug == "paddle_temb_cos_sin", unbiased=bug == "paddle_gn_unbiased_var")
    _trained_look(m)
    m.eval()
    return m


def _noisy():
    return np.random.default_rng(31).standard_normal((BATCH, 3, IMG_H, IMG_W)).astype("float32")


def inputs():
    return (paddle.to_tensor(_noisy()), paddle.to_tensor(np.array(TIMESTEPS, dtype="int64"))), {}


def loss(output):
    # predicted noise [2, 3, 16, 12]
    return (output**2).mean()

"""Hand-written port, paddle side: a PatchTST-style forecaster (written by "person A").

Input: one positional tensor `x` [2, 32, 3] (batch, time, channels; float32, built from numpy rng
seed 11: per-channel sinusoid + trend + noise, with channel offsets ~ 5 and scales 0.5 - 3, so the
instance normalisation matters). Output: the forecast [2, 12, 3] (12 future steps per channel).

Shared math (both sides):
- RevIN: per series (batch, channel), mean and biased std over time, std = sqrt(var + 1e-5);
  x_n = (x - mean) / std * gamma + beta (gamma / beta learnable, one per channel); at the end
  y = (y - beta) / (gamma + 1e-10) * std + mean.
- patching, channel-independent: every channel is its own series; it is padded at the end by
  repeating its last value 4 times (32 -> 36), then cut into 8 overlapping patches of length 8,
  stride 4.
- patch embedding Linear(8 -> 16) plus a learned position table [8, 16].
- 2 post-norm encoder layers (d_model 16, 4 heads of 4, FFN 32 with exact (erf) GELU), each
  sub-layer followed by a BatchNorm over d_model (eps 1e-5, eval: running statistics):
  z = BN1(z + attn(z)); z = BN2(z + ffn(z)).
- flatten head per channel (shared over channels): Linear(8 * 16 -> 12).

Paddle idioms on this side:
- `PatchTSTForecaster` registers `revin`, `patch_embed`, `encoder` (LayerList of `TSTLayer`) and
  `head` (Linear(128, 12)).
- `RevIN` keeps `gamma`, `beta` [3] (create_parameter); its forward returns the TUPLE
  (x_n, mean, std); the inverse is a plain method `revin.denormalize(y, mean, std)` called by the
  root forward (so it is NOT a module call).
- channels are folded into the batch FIRST: [B, L, C] -> [B, C, L] -> [B*C, L]; `PatchEmbed`
  pads with F.pad(mode="replicate") on a [B*C, 1, L] view and cuts the patches with
  F.unfold (im2col, kernel [1, 8], stride [1, 4]) on a [B*C, 1, 1, 36] image -> [B*C, 8, 8
  patches], transposed to [B*C, 8 patches, 8]; `proj` Linear(8, 16) and `pos_embed` [1, 8, 16].
  (Not Tensor.unfold: in paddle 3.3.1 its backward does not accumulate the gradient of
  overlapping windows, so training through it would silently differ.)
- `TSTLayer` registers `attn`, `linear1`, `linear2`, `norm1`, `norm2`; the FFN is inline
  (linear1 -> F.gelu -> linear2); the norms are nn.BatchNorm1D(16, data_format="NLC") applied to
  [B*C, N, d] directly.
- `PatchAttention`: ONE fused `qkv` Linear(16, 48) (q | k | v blocks of 16 columns) and `proj`;
  scale 1/sqrt(4), softmax inline.
- the head flattens each channel's [N, d] = [8, 16] map PATCH-MAJOR (index n * 16 + j); the torch
  side flattens [d, N] (dim-major), so the head weight is permuted (port_patchtst_hook.py).
- model() gives the BatchNorms (affine and running statistics), RevIN, the Linear biases and the
  position table trained-looking (seeded, non-identity / non-zero) values.

The torch side (port_patchtst_torch.py) was written independently, in the style of the original
PatchTST code (nn.ReplicationPad1d module, reshape-based patching, separate W_Q / W_K / W_V, a
scaled-dot-product submodule, Transpose-BatchNorm1d-Transpose norms, RevIN called twice).

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_revin_unbiased_var -> RevIN takes paddle.var(...) with its DEFAULT unbiased=True (divides
                               by L - 1 = 31, torch's var(unbiased=False) divides by 32): the std
                               is 1.6 % larger
  paddle_patch_pad_constant -> PatchEmbed pads the series end with F.pad's default
                               mode="constant" (zeros) instead of mode="replicate"
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

SEQ_LEN, N_VARS, PRED_LEN = 32, 3, 12
PATCH_LEN, STRIDE = 8, 4
N_PATCHES = (SEQ_LEN + STRIDE - PATCH_LEN) // STRIDE + 1  # 8
D_MODEL, N_HEADS, D_FF, N_LAYERS = 16, 4, 32, 2
REVIN_EPS = 1e-5
BATCH = 2
OWN_BUGS = {"paddle_revin_unbiased_var", "paddle_patch_pad_constant"}
OTHER_BUGS = {"torch_gelu_tanh", "torch_attn_scale_d_model"}


class RevIN(nn.Layer):
    def __init__(self, num_channels, eps=REVIN_EPS, unbiased=False):
        super().__init__()
        self.eps, self.unbiased = eps, unbiased
        self.gamma = self.create_parameter([num_channels], default_initializer=nn.initializer.Constant(1.0))
        self.beta = self.create_parameter([num_channels], default_initializer=nn.initializer.Constant(0.0))

    def forward(self, x):  # x [B, L, C]
        mean = paddle.mean(x, axis=1, keepdim=True)
        if self.unbiased:
            var = paddle.var(x, axis=1, keepdim=True)
        else:
            var = paddle.var(x, axis=1, keepdim=True, unbiased=False)
        std = paddle.sqrt(var + self.eps)
        x = (x - mean) / std
        return x * self.gamma + self.beta, mean, std

    def denormalize(self, y, mean, std):  # y [B, P, C]
        y = (y - self.beta) / (self.gamma + self.eps * self.eps)
        return y * std + mean


class PatchEmbed(nn.Layer):
    def __init__(self, pad_mode="replicate"):
        super().__init__()
        self.pad_mode = pad_mode
        self.proj = nn.Linear(PATCH_LEN, D_MODEL)
        self.pos_embed = self.create_parameter(
            [1, N_PATCHES, D_MODEL], default_initializer=nn.initializer.Uniform(-0.02, 0.02))

    def forward(self, series):  # series [B*C, L]
        if self.pad_mode == "replicate":
            padded = F.pad(series.unsqueeze(1), [0, STRIDE], mode="replicate", data_format="NCL")
        else:
            padded = F.pad(series.unsqueeze(1), [0, STRIDE], data_format="NCL")
        # im2col over a [B*C, 1, 1, L + stride] image: [B*C, P, N] -> [B*C, N, P]
        cols = F.unfold(padded.unsqueeze(2), kernel_sizes=[1, PATCH_LEN], strides=[1, STRIDE])
        return self.proj(cols.transpose([0, 2, 1])) + self.pos_embed


class PatchAttention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.head_dim = D_MODEL // N_HEADS
        self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
        self.proj = nn.Linear(D_MODEL, D_MODEL)

    def forward(self, x):  # [BC, N, d]
        bc, n, _ = x.shape
        q, k, v = paddle.split(self.qkv(x), 3, axis=-1)
        q = q.reshape([bc, n, N_HEADS, self.head_dim]).transpose([0, 2, 1, 3])
        k = k.reshape([bc, n, N_HEADS, self.head_dim]).transpose([0, 2, 1, 3])
        v = v.reshape([bc, n, N_HEADS, self.head_dim]).transpose([0, 2, 1, 3])
        scores = paddle.matmul(q, k, transpose_y=True) / (self.head_dim**0.5)
        out = paddle.matmul(F.softmax(scores, axis=-1), v)
        return self.proj(out.transpose([0, 2, 1, 3]).reshape([bc, n, D_MODEL]))


class TSTLayer(nn.Layer):
    def __init__(self):
        super().__init__()
        self.attn = PatchAttention()
        self.linear1 = nn.Linear(D_MODEL, D_FF)
        self.linear2 = nn.Linear(D_FF, D_MODEL)
        self.norm1 = nn.BatchNorm1D(D_MODEL, data_format="NLC")
        self.norm2 = nn.BatchNorm1D(D_MODEL, data_format="NLC")

    def forward(self, z):
        z = self.norm1(z + self.attn(z))
        return self.norm2(z + self.linear2(F.gelu(self.linear1(z))))


class PatchTSTForecaster(nn.Layer):
    def __init__(self, unbiased=False, pad_mode="replicate"):
        super().__init__()
        self.revin = RevIN(N_VARS, unbiased=unbiased)
        self.patch_embed = PatchEmbed(pad_mode)
        self.encoder = nn.LayerList([TSTLayer() for _ in range(N_LAYERS)])
        self.head = nn.Linear(N_PATCHES * D_MODEL, PRED_LEN)

    def forward(self, x):  # [B, L, C]
        b, length, c = x.shape
        xn, mean, std = self.revin(x)
        z = xn.transpose([0, 2, 1]).reshape([b * c, length])  # channel-independent series
        z = self.patch_embed(z)  # [B*C, N, d]
        for layer in self.encoder:
            z = layer(z)
        y = self.head(z.reshape([b, c, N_PATCHES * D_MODEL]))  # patch-major flatten -> [B, C, P]
        return self.revin.denormalize(y.transpose([0, 2, 1]), mean, std)  # [B, P, C]


def _trained_look(m):
    rng = np.random.default_rng(23)
    m.revin.gamma.set_value(rng.uniform(0.7, 1.3, N_VARS).astype("float32"))
    m.revin.beta.set_value(rng.normal(0.0, 0.2, N_VARS).astype("float32"))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm1D):
            layer.weight.set_value(rng.uniform(0.6, 1.4, D_MODEL).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, D_MODEL).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, D_MODEL).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, D_MODEL).astype("float32"))
        if isinstance(layer, nn.Linear):  # paddle initialises Linear biases to zero
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))
    m.patch_embed.pos_embed.set_value(rng.normal(0.0, 0.3, (1, N_PATCHES, D_MODEL)).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_patchtst paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = PatchTSTForecaster(unbiased=bug == "paddle_revin_unbiased_var",
                           pad_mode="constant" if bug == "paddle_patch_pad_constant" else "replicate")
    _trained_look(m)
    m.eval()
    return m


def _series():
    rng = np.random.default_rng(11)
    t = np.arange(SEQ_LEN, dtype=np.float64)[None, :, None]
    offset = rng.normal(5.0, 2.0, (BATCH, 1, N_VARS))
    scale = rng.uniform(0.5, 3.0, (BATCH, 1, N_VARS))
    period = rng.uniform(6.0, 14.0, (BATCH, 1, N_VARS))
    trend = rng.normal(0.0, 0.05, (BATCH, 1, N_VARS))
    x = offset + scale * np.sin(2 * np.pi * t / period) + trend * t + 0.3 * rng.standard_normal((BATCH, SEQ_LEN, N_VARS))
    return x.astype("float32")


def inputs():
    return (paddle.to_tensor(_series()),), {}


def loss(output):
    # forecast [2, 12, 3]
    return (output**2).mean()

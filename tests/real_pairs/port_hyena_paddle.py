"""Hand-written port, paddle side: a tiny Hyena-style long-convolution LM (written by "person A").

Written after the safari reference (HyenaOperator / HyenaFilter / PositionalEmbedding /
ExponentialModulation), order 2. Sizes: vocab 64, d_model 32, sequence length 16, batch 2,
2 blocks, short filter kernel 3, implicit-filter positional table of width 5 (t + 2 bands of
real / imaginary parts), implicit-filter MLP width 16, pre-LayerNorm blocks (eps 1e-5) with an
MLP 32 -> 64 -> 32 (erf GELU), a final LayerNorm and an UNTIED LM head `lm_head` (no bias).

Paddle idioms on this side:
- root `HyenaLM`: `embedding`, `blocks` = LayerList of `Block`, `norm_f`, `lm_head`.
- `Block` registers `mixer` and `mlp` BEFORE `norm1` / `norm2` (call order: norm1, mixer, norm2,
  mlp); `Mlp` has `fc1`, `fc2` and F.gelu inline.
- `HyenaOperator` (safari order of registration): `in_proj` Linear(32, 96) whose 3 column blocks
  are (x0 | x1 | v), `out_proj`, `short_filter` = nn.Conv1D(96, 96, 3, groups=96, padding=2)
  whose output is TRIMMED to the first L steps, `filter_fn` (HyenaFilter). y = x0 * (h * (x1 * v))
  where "h *" is the causal long convolution with the implicit filter h.
- `HyenaFilter`: `bias` [32] (create_parameter, the skip term D of the long conv), `pos_emb`
  (PositionalEmbedding: the sinusoidal table `z` [1, 16, 5] and `t` [1, 16, 1] are NON-TRAINABLE
  BUFFERS computed once with numpy in __init__), `implicit_filter` = Sequential(Linear(5, 16),
  Sin, Linear(16, 16), Sin, Linear(16, 32, no bias)) where, as in safari, the SAME Sin layer
  object (one trainable `freq` [1, 16]) is used at index 1 and 3, and `modulation`
  (ExponentialModulation: buffer `deltas` [1, 1, 32], h * (exp(-t * |deltas|) + shift)).
  `filter_fn.filter(L)` (a method, not forward) builds the kernel; `filter_fn(v, L, k=, bias=)`
  (forward) does the long convolution by FFT: paddle.fft.rfft / irfft padded to 2L, then + v * bias.
- initialisers chosen so that the mixer matters next to the residual stream: embedding
  Normal(0, 0.3), short_filter weight Normal(0, 0.5), out_proj weight Normal(0, 0.3), bias
  Normal(0, 1); the rest are paddle's defaults.

The torch side (port_hyena_torch.py) was written independently: packed projection in the order
(v | x1 | x2), F.pad + unpadded conv, the table and decay recomputed in every forward, two
separate Sine modules, and a DIRECT causal convolution (F.conv1d with the flipped kernel) instead
of the FFT.

PADIFF_BUG=paddle_fft_circular plants this side's bug: the FFT size is L instead of 2L, so the
long convolution is circular (the last steps wrap around onto the first ones). The torch side's
bug names are accepted and ignored; any other name raises ValueError.
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, D_MODEL, SEQ, BATCH, N_LAYER = 64, 32, 16, 2, 2
EMB_DIM, FILTER_ORDER, SHORT_K = 5, 16, 3
FAST_DECAY_PCT, SLOW_DECAY_PCT, TARGET, SHIFT = 0.3, 1.5, 1e-2, 0.05
OWN_BUGS = {"paddle_fft_circular"}
OTHER_BUGS = {"torch_split_order", "torch_decay_sign"}


def fftconv(u, k, bias, circular=False):
    """u [B, D, L], k [D, L], bias [D] -> causal conv of u with k, plus u * bias."""
    seqlen = u.shape[-1]
    fft_size = seqlen if circular else 2 * seqlen
    k_f = paddle.fft.rfft(k, n=fft_size) / fft_size
    u_f = paddle.fft.rfft(u, n=fft_size)
    y = paddle.fft.irfft(u_f * k_f, n=fft_size, norm="forward")[..., :seqlen]
    return y + u * bias.unsqueeze(-1)


class Sin(nn.Layer):
    def __init__(self, dim, w=1.0):
        super().__init__()
        self.freq = self.create_parameter([1, dim], default_initializer=nn.initializer.Constant(w))

    def forward(self, x):
        return paddle.sin(self.freq * x)


class PositionalEmbedding(nn.Layer):
    def __init__(self, emb_dim, seq_len):
        super().__init__()
        t = np.linspace(0, 1, seq_len)[None, :, None]
        bands = (emb_dim - 1) // 2
        t_rescaled = np.linspace(0, seq_len - 1, seq_len)[None, :, None]
        w = 2 * math.pi * t_rescaled / seq_len
        f = np.linspace(1e-4, bands - 1, bands)[None, None]
        z = np.exp(-1j * f * w)
        z = np.concatenate([t, z.real, z.imag], axis=-1)
        self.register_buffer("z", paddle.to_tensor(z.astype("float32")))
        self.register_buffer("t", paddle.to_tensor(t.astype("float32")))

    def forward(self, L):
        return self.z[:, :L], self.t[:, :L]


class ExponentialModulation(nn.Layer):
    def __init__(self, d_model, fast_decay_pct=FAST_DECAY_PCT, slow_decay_pct=SLOW_DECAY_PCT, target=TARGET, shift=SHIFT):
        super().__init__()
        self.shift = shift
        max_decay = math.log(target) / fast_decay_pct
        min_decay = math.log(target) / slow_decay_pct
        deltas = np.linspace(min_decay, max_decay, d_model)[None, None]
        self.register_buffer("deltas", paddle.to_tensor(deltas.astype("float32")))

    def forward(self, t, x):
        decay = paddle.exp(-t * self.deltas.abs())
        return x * (decay + self.shift)


class HyenaFilter(nn.Layer):
    def __init__(self, d_model, emb_dim=EMB_DIM, order=FILTER_ORDER, seq_len=SEQ, w=1.0, circular=False):
        super().__init__()
        self.circular = circular
        self.bias = self.create_parameter([d_model], default_initializer=nn.initializer.Normal(0.0, 1.0))
        self.pos_emb = PositionalEmbedding(emb_dim, seq_len)
        act = Sin(order, w)  # one Sin (one freq), used twice, as in safari
        self.implicit_filter = nn.Sequential(
            nn.Linear(emb_dim, order), act, nn.Linear(order, order), act, nn.Linear(order, d_model, bias_attr=False)
        )
        self.modulation = ExponentialModulation(d_model)

    def filter(self, L):
        z, t = self.pos_emb(L)
        h = self.implicit_filter(z)
        return self.modulation(t, h)  # [1, L, D]

    def forward(self, x, L, k=None, bias=None):
        if k is None:
            k = self.filter(L)[0].transpose([1, 0])
        if bias is None:
            bias = self.bias
        return fftconv(x, k, bias, circular=self.circular)


class HyenaOperator(nn.Layer):
    def __init__(self, d_model, circular=False):
        super().__init__()
        self.d_model = d_model
        self.in_proj = nn.Linear(d_model, 3 * d_model)
        self.out_proj = nn.Linear(d_model, d_model, weight_attr=nn.initializer.Normal(0.0, 0.3))
        self.short_filter = nn.Conv1D(
            3 * d_model, 3 * d_model, SHORT_K, padding=SHORT_K - 1, groups=3 * d_model,
            weight_attr=nn.initializer.Normal(0.0, 0.5),
        )
        self.filter_fn = HyenaFilter(d_model, circular=circular)

    def forward(self, u):
        l_filter = u.shape[1]
        u = self.in_proj(u).transpose([0, 2, 1])  # [B, 3D, L]
        uc = self.short_filter(u)[..., :l_filter]
        x0, x1, v = paddle.split(uc, 3, axis=1)
        k = self.filter_fn.filter(l_filter)[0].transpose([1, 0])  # [D, L]
        v = v * x1
        v = self.filter_fn(v, l_filter, k=k, bias=self.filter_fn.bias)
        y = (v * x0).transpose([0, 2, 1])
        return self.out_proj(y)


class Mlp(nn.Layer):
    def __init__(self, d_model):
        super().__init__()
        self.fc1 = nn.Linear(d_model, 2 * d_model)
        self.fc2 = nn.Linear(2 * d_model, d_model)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Block(nn.Layer):
    def __init__(self, d_model, circular=False):
        super().__init__()
        self.mixer = HyenaOperator(d_model, circular)
        self.mlp = Mlp(d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x):
        x = x + self.mixer(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class HyenaLM(nn.Layer):
    def __init__(self, circular=False):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, D_MODEL, weight_attr=nn.initializer.Normal(0.0, 0.3))
        self.blocks = nn.LayerList([Block(D_MODEL, circular) for _ in range(N_LAYER)])
        self.norm_f = nn.LayerNorm(D_MODEL)
        self.lm_head = nn.Linear(D_MODEL, VOCAB, bias_attr=False)

    def forward(self, input_ids):
        x = self.embedding(input_ids)
        for blk in self.blocks:
            x = blk(x)
        return self.lm_head(self.norm_f(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_hyena paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = HyenaLM(circular=bug == "paddle_fft_circular")
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(5)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 16, 64]
    return (output**2).mean()

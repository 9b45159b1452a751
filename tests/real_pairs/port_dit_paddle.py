"""Hand-written port, paddle side: a tiny class-conditional Diffusion Transformer (DiT) (written by "person A").

Sizes: latent x [2, 4, 8, 8], patch 2 (16 tokens of width 32), 2 DiT blocks, 4 heads of 8, MLP
32 -> 128 -> 32 with tanh-GELU, timestep frequency embedding of size 32 (max period 10000), 10
classes plus one "null" class row (index 10, the classifier-free-guidance label), learned sigma:
out channels 8 = 2 x 4. Inputs: x, t (int64 timesteps), y (int64 labels). Output: [2, 8, 8, 8].

Paddle idioms on this side:
- root `DiT` registers `t_embedder`, `label_emb`, `patch_embed` (nn.Conv2D(4, 32, 2, stride=2)),
  the non-persistable buffer `pos_embed` [1, 16, 32] (2-D sin-cos table computed in NUMPY),
  `blocks` (LayerList), `final_layer`. The call order is patch_embed, t_embedder, label_emb.
- the conditioning c = t_embedder(t) + label_emb(y); SiLU(c) is computed ONCE in the root
  (F.silu inline) and the activated vector is handed to every block and to the final layer.
- `TimestepEmbedding` (diffusers-like names): buffer `freqs` [16] (numpy), `linear_1`, F.silu,
  `linear_2`; emb = concat([cos(t * freqs), sin(t * freqs)]) (DiT's order, cos first).
- `DiTBlock` registers `adaLN` (nn.Linear(32, 192), [in, out]) FIRST, then `norm1`, `attn`,
  `norm2`, `mlp`; the 6 modulation vectors are paddle.split(adaLN(c), 6, axis=-1) in the order
  shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp; modulate(x) = x * (1 + scale)
  + shift; LayerNorm without affine (weight_attr=False, bias_attr=False, epsilon 1e-6).
- `Attention`: a fused `qkv` Linear(32, 96) reshaped [B, N, 3, heads, 8], explicit matmul with
  transpose_y, F.softmax, head merge with transpose([0, 2, 1, 3]), `proj`.
- `Mlp`: `fc1`, F.gelu(approximate=True) inline, `fc2`.
- `FinalLayer`: `adaLN` Linear(32, 64) -> shift, scale; `norm`; `proj` Linear(32, 32).
- unpatchify inline in the root: reshape [N, 4, 4, 2, 2, 8] -> transpose [0, 5, 1, 3, 2, 4] ->
  reshape [N, 8, 8, 8].

The modulation linears are initialised with small random weights (Normal(0, 0.05), biases
Normal(0, 0.1)), not zeros as in the DiT paper, and the final projection is random too, so
every branch and every modulation vector matters.

PADIFF_BUG names planted on this side:
  paddle_tfreq_sin_first  -> the timestep frequency embedding is concat([sin, cos]) instead of
                             concat([cos, sin]) (the diffusers flip_sin_to_cos default mixed up)
  paddle_attn_merge_no_transpose -> the attention output [B, heads, N, 8] is reshaped to
                             [B, N, 32] WITHOUT the transpose back to [B, N, heads, 8]
The torch side's bug names are accepted and ignored; any other name raises ValueError.
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_CH, INPUT_SIZE, PATCH = 4, 8, 2
HIDDEN, HEADS, DEPTH, MLP_RATIO = 32, 4, 2, 4
FREQ_DIM, NUM_CLASSES = 32, 10
OUT_CH = 2 * IN_CH  # learned sigma
GRID = INPUT_SIZE // PATCH
OWN_BUGS = {"paddle_tfreq_sin_first", "paddle_attn_merge_no_transpose"}
OTHER_BUGS = {"torch_modulate_no_one", "torch_final_shift_scale_swapped"}


def _sincos_1d(embed_dim, pos):
    omega = np.arange(embed_dim // 2, dtype=np.float64) / (embed_dim / 2.0)
    omega = 1.0 / 10000**omega
    out = np.einsum("m,d->md", pos.reshape(-1), omega)
    return np.concatenate([np.sin(out), np.cos(out)], axis=1)


def get_2d_sincos_pos_embed(embed_dim, grid_size):
    grid_h = np.arange(grid_size, dtype=np.float32)
    grid_w = np.arange(grid_size, dtype=np.float32)
    grid = np.meshgrid(grid_w, grid_h)  # w goes first
    grid = np.stack(grid, axis=0).reshape([2, 1, grid_size, grid_size])
    emb_h = _sincos_1d(embed_dim // 2, grid[0])
    emb_w = _sincos_1d(embed_dim // 2, grid[1])
    return np.concatenate([emb_h, emb_w], axis=1)  # [grid*grid, D]


def modulate(x, shift, scale):
    return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)


class TimestepEmbedding(nn.Layer):
    def __init__(self, dim, freq_dim=FREQ_DIM, max_period=10000, sin_first=False):
        super().__init__()
        self.sin_first = sin_first
        half = freq_dim // 2
        freqs = np.exp(-math.log(max_period) * np.arange(half, dtype=np.float32) / half)
        self.register_buffer("freqs", paddle.to_tensor(freqs.astype("float32")), persistable=False)
        self.linear_1 = nn.Linear(freq_dim, dim)
        self.linear_2 = nn.Linear(dim, dim)

    def forward(self, t):
        args = t.astype("float32").unsqueeze(-1) * self.freqs.unsqueeze(0)
        if self.sin_first:
            emb = paddle.concat([paddle.sin(args), paddle.cos(args)], axis=-1)
        else:
            emb = paddle.concat([paddle.cos(args), paddle.sin(args)], axis=-1)
        return self.linear_2(F.silu(self.linear_1(emb)))


class Attention(nn.Layer):
    def __init__(self, dim, num_heads, merge_no_transpose=False):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim**-0.5
        self.merge_no_transpose = merge_no_transpose
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape([B, N, 3, self.num_heads, self.head_dim]).transpose([2, 0, 3, 1, 4])
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = F.softmax(paddle.matmul(q, k, transpose_y=True) * self.scale, axis=-1)
        out = paddle.matmul(attn, v)  # [B, heads, N, head_dim]
        if self.merge_no_transpose:
            out = out.reshape([B, N, C])
        else:
            out = out.transpose([0, 2, 1, 3]).reshape([B, N, C])
        return self.proj(out)


class Mlp(nn.Layer):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x), approximate=True))


def _ada_linear(dim, n):
    return nn.Linear(
        dim,
        n * dim,
        weight_attr=paddle.ParamAttr(initializer=nn.initializer.Normal(0.0, 0.05)),
        bias_attr=paddle.ParamAttr(initializer=nn.initializer.Normal(0.0, 0.1)),
    )


class DiTBlock(nn.Layer):
    def __init__(self, dim, num_heads, mlp_ratio, merge_no_transpose=False):
        super().__init__()
        self.adaLN = _ada_linear(dim, 6)
        self.norm1 = nn.LayerNorm(dim, epsilon=1e-6, weight_attr=False, bias_attr=False)
        self.attn = Attention(dim, num_heads, merge_no_transpose)
        self.norm2 = nn.LayerNorm(dim, epsilon=1e-6, weight_attr=False, bias_attr=False)
        self.mlp = Mlp(dim, dim * mlp_ratio)

    def forward(self, x, c_act):
        shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = paddle.split(self.adaLN(c_act), 6, axis=-1)
        x = x + gate_msa.unsqueeze(1) * self.attn(modulate(self.norm1(x), shift_msa, scale_msa))
        x = x + gate_mlp.unsqueeze(1) * self.mlp(modulate(self.norm2(x), shift_mlp, scale_mlp))
        return x


class FinalLayer(nn.Layer):
    def __init__(self, dim, patch, out_ch):
        super().__init__()
        self.adaLN = _ada_linear(dim, 2)
        self.norm = nn.LayerNorm(dim, epsilon=1e-6, weight_attr=False, bias_attr=False)
        self.proj = nn.Linear(dim, patch * patch * out_ch)

    def forward(self, x, c_act):
        shift, scale = paddle.split(self.adaLN(c_act), 2, axis=-1)
        return self.proj(modulate(self.norm(x), shift, scale))


class DiT(nn.Layer):
    def __init__(self, sin_first=False, merge_no_transpose=False):
        super().__init__()
        self.t_embedder = TimestepEmbedding(HIDDEN, sin_first=sin_first)
        self.label_emb = nn.Embedding(NUM_CLASSES + 1, HIDDEN, weight_attr=nn.initializer.Normal(0.0, 0.5))
        self.patch_embed = nn.Conv2D(IN_CH, HIDDEN, PATCH, stride=PATCH)
        pos = get_2d_sincos_pos_embed(HIDDEN, GRID).astype("float32")[None]
        self.register_buffer("pos_embed", paddle.to_tensor(pos), persistable=False)
        self.blocks = nn.LayerList(
            [DiTBlock(HIDDEN, HEADS, MLP_RATIO, merge_no_transpose) for _ in range(DEPTH)]
        )
        self.final_layer = FinalLayer(HIDDEN, PATCH, OUT_CH)

    def unpatchify(self, x):
        n = x.shape[0]
        x = x.reshape([n, GRID, GRID, PATCH, PATCH, OUT_CH])
        x = x.transpose([0, 5, 1, 3, 2, 4])
        return x.reshape([n, OUT_CH, GRID * PATCH, GRID * PATCH])

    def forward(self, x, t, y):
        x = self.patch_embed(x).flatten(2).transpose([0, 2, 1]) + self.pos_embed
        c = self.t_embedder(t) + self.label_emb(y)
        c_act = F.silu(c)
        for block in self.blocks:
            x = block(x, c_act)
        x = self.final_layer(x, c_act)
        return self.unpatchify(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dit paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = DiT(sin_first=bug == "paddle_tfreq_sin_first", merge_no_transpose=bug == "paddle_attn_merge_no_transpose")
    m.eval()
    return m


def _inputs_np():
    rng = np.random.default_rng(45)
    x = rng.standard_normal((2, IN_CH, INPUT_SIZE, INPUT_SIZE)).astype("float32")
    t = np.array([37, 812], dtype="int64")
    y = np.array([3, NUM_CLASSES], dtype="int64")  # the second sample is unconditional (null class)
    return x, t, y


def inputs():
    x, t, y = _inputs_np()
    return (paddle.to_tensor(x), paddle.to_tensor(t), paddle.to_tensor(y)), {}


def loss(output):
    # predicted noise and sigma [2, 8, 8, 8]
    return (output**2).mean()

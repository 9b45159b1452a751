"""Hand-written port, paddle side: a tiny Perceiver-style encoder classifier (written by "person A").

Sizes: an input array [2, 12, 24] (already features, no embedding) with a validity mask [2, 12]
(row 0: 12 valid positions, row 1: 9 valid, 3 padded), a learned latent array [8, 32], one
cross-attention block (the latents attend to the inputs; 4 heads of 8), an MLP 32 -> 64 -> 32
with erf GELU, then 2 latent self-attention blocks (4 heads of 8, MLP 64), pre-LayerNorms
(eps 1e-5), a final LayerNorm, mean pooling over the latents and a classifier to 5 classes.
Eval mode, no dropout.

Paddle idioms on this side:
- root `PerceiverClassifier` creates the latent array FIRST as a raw parameter `latents` [8, 32]
  (create_parameter, Normal(0, 0.5)), expanded to the batch in forward; then `cross_block`,
  `self_blocks` (LayerList of `LatentBlock`), `norm`, `classifier`. Mean pooling inline.
- `CrossAttentionBlock`: `norm_latents` LayerNorm(32), `norm_inputs` LayerNorm(24), `attn` =
  paddle.nn.MultiHeadAttention(32, 4, kdim=24, vdim=24) (separate q_proj [32, 32], k_proj /
  v_proj [24, 32], out_proj, paddle [in, out] weights), `norm_mlp`, `mlp` (`Mlp`: fc1, act =
  nn.GELU(), fc2). The mask is a bool [B, 1, 1, 12] attn_mask, True = attend.
- `LatentBlock`: `norm1`, `attn` (`SelfAttention`, HAND-WRITTEN: one fused `qkv` Linear(32, 96)
  split q | k | v with heads of 8, explicit matmul, softmax, `proj`), `norm2`, `mlp`.

The torch side (port_perceiver_torch.py) was written independently: an nn.Embedding of 8 latents
indexed by arange, torch.nn.MultiheadAttention everywhere (for the cross attention with kdim /
vdim, i.e. q_proj_weight / k_proj_weight / v_proj_weight and one packed in_proj_bias), an
ignore-mask (key_padding_mask, True = padded), nn.Sequential MLPs.

PADIFF_BUG on this side:
  paddle_attn_scale -> the hand-written latent self-attention scales the scores by
                       embed_dim ** -0.5 (32) instead of head_dim ** -0.5 (8)
  paddle_gelu_tanh  -> every Mlp (the cross-attention block's and both latent blocks') uses
                       nn.GELU(approximate=True) (tanh approximation) instead of the exact
                       GELU (precision-level)
The torch side's bug names are accepted and ignored; any other name raises ValueError.
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

IN_LEN, IN_DIM, N_LATENTS, D, HEADS, MLP_DIM, CLASSES, N_SELF = 12, 24, 8, 32, 4, 64, 5, 2
BATCH, LENGTHS = 2, (12, 9)
OWN_BUGS = {"paddle_attn_scale", "paddle_gelu_tanh"}
OTHER_BUGS = {"torch_no_input_mask"}


class Mlp(nn.Layer):
    def __init__(self, dim, hidden, approximate=False):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU(approximate=approximate)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class CrossAttentionBlock(nn.Layer):
    def __init__(self, gelu_tanh=False):
        super().__init__()
        self.norm_latents = nn.LayerNorm(D)
        self.norm_inputs = nn.LayerNorm(IN_DIM)
        self.attn = nn.MultiHeadAttention(D, HEADS, kdim=IN_DIM, vdim=IN_DIM)
        self.norm_mlp = nn.LayerNorm(D)
        self.mlp = Mlp(D, MLP_DIM, approximate=gelu_tanh)

    def forward(self, latents, inputs, attn_mask):
        kv = self.norm_inputs(inputs)
        latents = latents + self.attn(self.norm_latents(latents), kv, kv, attn_mask=attn_mask)
        return latents + self.mlp(self.norm_mlp(latents))


class SelfAttention(nn.Layer):
    def __init__(self, dim, num_heads, wrong_scale=False):
        super().__init__()
        self.num_heads, self.head_dim = num_heads, dim // num_heads
        self.scale = (dim if wrong_scale else self.head_dim) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape([b, n, 3, self.num_heads, self.head_dim]).transpose([2, 0, 3, 1, 4])
        q, k, v = qkv[0], qkv[1], qkv[2]  # [b, heads, n, hd]
        scores = paddle.matmul(q, k, transpose_y=True) * self.scale
        attn = F.softmax(scores, axis=-1)
        out = paddle.matmul(attn, v).transpose([0, 2, 1, 3]).reshape([b, n, c])
        return self.proj(out)


class LatentBlock(nn.Layer):
    def __init__(self, wrong_scale=False, gelu_tanh=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(D)
        self.attn = SelfAttention(D, HEADS, wrong_scale)
        self.norm2 = nn.LayerNorm(D)
        self.mlp = Mlp(D, MLP_DIM, approximate=gelu_tanh)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class PerceiverClassifier(nn.Layer):
    def __init__(self, wrong_scale=False, gelu_tanh=False):
        super().__init__()
        self.latents = self.create_parameter([N_LATENTS, D], default_initializer=nn.initializer.Normal(0.0, 0.5))
        self.cross_block = CrossAttentionBlock(gelu_tanh)
        self.self_blocks = nn.LayerList([LatentBlock(wrong_scale, gelu_tanh) for _ in range(N_SELF)])
        self.norm = nn.LayerNorm(D)
        self.classifier = nn.Linear(D, CLASSES)

    def forward(self, inputs, input_mask):
        b = inputs.shape[0]
        lat = self.latents.unsqueeze(0).expand([b, N_LATENTS, D])
        attn_mask = input_mask.unsqueeze([1, 2])  # bool [B, 1, 1, N], True = attend
        lat = self.cross_block(lat, inputs, attn_mask)
        for blk in self.self_blocks:
            lat = blk(lat)
        return self.classifier(self.norm(lat).mean(axis=1))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_perceiver paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = PerceiverClassifier(wrong_scale=bug == "paddle_attn_scale", gelu_tanh=bug == "paddle_gelu_tanh")
    m.eval()
    return m


def _data():
    rng = np.random.default_rng(13)
    x = rng.standard_normal((BATCH, IN_LEN, IN_DIM)).astype("float32")
    mask = np.arange(IN_LEN)[None, :] < np.array(LENGTHS)[:, None]  # bool [2, 12], True = valid
    x[~mask] = 0.0
    return x, mask


def inputs():
    x, mask = _data()
    return (paddle.to_tensor(x), paddle.to_tensor(mask)), {}


def loss(output):
    # logits [2, 5]
    return (output**2).mean()

"""Hand-written port, paddle side: a tiny gMLP token classifier (written by "person A").

gMLP as in Liu et al., "Pay Attention to MLPs" (2021): no attention at all, each block is
    shortcut + channel_proj_out(SGU(GELU(channel_proj_in(LayerNorm(x)))))
with the Spatial Gating Unit SGU(z) = u * (W_seq @ LayerNorm(v) + b_seq), z = u | v split on the
channel axis, W_seq a [seq, seq] projection ALONG THE SEQUENCE AXIS (initialised with small weights
and a ones bias, so every block starts close to a plain gated MLP).

Sizes: vocab 50, d_model 32, d_ffn 128 (u and v are 64 wide each), sequence length 16 (fixed: the
spatial projection is seq x seq), 2 blocks, 5 tags, batch 2. LayerNorm eps 1e-5 everywhere.
Output: per-token logits [2, 16, 5].

Paddle idioms on this side:
- root `GMLPTagger`: `embedding` (nn.Embedding 50x32, Normal(0, 0.5)), `blocks` (LayerList of
  `GMLPBlock`), `norm_f` (LayerNorm), `head` (Linear 32 -> 5).
- `GMLPBlock`: `norm`, ONE packed `channel_proj_in` Linear(32, 128) (columns 0:64 = u, 64:128 = v),
  `act` = nn.GELU() (erf) called once on the packed tensor, `sgu`, `channel_proj_out` Linear(64, 32).
- `SpatialGatingUnit(x)`: paddle.chunk(x, 2, axis=-1) -> u, v; `norm` LayerNorm(64) on v; the spatial
  projection is `spatial_proj` = nn.Conv1D(16, 16, kernel_size=1) applied to v [B, 16, 64] as is:
  in NCL layout the SEQUENCE axis is the conv's channel axis (weight [16, 16, 1] Normal(0, 0.1),
  bias [16] ones). Returns u * v.

The torch side (port_gmlp_torch.py) was written independently: two Linears `fc_u` / `fc_v`, an
nn.GELU module called twice, a gate module taking (u, v) and an nn.Parameter [16, 16] used in an
einsum over the sequence axis.

PADIFF_BUG=paddle_sgu_uv_swapped plants this side's bug: the SGU unpacks the chunk as `v, u`
instead of `u, v` (so the LayerNorm and the spatial projection run on the u half and the v half
is the multiplier). The torch side's bug names are accepted and ignored; any other name raises
ValueError.
"""
import os

import numpy as np
import paddle
from paddle import nn

VOCAB, D_MODEL, D_FFN, SEQ, LAYERS, TAGS = 50, 32, 128, 16, 2, 5
BATCH = 2
OWN_BUGS = {"paddle_sgu_uv_swapped"}
OTHER_BUGS = {"torch_spatial_weight_transposed", "torch_gelu_tanh"}


class SpatialGatingUnit(nn.Layer):
    def __init__(self, d_ffn, seq_len, uv_swapped=False):
        super().__init__()
        self.uv_swapped = uv_swapped
        self.norm = nn.LayerNorm(d_ffn // 2)
        self.spatial_proj = nn.Conv1D(
            seq_len,
            seq_len,
            kernel_size=1,
            weight_attr=nn.initializer.Normal(0.0, 0.1),
            bias_attr=nn.initializer.Constant(1.0),
        )

    def forward(self, x):
        if self.uv_swapped:
            v, u = paddle.chunk(x, 2, axis=-1)
        else:
            u, v = paddle.chunk(x, 2, axis=-1)
        v = self.norm(v)
        v = self.spatial_proj(v)  # [B, L, C] read as NCL: the seq axis is the conv's channels
        return u * v


class GMLPBlock(nn.Layer):
    def __init__(self, uv_swapped=False):
        super().__init__()
        self.norm = nn.LayerNorm(D_MODEL)
        self.channel_proj_in = nn.Linear(D_MODEL, D_FFN)
        self.act = nn.GELU()
        self.sgu = SpatialGatingUnit(D_FFN, SEQ, uv_swapped)
        self.channel_proj_out = nn.Linear(D_FFN // 2, D_MODEL)

    def forward(self, x):
        shortcut = x
        x = self.norm(x)
        x = self.act(self.channel_proj_in(x))
        x = self.sgu(x)
        x = self.channel_proj_out(x)
        return x + shortcut


class GMLPTagger(nn.Layer):
    def __init__(self, uv_swapped=False):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, D_MODEL, weight_attr=nn.initializer.Normal(0.0, 0.5))
        self.blocks = nn.LayerList([GMLPBlock(uv_swapped) for _ in range(LAYERS)])
        self.norm_f = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, TAGS)

    def forward(self, input_ids):
        x = self.embedding(input_ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm_f(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_gmlp paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = GMLPTagger(uv_swapped=bug == "paddle_sgu_uv_swapped")
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(21)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 16, 5]
    return (output**2).mean()

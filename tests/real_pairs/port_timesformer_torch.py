"""Hand-written port, torch side: a tiny TimeSformer with divided space-time attention (written by "person B").

The same math as port_timesformer_paddle.py, re-implemented by hand from the paper: video
[2, 4, 3, 16, 16] = [B, T, C, H, W] (positional) -> logits [2, 10]. Per-frame 4x4 patch conv
(3 -> 32, N = 16 patches), cls token + spatial pos embed + temporal embed; 2 blocks of
temporal attention (per patch position across the 4 frames, + a Linear on its output), spatial
attention (per frame across [cls, 16 patches], the cls outputs of the 4 frames averaged) and an
MLP (32 -> 128 -> 32, exact GELU), all pre-LayerNorm (eps 1e-6) with residuals; final LayerNorm,
cls token, Linear(32 -> 10). 4 heads of 8 everywhere.

Torch idioms on this side:
- tokens are FRAME-MAJOR: [B, 1 + T*N, D], token 1 + t*N + n = patch n of frame t; the
  rearranges are view / transpose / flatten inline.
- root `DividedSTTransformer` registers `to_patch` nn.Conv2d first, then `cls` [1, 1, 32],
  `pos_emb` [17, 32] and `time_emb` [4, 32] (no batch dims), `layers` (ModuleList), `norm`,
  `head`. The cls token gets pos_emb[0] and the patches pos_emb[1:] + time_emb[t] in one go.
- `DividedSTLayer` registers `temporal` (TemporalMixer), `spatial_norm`, `spatial_attn`
  (nn.MultiheadAttention, batch_first, packed in_proj q | k | v), `ffn_norm`, `ffn`
  (FeedForward: `w_in`, `w_out`, the exact F.gelu inline). The cls copy / average and the residuals are
  inline in the layer.
- `TemporalMixer` (a module the paddle side does not have) takes the frame-major patch tokens,
  regroups them per patch position, and owns `norm`, `attn` (nn.MultiheadAttention) and `fc`;
  it returns the temporal update in frame-major order.
- LayerNorms come from one helper `_layer_norm(dim)` with eps 1e-6.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_gelu_tanh             -> FeedForward calls F.gelu(..., approximate="tanh") instead of
                                 the exact erf GELU
  torch_temporal_patch_major  -> TemporalMixer regroups the tokens with a plain
                                 reshape(B*N, T, D) (and back with reshape(B, T*N, D)), as if
                                 they were patch-major: each "time" group is 4 neighbouring
                                 patches of ONE frame
"""

import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

FRAME_SIZE, PATCH_SIZE, CHANNELS, NUM_FRAMES = 16, 4, 3, 4
DIM, N_LAYERS, N_HEADS, FFN_MULT = 32, 2, 4, 4
N_CLASSES = 10
N_PATCHES = (FRAME_SIZE // PATCH_SIZE) ** 2
BATCH = 2
OWN_BUGS = {"torch_gelu_tanh", "torch_temporal_patch_major"}
OTHER_BUGS = {"paddle_qkv_heads_first", "paddle_cls_first_frame"}


def _layer_norm(dim):
    return nn.LayerNorm(dim, eps=1e-6)


class TemporalMixer(nn.Module):
    def __init__(self, dim, heads, patch_major=False):
        super().__init__()
        self.patch_major = patch_major
        self.norm = _layer_norm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.fc = nn.Linear(dim, dim)

    def forward(self, tokens):  # [B, T*N, D], frame-major
        B, L, D = tokens.shape
        if self.patch_major:
            h = tokens.reshape(B * N_PATCHES, NUM_FRAMES, D)
        else:
            h = tokens.view(B, NUM_FRAMES, N_PATCHES, D).transpose(1, 2).reshape(B * N_PATCHES, NUM_FRAMES, D)
        h = self.norm(h)
        h, _ = self.attn(h, h, h, need_weights=False)
        if self.patch_major:
            h = h.reshape(B, L, D)
        else:
            h = h.view(B, N_PATCHES, NUM_FRAMES, D).transpose(1, 2).reshape(B, L, D)
        return self.fc(h)


class FeedForward(nn.Module):
    def __init__(self, dim, hidden, tanh_gelu=False):
        super().__init__()
        self.approximate = "tanh" if tanh_gelu else "none"
        self.w_in = nn.Linear(dim, hidden)
        self.w_out = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.w_out(F.gelu(self.w_in(x), approximate=self.approximate))


class DividedSTLayer(nn.Module):
    def __init__(self, dim, heads, bug=""):
        super().__init__()
        self.temporal = TemporalMixer(dim, heads, patch_major=bug == "torch_temporal_patch_major")
        self.spatial_norm = _layer_norm(dim)
        self.spatial_attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ffn_norm = _layer_norm(dim)
        self.ffn = FeedForward(dim, dim * FFN_MULT, tanh_gelu=bug == "torch_gelu_tanh")

    def forward(self, x):
        B, _, D = x.shape
        cls, tok = x[:, :1], x[:, 1:]
        tok = tok + self.temporal(tok)
        frames = tok.reshape(B * NUM_FRAMES, N_PATCHES, D)
        cls_per_frame = cls.expand(B, NUM_FRAMES, D).reshape(B * NUM_FRAMES, 1, D)
        s = self.spatial_norm(torch.cat([cls_per_frame, frames], dim=1))
        s, _ = self.spatial_attn(s, s, s, need_weights=False)
        cls_update = s[:, 0].view(B, NUM_FRAMES, D).mean(dim=1, keepdim=True)
        tok_update = s[:, 1:].reshape(B, NUM_FRAMES * N_PATCHES, D)
        x = torch.cat([cls + cls_update, tok + tok_update], dim=1)
        return x + self.ffn(self.ffn_norm(x))


class DividedSTTransformer(nn.Module):
    def __init__(self, bug=""):
        super().__init__()
        self.to_patch = nn.Conv2d(CHANNELS, DIM, kernel_size=PATCH_SIZE, stride=PATCH_SIZE)
        self.cls = nn.Parameter(torch.zeros(1, 1, DIM))
        self.pos_emb = nn.Parameter(torch.zeros(N_PATCHES + 1, DIM))
        self.time_emb = nn.Parameter(torch.zeros(NUM_FRAMES, DIM))
        self.layers = nn.ModuleList([DividedSTLayer(DIM, N_HEADS, bug) for _ in range(N_LAYERS)])
        self.norm = _layer_norm(DIM)
        self.head = nn.Linear(DIM, N_CLASSES)

    def forward(self, video):  # [B, T, C, H, W]
        B, T = video.shape[:2]
        x = self.to_patch(video.flatten(0, 1))  # [B*T, D, 4, 4]
        x = x.flatten(2).transpose(1, 2).view(B, T, N_PATCHES, DIM)
        x = x + self.pos_emb[1:] + self.time_emb[:, None, :]
        cls = (self.cls + self.pos_emb[:1]).expand(B, -1, -1)
        x = torch.cat([cls, x.reshape(B, T * N_PATCHES, DIM)], dim=1)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x)[:, 0])


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_timesformer torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = DividedSTTransformer(bug if bug in OWN_BUGS else "")
    return m.eval()


def _video():
    rng = np.random.default_rng(55)
    return rng.standard_normal((BATCH, NUM_FRAMES, CHANNELS, FRAME_SIZE, FRAME_SIZE)).astype("float32")


def inputs():
    return (torch.from_numpy(_video()),), {}


def loss(output):
    # logits [2, 10]
    return (output**2).mean()

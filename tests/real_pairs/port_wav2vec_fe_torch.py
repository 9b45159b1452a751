"""Hand-written port, torch side: a tiny wav2vec2-style speech front end + encoder (written by "person B").

The same math as port_wav2vec_fe_paddle.py, re-implemented by hand in torch idioms. Sizes:
waveform [2, 1600], conv dim 24, hidden 32, 4 heads, FFN 64, 2 post-norm layers, eps 1e-5.
Output: the last hidden state [2, 39, 32].

- `frontend`: nn.ModuleList of nn.Sequential blocks. Block 0 = (Conv1d(1, 24, 10, stride 5,
  bias=False), nn.GroupNorm(24, 24), nn.GELU()), so its modules are `frontend.0.0`,
  `frontend.0.1`, `frontend.0.2`; blocks 1..3 = (Conv1d(24, 24, k, stride s, bias=False),
  nn.GELU()).
- `proj_ln` (LayerNorm 24) and `proj` (Linear 24 -> 32, weight [out, in]); no dropout modules.
- `pos_emb` (`ConvPositionalEmbedding`): `conv` = nn.Conv1d(32, 32, 32, padding=16, groups=4),
  channels-first (the hidden states are transposed in and out), under
  torch.nn.utils.parametrizations.weight_norm(name="weight", dim=2): original0 = g [1, 1, 32],
  original1 = v [32, 8, 32], weight = g * v / ||v|| with the norm per kernel tap. The extra frame
  of the even kernel is sliced off ([..., :-1]), then F.gelu.
- `ln_in`: the encoder LayerNorm after adding the positional embedding.
- `blocks`: nn.ModuleList of 2 `PostNormBlock`s. Each registers `ln1`, `ln2` first, then `ffn`
  (nn.Sequential(Linear(32, 64), nn.GELU(), Linear(64, 32))), then `attn` =
  nn.MultiheadAttention(32, 4, batch_first=True) with one packed in_proj_weight [96, 32]
  (q | k | v rows). forward: x = ln1(x + attn(x, x, x)); x = ln2(x + ffn(x)).

Planted bugs (PADIFF_BUG); the paddle side's bug names are accepted and ignored, any other name
raises ValueError:
  torch_groupnorm_one_group -> block 0's norm is nn.GroupNorm(1, 24): ONE group, i.e. the whole
                               [24, T] map normalised together (a layer norm over channels and
                               time) instead of one group per channel
  torch_pos_trim_first      -> the even-kernel padding removal drops the FIRST frame of the pos
                               conv output ([..., 1:]) instead of the last one
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.parametrizations import weight_norm

CONV_DIM, HIDDEN, HEADS, FFN, LAYERS = 24, 32, 4, 64, 2
CONV_KERNELS, CONV_STRIDES = (10, 3, 3, 2), (5, 2, 2, 2)
POS_KERNEL, POS_GROUPS = 32, 4
EPS = 1e-5
BATCH, SAMPLES = 2, 1600
OWN_BUGS = {"torch_groupnorm_one_group", "torch_pos_trim_first"}
OTHER_BUGS = {"paddle_wn_default_dim", "paddle_fe_gelu_tanh"}


def conv_block(i, one_group=False):
    cin = 1 if i == 0 else CONV_DIM
    conv = nn.Conv1d(cin, CONV_DIM, CONV_KERNELS[i], stride=CONV_STRIDES[i], bias=False)
    if i == 0:
        groups = 1 if one_group else CONV_DIM
        return nn.Sequential(conv, nn.GroupNorm(groups, CONV_DIM, eps=EPS, affine=True), nn.GELU())
    return nn.Sequential(conv, nn.GELU())


class ConvPositionalEmbedding(nn.Module):
    def __init__(self, trim_first=False):
        super().__init__()
        self.conv = weight_norm(
            nn.Conv1d(HIDDEN, HIDDEN, POS_KERNEL, padding=POS_KERNEL // 2, groups=POS_GROUPS), name="weight", dim=2
        )
        self.trim_first = trim_first

    def forward(self, x):  # x [B, T, C]
        y = self.conv(x.transpose(1, 2))  # [B, C, T + 1]
        y = y[..., 1:] if self.trim_first else y[..., :-1]
        return F.gelu(y).transpose(1, 2)


class PostNormBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(HIDDEN, eps=EPS)
        self.ln2 = nn.LayerNorm(HIDDEN, eps=EPS)
        self.ffn = nn.Sequential(nn.Linear(HIDDEN, FFN), nn.GELU(), nn.Linear(FFN, HIDDEN))
        self.attn = nn.MultiheadAttention(HIDDEN, HEADS, batch_first=True)

    def forward(self, x):
        a, _ = self.attn(x, x, x, need_weights=False)
        x = self.ln1(x + a)
        return self.ln2(x + self.ffn(x))


class Wav2VecFrontEnd(nn.Module):
    def __init__(self, one_group=False, trim_first=False):
        super().__init__()
        self.frontend = nn.ModuleList([conv_block(i, one_group) for i in range(len(CONV_KERNELS))])
        self.proj_ln = nn.LayerNorm(CONV_DIM, eps=EPS)
        self.proj = nn.Linear(CONV_DIM, HIDDEN)
        self.pos_emb = ConvPositionalEmbedding(trim_first)
        self.ln_in = nn.LayerNorm(HIDDEN, eps=EPS)
        self.blocks = nn.ModuleList([PostNormBlock() for _ in range(LAYERS)])

    def forward(self, wav):  # [B, S]
        x = wav[:, None, :]
        for block in self.frontend:
            x = block(x)
        x = self.proj(self.proj_ln(x.transpose(1, 2)))  # [B, T, HIDDEN]
        x = self.ln_in(x + self.pos_emb(x))
        for blk in self.blocks:
            x = blk(x)
        return x


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_wav2vec_fe torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = Wav2VecFrontEnd(one_group=bug == "torch_groupnorm_one_group", trim_first=bug == "torch_pos_trim_first")
    return m.eval()


def _wave():
    rng = np.random.default_rng(21)
    t = np.arange(SAMPLES) / 16000.0
    rows = []
    for _ in range(BATCH):
        f = rng.uniform(100, 900, 3)
        w = sum(np.sin(2 * np.pi * fi * t + rng.uniform(0, 6.28)) for fi in f) + 0.3 * rng.standard_normal(SAMPLES)
        rows.append((w - w.mean()) / w.std())
    return np.stack(rows).astype("float32")


def inputs():
    return (torch.from_numpy(_wave()),), {}


def loss(output):
    # last hidden state [2, 39, 32]
    return (output**2).mean()

"""Hand-written port, torch side: a Whisper-style audio encoder with a pooled classification head (written by "person B").

The same math as port_whisper_enc_paddle.py, re-implemented by hand from the OpenAI Whisper
code (with a BEiT-style qkv bias): input `input_features` [1, 8, 40] ([batch, mels, frames],
positional, numpy rng seed 45), output class logits [1, 4].

Torch idioms on this side:
- root `AudioTagger`: `encoder` (AudioEncoder), then `head` = nn.Sequential(Linear(16, 8),
  Linear(8, 4)). The mean over the 20 frames is taken inline BEFORE the head, i.e. before the
  16 -> 8 projection (the projection is affine, so mean(proj(x)) == proj(mean(x))).
- `AudioEncoder`: `conv1` / `conv2` are nn.Conv2d with a HEIGHT-1 kernel (1, 3), padding
  (0, 1), the second with stride (1, 2), run on the spectrogram viewed as [B, 8, 1, 40] (weight
  [out, in, 1, 3]); F.gelu inline after each; the positional table is COMPUTED INLINE in every
  forward by the module function `sinusoids` (no buffer); `blocks` (ModuleList of
  ResidualAttentionBlock); `ln_post`.
- `ResidualAttentionBlock` (OpenAI naming): `attn`, `attn_ln`, `mlp` = nn.Sequential(Linear(16,
  64), nn.GELU(), Linear(64, 16)), `mlp_ln`.
- `MultiHeadAttention`: ONE fused `qkv` nn.Linear(16, 48, bias=False) (rows q | k | v), plus
  separate `q_bias` and `v_bias` parameters; the bias vector is cat(q_bias, zeros, v_bias) and
  the projection is F.linear(x, qkv.weight, bias) (the `qkv` module itself is never called, as
  in BEiT); q and k are EACH scaled by head_dim^-0.25 before q k^T; then `out`.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_sinusoid_increment -> the inline positional table uses the timescale increment
                              ln(10000) / (C/2) instead of ln(10000) / (C/2 - 1)
  torch_residual_normed    -> the attention sub-block adds its output to the LayerNorm-ed x
                              instead of the raw x (x = attn_ln(x); x = x + attn(x)), in every
                              block
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

N_MELS, N_STATE, N_HEAD, N_LAYER = 8, 16, 2, 2
N_CLASSES = 4
OWN_BUGS = {"torch_sinusoid_increment", "torch_residual_normed"}
OTHER_BUGS = {"paddle_gelu_tanh", "paddle_attn_scale_dmodel"}


def sinusoids(length, channels, max_timescale=10000, off_by_one=False):
    """Returns sinusoids for positional embedding"""
    assert channels % 2 == 0
    denom = channels // 2 if off_by_one else channels // 2 - 1
    log_timescale_increment = math.log(max_timescale) / denom
    inv_timescales = torch.exp(-log_timescale_increment * torch.arange(channels // 2, dtype=torch.float64))
    scaled_time = torch.arange(length, dtype=torch.float64)[:, None] * inv_timescales[None, :]
    return torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], dim=1).float()


class MultiHeadAttention(nn.Module):
    def __init__(self, n_state, n_head):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(n_state, 3 * n_state, bias=False)
        self.q_bias = nn.Parameter(torch.zeros(n_state))
        self.v_bias = nn.Parameter(torch.zeros(n_state))
        self.out = nn.Linear(n_state, n_state)

    def forward(self, x):
        B, T, C = x.shape
        qkv_bias = torch.cat((self.q_bias, torch.zeros_like(self.q_bias), self.v_bias))
        qkv = F.linear(x, self.qkv.weight, qkv_bias)
        q, k, v = qkv.view(B, T, 3, self.n_head, C // self.n_head).permute(2, 0, 3, 1, 4)
        scale = (C // self.n_head) ** -0.25
        qk = (q * scale) @ (k * scale).transpose(-1, -2)
        w = qk.float().softmax(dim=-1).to(q.dtype)
        wv = (w @ v).permute(0, 2, 1, 3).flatten(start_dim=2)
        return self.out(wv)


class ResidualAttentionBlock(nn.Module):
    def __init__(self, n_state, n_head, residual_normed=False):
        super().__init__()
        self.residual_normed = residual_normed
        self.attn = MultiHeadAttention(n_state, n_head)
        self.attn_ln = nn.LayerNorm(n_state)
        n_mlp = n_state * 4
        self.mlp = nn.Sequential(nn.Linear(n_state, n_mlp), nn.GELU(), nn.Linear(n_mlp, n_state))
        self.mlp_ln = nn.LayerNorm(n_state)

    def forward(self, x):
        if self.residual_normed:
            x = self.attn_ln(x)
            x = x + self.attn(x)
        else:
            x = x + self.attn(self.attn_ln(x))
        x = x + self.mlp(self.mlp_ln(x))
        return x


class AudioEncoder(nn.Module):
    def __init__(self, n_mels, n_state, n_head, n_layer, bug=""):
        super().__init__()
        self.sinusoid_off_by_one = bug == "torch_sinusoid_increment"
        self.conv1 = nn.Conv2d(n_mels, n_state, kernel_size=(1, 3), padding=(0, 1))
        self.conv2 = nn.Conv2d(n_state, n_state, kernel_size=(1, 3), stride=(1, 2), padding=(0, 1))
        self.blocks = nn.ModuleList(
            [ResidualAttentionBlock(n_state, n_head, bug == "torch_residual_normed") for _ in range(n_layer)]
        )
        self.ln_post = nn.LayerNorm(n_state)

    def forward(self, x):
        """x : torch.Tensor, shape = (batch_size, n_mels, n_ctx)"""
        x = x.unsqueeze(2)  # [B, n_mels, 1, T]
        x = F.gelu(self.conv1(x))
        x = F.gelu(self.conv2(x))
        x = x.squeeze(2).permute(0, 2, 1)  # [B, T/2, n_state]
        pos = sinusoids(x.shape[1], x.shape[2], off_by_one=self.sinusoid_off_by_one).to(x.dtype)
        x = x + pos
        for block in self.blocks:
            x = block(x)
        return self.ln_post(x)


class AudioTagger(nn.Module):
    def __init__(self, bug=""):
        super().__init__()
        self.encoder = AudioEncoder(N_MELS, N_STATE, N_HEAD, N_LAYER, bug)
        self.head = nn.Sequential(nn.Linear(N_STATE, 8), nn.Linear(8, N_CLASSES))

    def forward(self, input_features):
        feats = self.encoder(input_features)
        return self.head(feats.mean(dim=1))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_whisper_enc torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = AudioTagger(bug if bug in OWN_BUGS else "")
    return m.eval()


def _features():
    rng = np.random.default_rng(45)
    return rng.standard_normal((1, N_MELS, 40)).astype("float32")


def inputs():
    return (torch.from_numpy(_features()),), {}


def loss(output):
    # class logits [1, 4]
    return (output**2).mean()

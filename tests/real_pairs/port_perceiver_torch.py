"""Hand-written port, torch side: a tiny Perceiver-style encoder classifier (written by "person B").

The same math as port_perceiver_paddle.py, re-implemented by hand on torch's built-in attention.
Sizes: inputs [2, 12, 24] with a validity mask [2, 12] (lengths 12 and 9), 8 latents of width
32, one cross-attention block (4 heads of 8), MLP 64 with erf GELU, 2 latent self-attention
blocks, pre-LayerNorms eps 1e-5, final LayerNorm, mean over the latents, 5 classes.

Torch idioms on this side:
- root `Perceiver`: `latent_emb` = nn.Embedding(8, 32) looked up with torch.arange(8) in
  forward (no raw parameter), `xattn` (`CrossAttend`), `layers` (ModuleList of `LatentLayer`),
  `ln_out`, `fc`. Mean pooling inline.
- `CrossAttend`: `ln_q` LayerNorm(32), `ln_kv` LayerNorm(24), `mha` =
  torch.nn.MultiheadAttention(32, 4, kdim=24, vdim=24, batch_first=True) (kdim != embed_dim, so
  it keeps SEPARATE q_proj_weight [32, 32], k_proj_weight / v_proj_weight [32, 24] but ONE packed
  in_proj_bias [96], rows q | k | v), `ln_ff`, `ff` = nn.Sequential(Linear, GELU, Linear).
  The mask is passed as key_padding_mask = ~input_mask (True = ignore), the opposite polarity
  of paddle's attn_mask.
- `LatentLayer`: `ln1`, `self_attn` = torch.nn.MultiheadAttention(32, 4, batch_first=True) (one
  packed in_proj_weight [96, 32]; its out_proj is not called as a module), `ln2`, `ff`
  (nn.Sequential).

Planted bug (PADIFF_BUG), see port_perceiver_truth.json; the paddle side's bug names are
accepted and ignored, any other name raises ValueError:
  torch_no_input_mask -> the cross attention is called without key_padding_mask, so the latents
                         also attend to the 3 zero-padded input positions of row 1
"""
import os

import numpy as np
import torch
from torch import nn

IN_LEN, IN_DIM, N_LATENTS, D, HEADS, MLP_DIM, CLASSES, N_SELF = 12, 24, 8, 32, 4, 64, 5, 2
BATCH, LENGTHS = 2, (12, 9)
OWN_BUGS = {"torch_no_input_mask"}
OTHER_BUGS = {"paddle_attn_scale", "paddle_gelu_tanh"}


def feed_forward(dim, hidden):
    return nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))


class CrossAttend(nn.Module):
    def __init__(self, forget_mask=False):
        super().__init__()
        self.forget_mask = forget_mask
        self.ln_q = nn.LayerNorm(D)
        self.ln_kv = nn.LayerNorm(IN_DIM)
        self.mha = nn.MultiheadAttention(D, HEADS, kdim=IN_DIM, vdim=IN_DIM, batch_first=True)
        self.ln_ff = nn.LayerNorm(D)
        self.ff = feed_forward(D, MLP_DIM)

    def forward(self, lat, x, pad_mask):
        kv = self.ln_kv(x)
        kpm = None if self.forget_mask else pad_mask
        a, _ = self.mha(self.ln_q(lat), kv, kv, key_padding_mask=kpm, need_weights=False)
        lat = lat + a
        return lat + self.ff(self.ln_ff(lat))


class LatentLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D)
        self.self_attn = nn.MultiheadAttention(D, HEADS, batch_first=True)
        self.ln2 = nn.LayerNorm(D)
        self.ff = feed_forward(D, MLP_DIM)

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.self_attn(h, h, h, need_weights=False)[0]
        return x + self.ff(self.ln2(x))


class Perceiver(nn.Module):
    def __init__(self, forget_mask=False):
        super().__init__()
        self.latent_emb = nn.Embedding(N_LATENTS, D)
        self.xattn = CrossAttend(forget_mask)
        self.layers = nn.ModuleList([LatentLayer() for _ in range(N_SELF)])
        self.ln_out = nn.LayerNorm(D)
        self.fc = nn.Linear(D, CLASSES)

    def forward(self, x, input_mask):
        lat = self.latent_emb(torch.arange(N_LATENTS, device=x.device))
        lat = lat.unsqueeze(0).expand(x.shape[0], -1, -1)
        lat = self.xattn(lat, x, ~input_mask)  # key_padding_mask: True = ignore
        for layer in self.layers:
            lat = layer(lat)
        return self.fc(self.ln_out(lat).mean(dim=1))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_perceiver torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = Perceiver(forget_mask=bug == "torch_no_input_mask")
    return m.eval()


def _data():
    rng = np.random.default_rng(13)
    x = rng.standard_normal((BATCH, IN_LEN, IN_DIM)).astype("float32")
    mask = np.arange(IN_LEN)[None, :] < np.array(LENGTHS)[:, None]
    x[~mask] = 0.0
    return x, mask


def inputs():
    x, mask = _data()
    return (torch.from_numpy(x), torch.from_numpy(mask)), {}


def loss(output):
    # logits [2, 5]
    return (output**2).mean()

"""Hand-written port, torch side: a tiny RWKV-4-style language model (written by "person B").

The same math as port_rwkv_paddle.py, re-implemented by hand after the official RWKV-LM v4 code
(names time_decay / time_first / time_mix_*, key / value / receptance / output, ln0 inside the
first block). Sizes: vocab 64, d_model 32, channel-mix hidden 64, 2 layers, sequence length 8,
batch 2, LayerNorm eps 1e-5, untied head Linear(32, 64, no bias).

Torch idioms on this side:
- root `RWKV`: `emb`, `blocks` = ModuleList of `Block`, `ln_out`, `head`.
- `Block` registers `ln1`, `ln2`, then `ln0` (block 0 only), then `att`, `ffn`; the call order is
  ln0 (block 0), ln1, att, ln2, ffn.
- every mixer owns a `time_shift` = nn.ZeroPad2d((0, 0, 1, -1)) module (pads one zero row on top
  of the time axis of [b, t, c] and drops the last row).
- `RWKV_TimeMix`: `time_decay`, `time_first` ([32]) and `time_mix_k`, `time_mix_v`, `time_mix_r`
  ([1, 1, 32]) as nn.Parameters, then `time_shift`, `key`, `value`, `receptance`, `output`
  (nn.Linear 32 -> 32, no bias, weight [out, in]). The WKV is computed in PARALLEL with plain
  exponentials: a [t, i, c] weight matrix, e^{(t-1-i) w} below the diagonal, e^{u} on it, 0 above,
  contracted with e^{k} v and e^{k} by two einsums, then divided. No loop, no max-stabilisation.
- `RWKV_ChannelMix`: `time_shift`, `time_mix_k`, `time_mix_r`, then `key` (32 -> 64),
  `receptance` (32 -> 32), `value` (64 -> 32) -- registered key, receptance, value but called
  key, value, receptance (as in the official code); torch.square(torch.relu(.)).

Planted bug (PADIFF_BUG), see port_rwkv_truth.json; the paddle side's bug names are accepted and
ignored, any other name raises ValueError:
  torch_ffn_mix_copy_paste -> in RWKV_ChannelMix the receptance input is mixed with time_mix_k
                              instead of time_mix_r (a copy-pasted line), in every block
"""
import os

import numpy as np
import torch
from torch import nn

VOCAB, D_MODEL, D_FFN, LAYERS = 64, 32, 64, 2
EPS = 1e-5
BATCH, SEQ = 2, 8
OWN_BUGS = {"torch_ffn_mix_copy_paste"}
OTHER_BUGS = {"paddle_wkv_no_bonus", "paddle_ln0_eps"}


def wkv_parallel(w, u, k, v):
    """w, u [c]; k, v [b, t, c] -> wkv [b, t, c], plain exponentials."""
    t_len = k.shape[1]
    pos = torch.arange(t_len, device=k.device)
    dist = (pos[:, None] - pos[None, :] - 1).to(k.dtype)  # t - 1 - i
    past = pos[:, None] > pos[None, :]
    now = pos[:, None] == pos[None, :]
    decay = torch.exp(dist[..., None] * w)  # [t, i, c]
    weight = torch.where(past[..., None], decay, torch.zeros_like(decay))
    weight = torch.where(now[..., None], torch.exp(u).expand_as(decay), weight)
    ek = torch.exp(k)
    num = torch.einsum("tic,bic->btc", weight, ek * v)
    den = torch.einsum("tic,bic->btc", weight, ek)
    return num / den


class RWKV_TimeMix(nn.Module):
    def __init__(self):
        super().__init__()
        self.time_decay = nn.Parameter(torch.zeros(D_MODEL))
        self.time_first = nn.Parameter(torch.full((D_MODEL,), -0.5))
        self.time_mix_k = nn.Parameter(torch.full((1, 1, D_MODEL), 0.5))
        self.time_mix_v = nn.Parameter(torch.full((1, 1, D_MODEL), 0.5))
        self.time_mix_r = nn.Parameter(torch.full((1, 1, D_MODEL), 0.5))
        self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
        self.key = nn.Linear(D_MODEL, D_MODEL, bias=False)
        self.value = nn.Linear(D_MODEL, D_MODEL, bias=False)
        self.receptance = nn.Linear(D_MODEL, D_MODEL, bias=False)
        self.output = nn.Linear(D_MODEL, D_MODEL, bias=False)

    def forward(self, x):
        xx = self.time_shift(x)
        xk = x * self.time_mix_k + xx * (1 - self.time_mix_k)
        xv = x * self.time_mix_v + xx * (1 - self.time_mix_v)
        xr = x * self.time_mix_r + xx * (1 - self.time_mix_r)
        k = self.key(xk)
        v = self.value(xv)
        r = self.receptance(xr)
        wkv = wkv_parallel(-torch.exp(self.time_decay), self.time_first, k, v)
        return self.output(torch.sigmoid(r) * wkv)


class RWKV_ChannelMix(nn.Module):
    def __init__(self, mix_copy_paste=False):
        super().__init__()
        self.mix_copy_paste = mix_copy_paste
        self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
        self.time_mix_k = nn.Parameter(torch.full((1, 1, D_MODEL), 0.5))
        self.time_mix_r = nn.Parameter(torch.full((1, 1, D_MODEL), 0.5))
        self.key = nn.Linear(D_MODEL, D_FFN, bias=False)
        self.receptance = nn.Linear(D_MODEL, D_MODEL, bias=False)
        self.value = nn.Linear(D_FFN, D_MODEL, bias=False)

    def forward(self, x):
        xx = self.time_shift(x)
        xk = x * self.time_mix_k + xx * (1 - self.time_mix_k)
        mix_r = self.time_mix_k if self.mix_copy_paste else self.time_mix_r
        xr = x * mix_r + xx * (1 - mix_r)
        k = torch.square(torch.relu(self.key(xk)))
        kv = self.value(k)
        return torch.sigmoid(self.receptance(xr)) * kv


class Block(nn.Module):
    def __init__(self, layer_id, mix_copy_paste=False):
        super().__init__()
        self.layer_id = layer_id
        self.ln1 = nn.LayerNorm(D_MODEL, eps=EPS)
        self.ln2 = nn.LayerNorm(D_MODEL, eps=EPS)
        if layer_id == 0:
            self.ln0 = nn.LayerNorm(D_MODEL, eps=EPS)
        self.att = RWKV_TimeMix()
        self.ffn = RWKV_ChannelMix(mix_copy_paste)

    def forward(self, x):
        if self.layer_id == 0:
            x = self.ln0(x)
        x = x + self.att(self.ln1(x))
        x = x + self.ffn(self.ln2(x))
        return x


class RWKV(nn.Module):
    def __init__(self, mix_copy_paste=False):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D_MODEL)
        self.blocks = nn.ModuleList([Block(i, mix_copy_paste) for i in range(LAYERS)])
        self.ln_out = nn.LayerNorm(D_MODEL, eps=EPS)
        self.head = nn.Linear(D_MODEL, VOCAB, bias=False)

    def forward(self, idx):
        x = self.emb(idx)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_out(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_rwkv torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = RWKV(mix_copy_paste=bug == "torch_ffn_mix_copy_paste")
    return m.eval()


def _ids():
    rng = np.random.default_rng(5)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 8, 64]
    return (output**2).mean()

"""Hand-written port, torch side: a tiny CTC speech encoder with a projected LSTM (LSTMP) (written by "person B").

The same math as port_lstmp_asr_paddle.py, re-implemented by hand in the WeNet / ESPnet style:
input `feats` [2, 40, 20] mel power (positional), log(x + 1e-6), a Conv2dSubsampling4 front-end
(two 3x3 stride-2 convs with ReLU, flatten, Linear(32, 24)), one nn.LSTM(24, 32, num_layers=2,
proj_size=16, batch_first=True), and a CTC projection Linear(16, 12) + log_softmax: output
[2, 9, 12].

Torch idioms on this side:
- root `ASRModel`: `encoder` (`RNNEncoder`) and `ctc_lo` nn.Linear(16, 12); log_softmax inline in
  the root.
- `RNNEncoder`: `embed` (`Conv2dSubsampling4`) and `lstm` (nn.LSTM with proj_size, ONE module
  call for both layers and all steps; weights weight_ih_l{k} [128, in], weight_hh_l{k} [128, 16],
  bias_ih_l{k}, bias_hh_l{k} [128], weight_hr_l{k} [16, 32], gates in torch's order (i, f, g, o)).
  The log compression log(x + 1e-6) is INLINE in RNNEncoder.forward (no module).
- `Conv2dSubsampling4`: `conv` = nn.Sequential(Conv2d(1, 8, 3, 2), ReLU, Conv2d(8, 8, 3, 2), ReLU)
  and `out` nn.Linear(32, 24); it flattens CHANNEL-MAJOR: x.transpose(1, 2) to [B, T, C, F] then
  view(b, t, c * f), so `out`'s input feature index is c * 4 + f.

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_subsample_flatten     -> Conv2dSubsampling4 forgets the transpose(1, 2) and does
                                 x.contiguous().view(b, t, c * f) straight from [B, C, T, F]:
                                 every "frame" mixes channels and times
  torch_lstm_not_batch_first  -> the nn.LSTM is built without batch_first=True while it is fed
                                 [B, T, D]: it runs over the batch axis as time (2 steps) with the
                                 9 frames as a batch
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

N_MELS, FRAMES = 20, 40
BATCH = 2
OWN_BUGS = {"torch_subsample_flatten", "torch_lstm_not_batch_first"}
OTHER_BUGS = {"paddle_forget_bias", "paddle_log_eps"}


class Conv2dSubsampling4(nn.Module):
    def __init__(self, idim, odim, channels=8, flatten_bug=False):
        super().__init__()
        self.flatten_bug = flatten_bug
        self.conv = nn.Sequential(
            nn.Conv2d(1, channels, 3, 2),
            nn.ReLU(),
            nn.Conv2d(channels, channels, 3, 2),
            nn.ReLU(),
        )
        self.out = nn.Linear(channels * (((idim - 1) // 2 - 1) // 2), odim)

    def forward(self, x):
        x = x.unsqueeze(1)  # (b, 1, t, f)
        x = self.conv(x)
        b, c, t, f = x.size()
        if self.flatten_bug:
            x = x.contiguous().view(b, t, c * f)
        else:
            x = x.transpose(1, 2).contiguous().view(b, t, c * f)
        return self.out(x)


class RNNEncoder(nn.Module):
    def __init__(self, idim=N_MELS, d_model=24, hidden=32, proj=16, num_layers=2, log_eps=1e-6,
                 flatten_bug=False, batch_first=True):
        super().__init__()
        self.log_eps = log_eps
        self.embed = Conv2dSubsampling4(idim, d_model, flatten_bug=flatten_bug)
        self.lstm = nn.LSTM(d_model, hidden, num_layers=num_layers, batch_first=batch_first, proj_size=proj)

    def forward(self, xs):
        xs = torch.log(xs + self.log_eps)
        xs = self.embed(xs)
        ys, _ = self.lstm(xs)
        return ys


class ASRModel(nn.Module):
    def __init__(self, vocab_size=12, flatten_bug=False, batch_first=True):
        super().__init__()
        self.encoder = RNNEncoder(flatten_bug=flatten_bug, batch_first=batch_first)
        self.ctc_lo = nn.Linear(16, vocab_size)

    def forward(self, feats):
        hs = self.encoder(feats)
        return F.log_softmax(self.ctc_lo(hs), dim=-1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_lstmp_asr torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = ASRModel(flatten_bug=bug == "torch_subsample_flatten",
                 batch_first=bug != "torch_lstm_not_batch_first")
    return m.eval()


def _feats():
    rng = np.random.default_rng(91)
    return np.exp(rng.normal(-4.0, 2.0, (BATCH, FRAMES, N_MELS))).astype("float32")


def inputs():
    return (torch.from_numpy(_feats()),), {}


def loss(output):
    # CTC log-probabilities [2, 9, 12]
    return (output**2).mean()

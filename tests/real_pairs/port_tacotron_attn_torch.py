"""Hand-written port, torch side: a Tacotron-2-style decoder core (written by "person B").

The same math as port_tacotron_attn_paddle.py, re-implemented by hand: 6 teacher-forced decoder
steps over a fixed encoder memory [2, 10, 32], memory lengths [10, 7], 8 mel channels.

    root `Tacotron2Core`
      prenet      nn.Sequential(Linear(8, 16), ReLU, Linear(16, 16), ReLU), no dropout (eval);
                  called once on all decoder inputs (go frame + frames[:, :-1])
      att_cell    torch.nn.LSTMCell(48, 32): cell(x, (h, c)) -> (h, c)
      attn        `LocAttention`:
                    W_query   Linear(32, 16, no bias)
                    W_memory  Linear(32, 16, no bias), called once through attn.preprocess()
                    loc       `LocFeatures`: the (previous, cumulative) weights stacked as
                              channels [B, 2, T]; explicit F.pad(x, (2, 2)) then `conv`
                              Conv1d(2, 4, 5, padding=0, no bias); output transposed to
                              [B, T, 4]; `proj` Linear(4, 16, no bias)
                    score     Linear(16, 1, no bias): energies = score(tanh(q + k + loc))
                  masked softmax: masked_fill(~mask, -inf) before torch.softmax
      dec_cell    torch.nn.LSTMCell(64, 32)
      frame_proj  Linear(64, 8)
      stop        nn.Sequential(Linear(64, 1), Sigmoid)
    The per-step loop is a method of the root (`_step` is a plain method, not a module).

Output: (concat(frames, stop probabilities) [2, 6, 9], alignments [2, 6, 10]).

PADIFF_BUG (this side's bugs; the paddle side's names are accepted and ignored, any other name
raises ValueError):
  torch_loc_conv_causal_pad      -> LocFeatures pads (4, 0) instead of (2, 2) (the causal-conv
                                    idiom copied): the location features are shifted by two
                                    encoder steps
  torch_prenet_last_relu_missing -> the prenet Sequential ends with the second Linear (its last
                                    ReLU forgotten)
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

N_MELS, PRENET, ENC, ATT_RNN, ATT_DIM, LOC_F, LOC_K, DEC_RNN = 8, 16, 32, 32, 16, 4, 5, 32
BATCH, T_ENC, STEPS = 2, 10, 6
LENGTHS = (10, 7)
OWN_BUGS = {"torch_loc_conv_causal_pad", "torch_prenet_last_relu_missing"}
OTHER_BUGS = {"paddle_mask_after_softmax", "paddle_stop_no_sigmoid"}


class LocFeatures(nn.Module):
    def __init__(self, n_filters, kernel_size, attention_dim, causal_pad=False):
        super().__init__()
        self.pad = (kernel_size - 1, 0) if causal_pad else ((kernel_size - 1) // 2, (kernel_size - 1) // 2)
        self.conv = nn.Conv1d(2, n_filters, kernel_size, bias=False)
        self.proj = nn.Linear(n_filters, attention_dim, bias=False)

    def forward(self, weights_cat):  # [B, 2, T]
        f = self.conv(F.pad(weights_cat, self.pad))
        return self.proj(f.transpose(1, 2))


class LocAttention(nn.Module):
    def __init__(self, causal_pad=False):
        super().__init__()
        self.W_query = nn.Linear(ATT_RNN, ATT_DIM, bias=False)
        self.W_memory = nn.Linear(ENC, ATT_DIM, bias=False)
        self.loc = LocFeatures(LOC_F, LOC_K, ATT_DIM, causal_pad)
        self.score = nn.Linear(ATT_DIM, 1, bias=False)

    def preprocess(self, memory):
        return self.W_memory(memory)

    def forward(self, query, memory, keys, weights_cat, mask):
        e = self.score(torch.tanh(self.W_query(query)[:, None, :] + keys + self.loc(weights_cat))).squeeze(-1)
        e = e.masked_fill(~mask, float("-inf"))
        align = torch.softmax(e, dim=-1)
        return torch.bmm(align[:, None, :], memory)[:, 0], align


class Tacotron2Core(nn.Module):
    def __init__(self, causal_pad=False, prenet_last_relu=True):
        super().__init__()
        pre = [nn.Linear(N_MELS, PRENET), nn.ReLU(), nn.Linear(PRENET, PRENET)]
        if prenet_last_relu:
            pre.append(nn.ReLU())
        self.prenet = nn.Sequential(*pre)
        self.att_cell = nn.LSTMCell(PRENET + ENC, ATT_RNN)
        self.attn = LocAttention(causal_pad)
        self.dec_cell = nn.LSTMCell(ATT_RNN + ENC, DEC_RNN)
        self.frame_proj = nn.Linear(DEC_RNN + ENC, N_MELS)
        self.stop = nn.Sequential(nn.Linear(DEC_RNN + ENC, 1), nn.Sigmoid())

    def _step(self, x, state, memory, keys, mask):
        att_hc, dec_hc, ctx, align, align_cum = state
        att_hc = self.att_cell(torch.cat([x, ctx], dim=1), att_hc)
        ctx, align = self.attn(att_hc[0], memory, keys, torch.stack([align, align_cum], dim=1), mask)
        align_cum = align_cum + align
        dec_hc = self.dec_cell(torch.cat([att_hc[0], ctx], dim=1), dec_hc)
        feat = torch.cat([dec_hc[0], ctx], dim=1)
        out = torch.cat([self.frame_proj(feat), self.stop(feat)], dim=1)
        return out, (att_hc, dec_hc, ctx, align, align_cum)

    def forward(self, memory, memory_lengths, frames):
        bsz, t_enc, _ = memory.shape
        mask = torch.arange(t_enc, device=memory.device)[None, :] < memory_lengths[:, None]
        dec_in = torch.cat([frames.new_zeros(bsz, 1, N_MELS), frames[:, :-1]], dim=1)
        dec_in = self.prenet(dec_in)
        keys = self.attn.preprocess(memory)

        def zeros(n):
            return memory.new_zeros(bsz, n)

        state = ((zeros(ATT_RNN), zeros(ATT_RNN)), (zeros(DEC_RNN), zeros(DEC_RNN)), zeros(ENC), zeros(t_enc), zeros(t_enc))
        outs, aligns = [], []
        for t in range(frames.size(1)):
            out, state = self._step(dec_in[:, t], state, memory, keys, mask)
            outs.append(out)
            aligns.append(state[3])
        return torch.stack(outs, dim=1), torch.stack(aligns, dim=1)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_tacotron_attn torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = Tacotron2Core(causal_pad=bug == "torch_loc_conv_causal_pad",
                      prenet_last_relu=bug != "torch_prenet_last_relu_missing")
    return m.eval()


def _arrays():
    rng = np.random.default_rng(21)
    memory = rng.standard_normal((BATCH, T_ENC, ENC)).astype("float32")
    frames = rng.standard_normal((BATCH, STEPS, N_MELS)).astype("float32")
    return memory, np.array(LENGTHS, dtype="int64"), frames


def inputs():
    memory, lengths, frames = _arrays()
    return (torch.from_numpy(memory), torch.from_numpy(lengths), torch.from_numpy(frames)), {}


def loss(output):
    # (frames + stop [2, 6, 9], alignments [2, 6, 10])
    return (output[0] ** 2).mean()

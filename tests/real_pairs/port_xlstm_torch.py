"""Hand-written port, torch side: a tiny xLSTM language model of mLSTM blocks (written by "person B").

The same math as port_xlstm_paddle.py, re-implemented by hand: input_ids [2, 10] (positional,
vocabulary 48) -> embedding 16 -> 2 residual mLSTM blocks (inner 32, 2 heads of 16, causal conv
kernel 4, headwise q / k / v maps of 4 x 4 blocks) -> norm -> untied head: logits [2, 10, 48].

Torch idioms on this side (the memory is the RECURRENT step form):
- root `XLSTMLanguageModel`: `embedding`, `layers` (nn.ModuleList of `XBlock`), `post_norm`,
  `lm_head` (nn.Linear(16, 48, bias=False)).
- every LayerNorm is `DeltaLayerNorm` (xLSTM-repo style residual weight): parameter `delta`,
  F.layer_norm(x, weight = 1 + delta, bias=None).
- `XBlock` registers `norm`, `lift_x`, `lift_z` (two separate nn.Linear(16, 32): the
  up-projection is NOT fused), `conv` (`LeftPadConv1d`: an nn.Conv1d(32, 32, 4, groups=32)
  subclass that F.pads 3 zeros on the left in its own forward), `wq`, `wk`, `wv` (nn.Conv1d(32,
  32, 1, groups=8, bias=False): the headwise maps as grouped 1x1 convs on the channel-first map),
  `gates` (ONE nn.Linear(96, 4): rows 0:2 input gate, 2:4 forget gate), `memory`
  (`RecurrentMatrixMemory`, no parameters), `hnorm_delta` [32], `skip` [32], `out`.
  The per-head output norm is inline in the block: F.layer_norm over each head's 16 features,
  times (1 + hnorm_delta).
- `RecurrentMatrixMemory`: a Python loop over the 10 steps with state C [B, H, 16, 16], n
  [B, H, 16] and the max-stabiliser m [B, H] (initial -inf): log f = log(sigmoid(f~)),
  m_t = max(log f + m_{t-1}, i~), f' = exp(log f + m_{t-1} - m_t), i' = exp(i~ - m_t),
  C = f' C + i' k v^T, n = f' n + i' k (k scaled by 1/sqrt(16)),
  h = C^T q / (max(|n . q|, exp(-m_t)) + 1e-6).

PADIFF_BUG names planted on this side (the paddle side's names are accepted and ignored; any
other name raises ValueError):
  torch_fgate_no_log          -> the step uses sigmoid(f~) itself as the LOG forget gate (the log
                                 is dropped), so the memory is scaled by e^sigmoid > 1 each step
  torch_headnorm_whole_width  -> the block's output norm normalises over all 32 inner features
                                 (one LayerNorm) instead of per head (2 groups of 16)
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

V, D, NUM_BLOCKS = 48, 16, 2
INNER, NH, KCONV, BLOCKSIZE = 32, 2, 4, 4
DH = INNER // NH
B, T = 2, 10
OWN_BUGS = {"torch_fgate_no_log", "torch_headnorm_whole_width"}
OTHER_BUGS = {"paddle_decay_includes_own_gate", "paddle_conv_keeps_right_end"}


class DeltaLayerNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.delta = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        return F.layer_norm(x, self.delta.shape, weight=1.0 + self.delta, bias=None, eps=self.eps)


class LeftPadConv1d(nn.Conv1d):
    def forward(self, x):  # [B, C, T]
        return self._conv_forward(F.pad(x, (self.kernel_size[0] - 1, 0)), self.weight, self.bias)


class RecurrentMatrixMemory(nn.Module):
    def __init__(self, eps=1e-6, log_forget=True):
        super().__init__()
        self.eps, self.log_forget = eps, log_forget

    def forward(self, q, k, v, i_pre, f_pre):
        # q, k, v: [B, H, T, DH]; i_pre, f_pre: [B, H, T]
        bsz, nh, steps, dh = q.shape
        C = q.new_zeros(bsz, nh, dh, dh)
        n = q.new_zeros(bsz, nh, dh)
        m = q.new_full((bsz, nh), float("-inf"))
        hs = []
        for t in range(steps):
            if self.log_forget:
                log_f = torch.log(torch.sigmoid(f_pre[:, :, t]))
            else:
                log_f = torch.sigmoid(f_pre[:, :, t])
            i_t = i_pre[:, :, t]
            m_new = torch.maximum(log_f + m, i_t)
            f_act = torch.exp(log_f + m - m_new)
            i_act = torch.exp(i_t - m_new)
            k_t = k[:, :, t] / math.sqrt(dh)
            v_t, q_t = v[:, :, t], q[:, :, t]
            C = f_act[..., None, None] * C + i_act[..., None, None] * (k_t.unsqueeze(-1) * v_t.unsqueeze(-2))
            n = f_act[..., None] * n + i_act[..., None] * k_t
            num = torch.einsum("bhd,bhde->bhe", q_t, C)
            den = torch.maximum((n * q_t).sum(-1).abs(), torch.exp(-m_new)) + self.eps
            hs.append(num / den[..., None])
            m = m_new
        return torch.stack(hs, dim=2)


class XBlock(nn.Module):
    def __init__(self, log_forget=True, whole_width_norm=False):
        super().__init__()
        self.whole_width_norm = whole_width_norm
        self.norm = DeltaLayerNorm(D)
        self.lift_x = nn.Linear(D, INNER)
        self.lift_z = nn.Linear(D, INNER)
        self.conv = LeftPadConv1d(INNER, INNER, KCONV, groups=INNER)
        self.wq = nn.Conv1d(INNER, INNER, 1, groups=INNER // BLOCKSIZE, bias=False)
        self.wk = nn.Conv1d(INNER, INNER, 1, groups=INNER // BLOCKSIZE, bias=False)
        self.wv = nn.Conv1d(INNER, INNER, 1, groups=INNER // BLOCKSIZE, bias=False)
        self.gates = nn.Linear(3 * INNER, 2 * NH)
        self.memory = RecurrentMatrixMemory(log_forget=log_forget)
        self.hnorm_delta = nn.Parameter(torch.zeros(INNER))
        self.skip = nn.Parameter(torch.ones(INNER))
        self.out = nn.Linear(INNER, D)

    def forward(self, x):
        bsz, steps, _ = x.shape
        u = self.norm(x)
        xm = self.lift_x(u).transpose(1, 2)  # [B, C, T]
        z = self.lift_z(u)
        xc = F.silu(self.conv(xm))
        q = self.wq(xc).transpose(1, 2)
        k = self.wk(xc).transpose(1, 2)
        v = self.wv(xm).transpose(1, 2)
        xc = xc.transpose(1, 2)
        i_pre, f_pre = self.gates(torch.cat([q, k, v], dim=-1)).split(NH, dim=-1)  # [B, T, NH]

        def split_heads(t):
            return t.view(bsz, steps, NH, DH).transpose(1, 2)

        h = self.memory(split_heads(q), split_heads(k), split_heads(v), i_pre.transpose(1, 2), f_pre.transpose(1, 2))
        h = h.transpose(1, 2)  # [B, T, NH, DH]
        if self.whole_width_norm:
            h = F.layer_norm(h.reshape(bsz, steps, INNER), (INNER,), eps=1e-5)
        else:
            h = F.layer_norm(h, (DH,), eps=1e-5).reshape(bsz, steps, INNER)
        h = h * (1.0 + self.hnorm_delta)
        return x + self.out((h + self.skip * xc) * F.silu(z))


class XLSTMLanguageModel(nn.Module):
    def __init__(self, log_forget=True, whole_width_norm=False):
        super().__init__()
        self.embedding = nn.Embedding(V, D)
        self.layers = nn.ModuleList([XBlock(log_forget, whole_width_norm) for _ in range(NUM_BLOCKS)])
        self.post_norm = DeltaLayerNorm(D)
        self.lm_head = nn.Linear(D, V, bias=False)

    def forward(self, input_ids):
        x = self.embedding(input_ids)
        for block in self.layers:
            x = block(x)
        return self.lm_head(self.post_norm(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_xlstm torch: unknown PADIFF_BUG {bug!r}")
    torch.manual_seed(0)
    m = XLSTMLanguageModel(log_forget=bug != "torch_fgate_no_log", whole_width_norm=bug == "torch_headnorm_whole_width")
    return m.eval()


def _ids():
    rng = np.random.default_rng(3801)
    return rng.integers(0, V, size=(B, T)).astype("int64")


def inputs():
    return (torch.from_numpy(_ids()),), {}


def loss(output):
    # logits [2, 10, 48]
    return (output**2).mean()

"""Hand-written port, paddle side: a tiny xLSTM language model of mLSTM blocks (written by "person A").

Input: `input_ids` [2, 10] int64 (positional, numpy rng seed 3801, vocabulary 48). Output: logits
[2, 10, 48].

Network (NX-AI xLSTM "mLSTM layer" with pre up-projection, shrunk):
  embedding 48 x 16 -> 2 residual mLSTM blocks -> LayerNorm (no bias) -> Linear(16, 48, no bias)
  mLSTM block (inner width 32 = 2 x 16, 2 heads of 16):
      u = LayerNorm(x) (no bias);   [xm | z] = up-projection(u) (16 -> 64)
      xc = silu(causal depthwise conv(xm)) (kernel 4, left context only)
      q = Wq xc, k = Wk xc, v = Wv xm   (block-diagonal "headwise" maps, 8 blocks of 4 x 4)
      gates: i~ = W_i [q, k, v] + b_i,  f~ = W_f [q, k, v] + b_f   (one scalar per head and step)
      matrix memory, per head (d = 16):  log f_t = logsigmoid(f~_t)
          C_t = f_t C_{t-1} + exp(i~_t) k_t v_t^T / sqrt(d),   n_t = f_t n_{t-1} + exp(i~_t) k_t / sqrt(d)
          h_t = C_t^T q_t / max(|n_t . q_t|, 1)    (computed stabilised: everything scaled by
                                                    exp(-m_t), m_t = running max of the log weights)
      h = per-head LayerNorm(h) (group norm, 2 groups, weight only)
      out = down-projection((h + skip * xc) * silu(z));   return x + out

Paddle idioms on this side (the memory is the PARALLEL / quadratic form):
- root `TinyXLSTMLM`: `tok_emb`, `mlstm_stack` (LayerList of `MLSTMLayer`), `final_ln`
  (nn.LayerNorm(bias_attr=False), weight = the gain itself), `vocab_out` (nn.Linear, no bias).
- `MLSTMLayer` registers `ln`, `up_proj` (ONE fused nn.Linear(16, 64): columns 0:32 = xm,
  32:64 = z), `causal`, `q_map`, `k_map`, `v_map`, `cell`, `skip_scale` [32], `down_proj`.
- `CausalDepthwise`: its child `dw` nn.Conv1D(32, 32, 4, padding=3, groups=32) over the
  channel-first map, then the first T outputs are kept (the right-hand 3 dropped) in its own forward.
- `BlockDiagProj`: one parameter `blocks` [8, 4, 4] ([block, out, in]), applied with einsum.
- `ParallelMLSTMCell`: `in_gate`, `fg_gate` nn.Linear(96, 2) (separate), `head_norm`
  nn.GroupNorm(2, 32, bias_attr=False) on a [B*T, 32, 1] view. The memory is the quadratic
  form (helper `_parallel_memory`, inline): cumulative log-sigmoid forget gates give a [T, T]
  log-decay matrix, plus i~ per column, causal mask, row max stabiliser, exp, times q k^T / sqrt(d),
  normaliser max(|row sum|, exp(-max)) + 1e-6, times v.
- model() gives the norms gains around 1, the skip a non-unit scale, the gates small weights,
  input-gate biases N(0, 0.5) and forget-gate biases in [1, 4] (seeded, rng 3802).

The torch side (port_xlstm_torch.py) was written independently: a recurrent STEP loop over time,
separate up-projections, residual-parametrised norms (weight = 1 + delta), one fused gate Linear,
grouped 1x1 convs for the headwise maps and a left-padding conv subclass.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_decay_includes_own_gate -> the log-decay from step j to step i sums log f over
                                    j..i instead of j+1..i (the write at step j is also decayed
                                    by its own forget gate, sigmoid 0.67 .. 0.98 here)
  paddle_conv_keeps_right_end    -> CausalDepthwise keeps the LAST T outputs of the padded conv
                                    instead of the first T: the conv looks 3 steps ahead
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, D_MODEL, N_LAYERS = 48, 16, 2
INNER, N_HEADS, CONV_K, QKV_BLOCK = 32, 2, 4, 4
HEAD_DIM = INNER // N_HEADS
SEQ, BATCH = 10, 2
MEM_EPS, NORM_EPS = 1e-6, 1e-5
OWN_BUGS = {"paddle_decay_includes_own_gate", "paddle_conv_keeps_right_end"}
OTHER_BUGS = {"torch_fgate_no_log", "torch_headnorm_whole_width"}


def _parallel_memory(q, k, v, i_pre, f_pre, own_gate=False):
    """q, k, v [B, H, T, d]; i_pre, f_pre [B, H, T, 1] -> h [B, H, T, d]."""
    T, d = q.shape[2], q.shape[3]
    log_f = F.log_sigmoid(f_pre)
    csum = paddle.cumsum(log_f, axis=2)  # inclusive: sum_{l<=i} log f_l
    log_decay = csum - csum.transpose([0, 1, 3, 2])  # [i, j] = sum_{j<l<=i} log f_l
    if own_gate:
        log_decay = log_decay + log_f.transpose([0, 1, 3, 2])
    causal = paddle.tril(paddle.ones([T, T], dtype="bool"))
    log_w = paddle.where(causal, log_decay + i_pre.transpose([0, 1, 3, 2]),
                         paddle.full_like(log_decay, float("-inf")))
    row_max = log_w.max(axis=-1, keepdim=True)
    weights = paddle.exp(log_w - row_max)
    scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(d) * weights
    normaliser = paddle.maximum(scores.sum(axis=-1, keepdim=True).abs(), paddle.exp(-row_max))
    return paddle.matmul(scores / (normaliser + MEM_EPS), v)


class CausalDepthwise(nn.Layer):
    def __init__(self, channels, kernel, keep_right=False):
        super().__init__()
        self.keep_right = keep_right
        self.dw = nn.Conv1D(channels, channels, kernel, padding=kernel - 1, groups=channels)

    def forward(self, x):  # [B, T, C]
        T = x.shape[1]
        y = self.dw(x.transpose([0, 2, 1]))  # [B, C, T + k - 1]
        y = y[:, :, y.shape[2] - T:] if self.keep_right else y[:, :, :T]
        return y.transpose([0, 2, 1])


class BlockDiagProj(nn.Layer):
    def __init__(self, width, block):
        super().__init__()
        self.block = block
        self.blocks = self.create_parameter([width // block, block, block],
                                            default_initializer=nn.initializer.Normal(0.0, 1.0 / math.sqrt(block)))

    def forward(self, x):
        b, t, w = x.shape
        xb = x.reshape([b, t, w // self.block, self.block])
        return paddle.einsum("btnd,nod->btno", xb, self.blocks).reshape([b, t, w])


class ParallelMLSTMCell(nn.Layer):
    def __init__(self, own_gate=False):
        super().__init__()
        self.own_gate = own_gate
        self.in_gate = nn.Linear(3 * INNER, N_HEADS)
        self.fg_gate = nn.Linear(3 * INNER, N_HEADS)
        self.head_norm = nn.GroupNorm(N_HEADS, INNER, epsilon=NORM_EPS, bias_attr=False)

    def forward(self, q, k, v):  # [B, T, INNER] each
        b, t, _ = q.shape
        qkv = paddle.concat([q, k, v], axis=-1)
        i_pre = self.in_gate(qkv).transpose([0, 2, 1]).unsqueeze(-1)  # [B, H, T, 1]
        f_pre = self.fg_gate(qkv).transpose([0, 2, 1]).unsqueeze(-1)

        def heads(x):
            return x.reshape([b, t, N_HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])

        h = _parallel_memory(heads(q), heads(k), heads(v), i_pre, f_pre, self.own_gate)
        h = h.transpose([0, 2, 1, 3]).reshape([b * t, INNER, 1])
        return self.head_norm(h).reshape([b, t, INNER])


class MLSTMLayer(nn.Layer):
    def __init__(self, own_gate=False, keep_right=False):
        super().__init__()
        self.ln = nn.LayerNorm(D_MODEL, epsilon=NORM_EPS, bias_attr=False)
        self.up_proj = nn.Linear(D_MODEL, 2 * INNER)
        self.causal = CausalDepthwise(INNER, CONV_K, keep_right)
        self.q_map = BlockDiagProj(INNER, QKV_BLOCK)
        self.k_map = BlockDiagProj(INNER, QKV_BLOCK)
        self.v_map = BlockDiagProj(INNER, QKV_BLOCK)
        self.cell = ParallelMLSTMCell(own_gate)
        self.skip_scale = self.create_parameter([INNER], default_initializer=nn.initializer.Constant(1.0))
        self.down_proj = nn.Linear(INNER, D_MODEL)

    def forward(self, x):
        xm, z = paddle.split(self.up_proj(self.ln(x)), 2, axis=-1)
        xc = F.silu(self.causal(xm))
        h = self.cell(self.q_map(xc), self.k_map(xc), self.v_map(xm))
        return x + self.down_proj((h + self.skip_scale * xc) * F.silu(z))


class TinyXLSTMLM(nn.Layer):
    def __init__(self, own_gate=False, keep_right=False):
        super().__init__()
        self.tok_emb = nn.Embedding(VOCAB, D_MODEL)
        self.mlstm_stack = nn.LayerList([MLSTMLayer(own_gate, keep_right) for _ in range(N_LAYERS)])
        self.final_ln = nn.LayerNorm(D_MODEL, epsilon=NORM_EPS, bias_attr=False)
        self.vocab_out = nn.Linear(D_MODEL, VOCAB, bias_attr=False)

    def forward(self, input_ids):
        x = self.tok_emb(input_ids)
        for layer in self.mlstm_stack:
            x = layer(x)
        return self.vocab_out(self.final_ln(x))


def _trained_look(m):
    rng = np.random.default_rng(3802)

    def put(p, arr):
        p.set_value(arr.astype("float32").reshape(p.shape))

    for _name, layer in m.named_sublayers():
        if isinstance(layer, (nn.LayerNorm, nn.GroupNorm)):
            put(layer.weight, rng.normal(1.0, 0.15, layer.weight.shape))
        elif isinstance(layer, MLSTMLayer):
            put(layer.skip_scale, rng.uniform(0.5, 1.5, [INNER]))
            put(layer.up_proj.bias, rng.normal(0.0, 0.1, [2 * INNER]))
            put(layer.down_proj.bias, rng.normal(0.0, 0.1, [D_MODEL]))
            put(layer.causal.dw.bias, rng.normal(0.0, 0.1, [INNER]))
        elif isinstance(layer, ParallelMLSTMCell):
            put(layer.in_gate.weight, rng.normal(0.0, 0.1, [3 * INNER, N_HEADS]))
            put(layer.in_gate.bias, rng.normal(0.0, 0.5, [N_HEADS]))
            put(layer.fg_gate.weight, rng.normal(0.0, 0.1, [3 * INNER, N_HEADS]))
            put(layer.fg_gate.bias, rng.uniform(1.0, 4.0, [N_HEADS]))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_xlstm paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = TinyXLSTMLM(own_gate=bug == "paddle_decay_includes_own_gate", keep_right=bug == "paddle_conv_keeps_right_end")
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(3801)
    return rng.integers(0, VOCAB, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 10, 48]
    return (output**2).mean()

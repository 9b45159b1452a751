"""Hand-written port, paddle side: a tiny DeltaNet linear-attention language model (written by "person A").

Sizes: vocab 64, width 32, 2 heads of 16 (key and value head size 16), SwiGLU hidden 64,
2 layers, short-conv kernel 4, sequence length 12, batch 2. Input: positional `input_ids`
[2, 12] int64 (numpy rng seed 23). Output: logits [2, 12, 64].

One DeltaNet token mixer (fla-style "DeltaNet" layer, pre-norm residual blocks, RMSNorm eps 1e-6):
  q, k, v = silu(causal_depthwise_conv4(Wq x)), ... (kernel 4, no bias, left pad 3)
  q, k    = L2-normalised per head (x * rsqrt(sum x^2 + 1e-6)); q *= 1 / sqrt(16)
  beta_t  = sigmoid(Wb x_t), one scalar per head
  S_t     = S_{t-1} + beta_t (v_t - S_{t-1} k_t) k_t^T        (S_0 = 0, S is [dv, dk])
  o_t     = S_t q_t
  y       = Wo( RMSNorm_16(o) * w * silu(Wg x) )                (gated RMSNorm per head, eps 1e-5)

Paddle idioms on this side:
- root `DeltaNetLM`: `embeddings` nn.Embedding(64, 32), `layers` = LayerList of `DeltaNetBlock`
  (iterated), `norm` (RMSNorm), `lm_head` Linear(32, 64, no bias).
- `DeltaNetBlock`: `attn_norm`, `attn` (DeltaNetAttention), `mlp_norm`, `mlp` (GatedMLP).
- `RMSNorm` hand-written with create_parameter: x * rsqrt(mean(x^2) + eps) * w.
- `DeltaNetAttention` registers SEPARATE projections `q_proj`, `k_proj`, `v_proj` (32 -> 32,
  no bias), `b_proj` (32 -> 2, no bias), then `q_conv1d`, `k_conv1d`, `v_conv1d`
  (ShortConvolution), then `g_proj` (32 -> 32, no bias), `o_norm` (GatedRMSNorm over the 16
  values of one head) and `o_proj` (32 -> 32, no bias).
  The delta rule is written STEP BY STEP: a Python loop over the 12 positions with a
  [B, H, dv, dk] state, inline in the forward; beta = F.sigmoid inline; the L2 norm is inline.
- `ShortConvolution` SUBCLASSES nn.Conv1D (depthwise, groups=32, no bias, padding 0,
  data_format="NLC"): its forward left-pads the time axis by 3 with F.pad, runs the conv and
  applies F.silu, so its output is already activated ([B, L, 32] in, [B, L, 32] out).
- `GatedRMSNorm` forward(x, gate) on [B, L, H, 16]: normalise first, then multiply by
  silu(gate) (fla's FusedRMSNormGated order).
- `GatedMLP`: separate `gate_proj` / `up_proj` (32 -> 64), F.silu inline, `down_proj`.
- model() gives every norm weight trained-looking values Normal(1, 0.1) and the conv kernels
  Normal(0, 1.0), and the embedding Normal(0, 0.5) (rng seed 31), so nothing is an identity.

The torch side (port_deltanet_torch.py) was written independently: one packed q|k|v|beta input
projection, one packed 96-channel depthwise conv, and the CHUNKED (WY / UT-transform) form of
the delta rule in a parameter-free module, with the state kept as [dk, dv].

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_conv_pad_right -> ShortConvolution pads the 3 zeros at the END of the time axis instead
                           of the start (F.pad [0, 3] instead of [3, 0]), so the "causal" conv
                           looks at the current and the next 3 tokens; in every short conv
  paddle_beta_fp16      -> beta is rounded through float16 (sigmoid in float32, cast to float16
                           and back), as a mixed-precision recipe would keep the gate
                           (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, D_MODEL, N_HEADS, HEAD_DIM, FFN, N_LAYERS, CONV_K = 64, 32, 2, 16, 64, 2, 4
NORM_EPS, ONORM_EPS = 1e-6, 1e-5
BATCH, SEQ = 2, 12
OWN_BUGS = {"paddle_conv_pad_right", "paddle_beta_fp16"}
OTHER_BUGS = {"torch_wy_diag_masked", "torch_gate_before_norm"}


class RMSNorm(nn.Layer):
    def __init__(self, hidden_size, eps=NORM_EPS):
        super().__init__()
        self.eps = eps
        self.weight = self.create_parameter([hidden_size], default_initializer=nn.initializer.Constant(1.0))

    def forward(self, x):
        return x * paddle.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class GatedRMSNorm(nn.Layer):
    """RMSNorm over the last axis, then * silu(gate)."""

    def __init__(self, hidden_size, eps=ONORM_EPS):
        super().__init__()
        self.eps = eps
        self.weight = self.create_parameter([hidden_size], default_initializer=nn.initializer.Constant(1.0))

    def forward(self, x, gate):
        y = x * paddle.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight
        return y * F.silu(gate)


class ShortConvolution(nn.Conv1D):
    """Causal depthwise conv over [B, L, C] with a fused silu."""

    def __init__(self, channels, kernel_size, pad_right=False):
        super().__init__(channels, channels, kernel_size, padding=0, groups=channels, bias_attr=False,
                         data_format="NLC")
        self.kernel_size_ = kernel_size
        self.pad_right = pad_right

    def forward(self, x):
        pad = [0, self.kernel_size_ - 1] if self.pad_right else [self.kernel_size_ - 1, 0]
        x = F.pad(x, pad, data_format="NLC")
        return F.silu(super().forward(x))


class DeltaNetAttention(nn.Layer):
    def __init__(self, pad_right=False, beta_fp16=False):
        super().__init__()
        self.beta_fp16 = beta_fp16
        self.q_proj = nn.Linear(D_MODEL, N_HEADS * HEAD_DIM, bias_attr=False)
        self.k_proj = nn.Linear(D_MODEL, N_HEADS * HEAD_DIM, bias_attr=False)
        self.v_proj = nn.Linear(D_MODEL, N_HEADS * HEAD_DIM, bias_attr=False)
        self.b_proj = nn.Linear(D_MODEL, N_HEADS, bias_attr=False)
        self.q_conv1d = ShortConvolution(N_HEADS * HEAD_DIM, CONV_K, pad_right)
        self.k_conv1d = ShortConvolution(N_HEADS * HEAD_DIM, CONV_K, pad_right)
        self.v_conv1d = ShortConvolution(N_HEADS * HEAD_DIM, CONV_K, pad_right)
        self.g_proj = nn.Linear(D_MODEL, N_HEADS * HEAD_DIM, bias_attr=False)
        self.o_norm = GatedRMSNorm(HEAD_DIM)
        self.o_proj = nn.Linear(N_HEADS * HEAD_DIM, D_MODEL, bias_attr=False)

    @staticmethod
    def _l2norm(x):
        return x * paddle.rsqrt((x * x).sum(-1, keepdim=True) + 1e-6)

    def forward(self, hidden_states):
        b, seq, _ = hidden_states.shape
        q = self.q_conv1d(self.q_proj(hidden_states))
        k = self.k_conv1d(self.k_proj(hidden_states))
        v = self.v_conv1d(self.v_proj(hidden_states))
        q = self._l2norm(q.reshape([b, seq, N_HEADS, HEAD_DIM])) * (HEAD_DIM**-0.5)
        k = self._l2norm(k.reshape([b, seq, N_HEADS, HEAD_DIM]))
        v = v.reshape([b, seq, N_HEADS, HEAD_DIM])
        beta = F.sigmoid(self.b_proj(hidden_states))  # [B, L, H]
        if self.beta_fp16:
            beta = beta.astype("float16").astype("float32")

        state = paddle.zeros([b, N_HEADS, HEAD_DIM, HEAD_DIM], dtype=hidden_states.dtype)  # [B, H, dv, dk]
        outs = []
        for t in range(seq):
            q_t, k_t, v_t = q[:, t], k[:, t], v[:, t]  # [B, H, 16]
            b_t = beta[:, t].unsqueeze(-1)  # [B, H, 1]
            v_old = paddle.matmul(state, k_t.unsqueeze(-1)).squeeze(-1)  # S_{t-1} k_t, [B, H, dv]
            delta = b_t * (v_t - v_old)
            state = state + paddle.matmul(delta.unsqueeze(-1), k_t.unsqueeze(-2))
            outs.append(paddle.matmul(state, q_t.unsqueeze(-1)).squeeze(-1))
        o = paddle.stack(outs, axis=1)  # [B, L, H, dv]

        g = self.g_proj(hidden_states).reshape([b, seq, N_HEADS, HEAD_DIM])
        o = self.o_norm(o, g)
        return self.o_proj(o.reshape([b, seq, N_HEADS * HEAD_DIM]))


class GatedMLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(D_MODEL, FFN, bias_attr=False)
        self.up_proj = nn.Linear(D_MODEL, FFN, bias_attr=False)
        self.down_proj = nn.Linear(FFN, D_MODEL, bias_attr=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DeltaNetBlock(nn.Layer):
    def __init__(self, **kw):
        super().__init__()
        self.attn_norm = RMSNorm(D_MODEL)
        self.attn = DeltaNetAttention(**kw)
        self.mlp_norm = RMSNorm(D_MODEL)
        self.mlp = GatedMLP()

    def forward(self, x):
        x = x + self.attn(self.attn_norm(x))
        return x + self.mlp(self.mlp_norm(x))


class DeltaNetLM(nn.Layer):
    def __init__(self, **kw):
        super().__init__()
        self.embeddings = nn.Embedding(VOCAB, D_MODEL)
        self.layers = nn.LayerList([DeltaNetBlock(**kw) for _ in range(N_LAYERS)])
        self.norm = RMSNorm(D_MODEL)
        self.lm_head = nn.Linear(D_MODEL, VOCAB, bias_attr=False)

    def forward(self, input_ids):
        h = self.embeddings(input_ids)
        for layer in self.layers:
            h = layer(h)
        return self.lm_head(self.norm(h))


def _trained_look(m):
    rng = np.random.default_rng(31)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, (RMSNorm, GatedRMSNorm)):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.normal(1.0, 0.1, n).astype("float32"))
        if isinstance(layer, ShortConvolution):
            layer.weight.set_value(rng.normal(0.0, 1.0, layer.weight.shape).astype("float32"))
    m.embeddings.weight.set_value(rng.normal(0.0, 0.5, (VOCAB, D_MODEL)).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_deltanet paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = DeltaNetLM(pad_right=bug == "paddle_conv_pad_right", beta_fp16=bug == "paddle_beta_fp16")
    _trained_look(m)
    m.eval()
    return m


def _ids():
    return np.random.default_rng(23).integers(0, VOCAB, size=(BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 12, 64]
    return (output**2).mean()

"""Hand-written port, paddle side: a tiny RWKV-4-style language model (written by "person A").

Sizes: vocab 64, d_model 32, channel-mix hidden 64, 2 layers, sequence length 8, batch 2.
LayerNorm epsilon 1e-5 everywhere. The LM head is a separate (untied) Linear(32, 64, no bias).

The model (RWKV v4, "GPT mode" over a whole sequence):
  x = pre_ln(embeddings(ids))
  per layer: x = x + attention(attn_norm(x)); x = x + feed_forward(ffn_norm(x))
  logits = lm_head(final_norm(x))
- token shift: prev[t] = x[t - 1], prev[0] = 0;
- time mixing: xk = x * mix_key + prev * (1 - mix_key) (same for value / receptance with their own
  learned mix vectors), k = key_proj(xk), v = value_proj(xv), r = sigmoid(gate_proj(xr)),
  out = out_proj(r * wkv(k, v)), with the WKV recurrence
      wkv_t = (sum_{i<t} e^{(t-1-i) w + k_i} v_i + e^{u + k_t} v_t)
            / (sum_{i<t} e^{(t-1-i) w + k_i}     + e^{u + k_t}),
  w = -exp(decay) (per channel), u = bonus (per channel, "time_first");
- channel mixing: k = relu(up(xk))^2, out = sigmoid(gate(xr)) * down(k).

Paddle idioms on this side:
- root `RwkvLM`: `embeddings` (nn.Embedding 64x32, Normal(0, 0.15)), `pre_ln` (the RWKV "ln0",
  at the ROOT, applied once to the embeddings), `layers` = LayerList of `RwkvLayer`,
  `final_norm`, `lm_head` (nn.Linear, weight [in, out]).
- `RwkvLayer` registers `attention` and `feed_forward` BEFORE `attn_norm` / `ffn_norm` (the norms
  are called first).
- the token shift is a helper function: concat of a zero row in front of x[:, :-1] (time mix) or
  F.pad of the time axis then slicing (channel mix); no module.
- `RwkvSelfAttention`: per-channel parameters `decay`, `bonus`, `mix_key`, `mix_value`,
  `mix_receptance` ([32] each, create_parameter), then `key_proj`, `value_proj`, `gate_proj`,
  `out_proj` (Linear 32 -> 32, no bias). The WKV is the numerically STABILISED recurrence (the
  log-space "aa, bb, pp" state of the official RNN mode / CUDA kernel), a python loop over time.
- `RwkvFeedForward`: `mix_key`, `mix_receptance`, `up` (32 -> 64), `down` (64 -> 32), `gate`
  (32 -> 32), no biases; squared ReLU via F.relu(...).square().

The torch side (port_rwkv_torch.py) was written independently: official RWKV-v4 names, ln0
inside the first block, nn.ZeroPad2d((0, 0, 1, -1)) token-shift modules, mix vectors of shape
[1, 1, 32] and a plain-exp, parallel (masked decay matrix + einsum) WKV instead of the loop.

PADIFF_BUG plants this side's bugs (see port_rwkv_truth.json); the torch side's bug names are
accepted and ignored, any other name raises ValueError:
  paddle_wkv_no_bonus -> in the stabilised loop the current token's exponent is k_t instead of
                         bonus + k_t (time_first dropped), in every layer
  paddle_ln0_eps      -> pre_ln is built with epsilon=1e-6 instead of 1e-5 (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCAB, D_MODEL, D_FFN, LAYERS = 64, 32, 64, 2
EPS = 1e-5
BATCH, SEQ = 2, 8
OWN_BUGS = {"paddle_wkv_no_bonus", "paddle_ln0_eps"}
OTHER_BUGS = {"torch_ffn_mix_copy_paste"}


def _layer_norm(d, eps=EPS):
    return nn.LayerNorm(
        d,
        epsilon=eps,
        weight_attr=nn.initializer.Normal(1.0, 0.1),
        bias_attr=nn.initializer.Normal(0.0, 0.05),
    )


def shift_concat(x):
    """[b, t, c] -> previous token, zeros at t = 0."""
    return paddle.concat([paddle.zeros_like(x[:, :1]), x[:, :-1]], axis=1)


def shift_pad(x):
    return F.pad(x, [1, 0], mode="constant", value=0.0, data_format="NLC")[:, :-1]


class RwkvSelfAttention(nn.Layer):
    def __init__(self, no_bonus=False):
        super().__init__()
        self.no_bonus = no_bonus
        uni = nn.initializer.Uniform
        self.decay = self.create_parameter([D_MODEL], default_initializer=uni(-1.0, 1.0))
        self.bonus = self.create_parameter([D_MODEL], default_initializer=nn.initializer.Normal(-0.5, 0.5))
        self.mix_key = self.create_parameter([D_MODEL], default_initializer=uni(0.2, 0.9))
        self.mix_value = self.create_parameter([D_MODEL], default_initializer=uni(0.2, 0.9))
        self.mix_receptance = self.create_parameter([D_MODEL], default_initializer=uni(0.2, 0.9))
        self.key_proj = nn.Linear(D_MODEL, D_MODEL, bias_attr=False)
        self.value_proj = nn.Linear(D_MODEL, D_MODEL, bias_attr=False)
        self.gate_proj = nn.Linear(D_MODEL, D_MODEL, bias_attr=False)
        self.out_proj = nn.Linear(D_MODEL, D_MODEL, bias_attr=False)

    def wkv(self, k, v):
        """Stabilised RWKV-4 recurrence: aa / bb are the numerator / denominator scaled by e^-pp."""
        b, t_len, c = k.shape
        w = -paddle.exp(self.decay)
        u = self.bonus
        aa = paddle.zeros([b, c], dtype=k.dtype)
        bb = paddle.zeros([b, c], dtype=k.dtype)
        pp = paddle.full([b, c], -1e38, dtype=k.dtype)
        outs = []
        for t in range(t_len):
            kt, vt = k[:, t], v[:, t]
            ww = kt if self.no_bonus else u + kt
            p = paddle.maximum(pp, ww)
            e1 = paddle.exp(pp - p)
            e2 = paddle.exp(ww - p)
            outs.append((e1 * aa + e2 * vt) / (e1 * bb + e2))
            ww = pp + w
            p = paddle.maximum(ww, kt)
            e1 = paddle.exp(ww - p)
            e2 = paddle.exp(kt - p)
            aa = e1 * aa + e2 * vt
            bb = e1 * bb + e2
            pp = p
        return paddle.stack(outs, axis=1)

    def forward(self, x):
        prev = shift_concat(x)
        xk = x * self.mix_key + prev * (1.0 - self.mix_key)
        xv = x * self.mix_value + prev * (1.0 - self.mix_value)
        xr = x * self.mix_receptance + prev * (1.0 - self.mix_receptance)
        k = self.key_proj(xk)
        v = self.value_proj(xv)
        r = F.sigmoid(self.gate_proj(xr))
        return self.out_proj(r * self.wkv(k, v))


class RwkvFeedForward(nn.Layer):
    def __init__(self):
        super().__init__()
        uni = nn.initializer.Uniform
        self.mix_key = self.create_parameter([D_MODEL], default_initializer=uni(0.2, 0.9))
        self.mix_receptance = self.create_parameter([D_MODEL], default_initializer=uni(0.2, 0.9))
        self.up = nn.Linear(D_MODEL, D_FFN, bias_attr=False)
        self.down = nn.Linear(D_FFN, D_MODEL, bias_attr=False)
        self.gate = nn.Linear(D_MODEL, D_MODEL, bias_attr=False)

    def forward(self, x):
        prev = shift_pad(x)
        xk = x * self.mix_key + prev * (1.0 - self.mix_key)
        xr = x * self.mix_receptance + prev * (1.0 - self.mix_receptance)
        gate = F.sigmoid(self.gate(xr))
        hidden = F.relu(self.up(xk)).square()
        return gate * self.down(hidden)


class RwkvLayer(nn.Layer):
    def __init__(self, no_bonus=False):
        super().__init__()
        self.attention = RwkvSelfAttention(no_bonus)
        self.feed_forward = RwkvFeedForward()
        self.attn_norm = _layer_norm(D_MODEL)
        self.ffn_norm = _layer_norm(D_MODEL)

    def forward(self, x):
        x = x + self.attention(self.attn_norm(x))
        x = x + self.feed_forward(self.ffn_norm(x))
        return x


class RwkvLM(nn.Layer):
    def __init__(self, no_bonus=False, ln0_eps=EPS):
        super().__init__()
        self.embeddings = nn.Embedding(VOCAB, D_MODEL, weight_attr=nn.initializer.Normal(0.0, 0.15))
        self.pre_ln = _layer_norm(D_MODEL, ln0_eps)
        self.layers = nn.LayerList([RwkvLayer(no_bonus) for _ in range(LAYERS)])
        self.final_norm = _layer_norm(D_MODEL)
        self.lm_head = nn.Linear(D_MODEL, VOCAB, bias_attr=False)

    def forward(self, input_ids):
        x = self.pre_ln(self.embeddings(input_ids))
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.final_norm(x))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_rwkv paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = RwkvLM(no_bonus=bug == "paddle_wkv_no_bonus", ln0_eps=1e-6 if bug == "paddle_ln0_eps" else EPS)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(5)
    return rng.integers(0, VOCAB, (BATCH, SEQ)).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # logits [2, 8, 64]
    return (output**2).mean()

"""Hand-written port, paddle side: a tiny Temporal Fusion Transformer (written by "person A").

Sizes: hidden 16, 3 static real covariates, 4 time-varying real inputs, 8 time steps, batch 2,
4 attention heads of 4, 3 quantile outputs. Inputs (positional): `static_reals` [2, 3] and
`time_reals` [2, 8, 4] (numpy rng seed 31, standard normal). Output: quantile forecasts
[2, 8, 3] (one per time step).

The math (Lim et al., TFT), identical on both sides:
  prescale      emb_j = x_j * w_j + b_j                    (one Linear(1, 16) per variable)
  GRN(a, c)     eta2 = elu(W2 a + W3 c + b2); eta1 = W1 eta2 + b1;
                out = LayerNorm(skip(a) + sigmoid(Wg eta1 + bg) * (Wv eta1 + bv))
                (skip = Linear when the in / out widths differ, else identity; W3 has no bias)
  VSN(embs, c)  v = softmax(GRN_flat(concat(embs), c)) over the variables;
                out = sum_j v_j * GRN_j(emb_j)
  static        s = VSN_static(static embs); c_sel, c_enr, c_h, c_c = four GRNs of s
  temporal      x = VSN_time(time embs, c_sel); o = LSTM(x, (c_h, c_c))
                y = GateAddNorm(o, skip=x)        (GLU then LayerNorm(skip + glu))
                e = GRN_enrich(y, c_enr)
                a = InterpretableMHA(e)           (causal; heads share ONE value projection:
                    head_h = softmax(Q_h K_h^T / sqrt(4) + mask) V, a = mean_h(head_h) W_o + b_o)
                z = GateAddNorm(a, skip=e); p = GRN_pos(z); f = GateAddNorm(p, skip=y)
  output        Linear(16, 3) on every step
LayerNorm eps 1e-5 everywhere.

Paddle idioms on this side (pytorch-forecasting-like names, paddle API):
- root `TemporalFusionTransformer`: `static_prescalers` / `time_prescalers` = LayerList of
  Linear(1, 16) (one per variable), `static_vsn`, then the four static context GRNs
  (`static_context_variable_selection`, `static_context_enrichment`,
  `static_context_initial_hidden`, `static_context_initial_cell`, called in that order inline in
  the root), `temporal_vsn`, `lstm_encoder` (nn.RNN wrapping an nn.LSTMCell `cell`: a Python loop over the
  8 steps, states [B, 16] without a layer axis; paddle's fused nn.LSTM cannot run backward in
  eval mode), `post_lstm_gate`,
  `static_enrichment`, `multihead_attn`, `post_attn_gate`, `pos_wise_ff`, `pre_output_gate`,
  `output_layer`.
- `GatedResidualNetwork`: `fc1`, `context_fc` (bias_attr=False, only with context), `fc2`,
  `glu` (a `GatedLinearUnit` with SEPARATE `fc_gate` / `fc_value` Linears), `layer_norm`, and
  `skip_layer` last (only when the widths differ); F.elu inline.
- `VariableSelectionNetwork` takes a LIST of per-variable embeddings; `flattened_grn`,
  `single_variable_grns` (LayerList); the softmax is F.softmax inline; the weighted sum is
  stack + multiply + sum.
- `GateAddNorm`: `glu` (GatedLinearUnit) and `norm` (LayerNorm).
- `InterpretableMultiHeadAttention`: PER-HEAD `q_layers` / `k_layers` (LayerList of
  Linear(16, 4)), ONE shared `v_layer` Linear(16, 4), `w_h` Linear(4, 16); the heads are a
  Python loop computing softmax(q k^T / sqrt(d_head) + mask) v each, then the mean over heads;
  the causal mask is built inline (paddle.triu + paddle.where).
- model() gives every bias and every LayerNorm weight trained-looking values (seeded), so that
  nothing is a zero / identity.

The torch side (port_tft_torch.py) was written independently: packed [n_vars, 16] prescale
tensors, fused per-variable / GLU / q / k projections, an nn.Softmax module in the VSN, a static
covariate encoder module returning a tuple, and a head-averaged-probabilities attention.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_vsn_softmax_axis -> VariableSelectionNetwork normalises its variable weights with
                             F.softmax(axis=1): right for the static [B, n] weights, wrong for
                             the temporal [B, T, n] ones (it normalises over time)
  paddle_gate_norm_eps    -> GateAddNorm builds its LayerNorm with epsilon=1e-3 (the Keras
                             default of the original TF code) instead of 1e-5 (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

HIDDEN, N_STATIC, N_TIME, STEPS, HEADS, N_QUANTILES = 16, 3, 4, 8, 4, 3
D_HEAD = HIDDEN // HEADS
LN_EPS = 1e-5
BATCH = 2
OWN_BUGS = {"paddle_vsn_softmax_axis", "paddle_gate_norm_eps"}
OTHER_BUGS = {"torch_glu_halves_swapped", "torch_attn_scale_dmodel"}


class GatedLinearUnit(nn.Layer):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.fc_gate = nn.Linear(in_dim, out_dim)
        self.fc_value = nn.Linear(in_dim, out_dim)

    def forward(self, x):
        return F.sigmoid(self.fc_gate(x)) * self.fc_value(x)


class GatedResidualNetwork(nn.Layer):
    def __init__(self, in_dim, hidden, out_dim, use_context=False):
        super().__init__()
        self.fc1 = nn.Linear(in_dim, hidden)
        self.context_fc = nn.Linear(hidden, hidden, bias_attr=False) if use_context else None
        self.fc2 = nn.Linear(hidden, hidden)
        self.glu = GatedLinearUnit(hidden, out_dim)
        self.layer_norm = nn.LayerNorm(out_dim, epsilon=LN_EPS)
        self.skip_layer = nn.Linear(in_dim, out_dim) if in_dim != out_dim else None

    def forward(self, a, context=None):
        residual = a if self.skip_layer is None else self.skip_layer(a)
        h = self.fc1(a)
        if context is not None:
            h = h + self.context_fc(context)
        h = F.elu(h)
        h = self.fc2(h)
        return self.layer_norm(residual + self.glu(h))


class VariableSelectionNetwork(nn.Layer):
    def __init__(self, n_vars, hidden, use_context=False, softmax_axis=-1):
        super().__init__()
        self.n_vars, self.softmax_axis = n_vars, softmax_axis
        self.flattened_grn = GatedResidualNetwork(n_vars * hidden, hidden, n_vars, use_context)
        self.single_variable_grns = nn.LayerList([GatedResidualNetwork(hidden, hidden, hidden) for _ in range(n_vars)])

    def forward(self, embeddings, context=None):
        flat = paddle.concat(embeddings, axis=-1)
        logits = self.flattened_grn(flat, context)
        weights = F.softmax(logits, axis=self.softmax_axis)
        processed = paddle.stack([grn(e) for grn, e in zip(self.single_variable_grns, embeddings)], axis=-2)
        return (processed * weights.unsqueeze(-1)).sum(axis=-2)


class GateAddNorm(nn.Layer):
    def __init__(self, hidden, eps=LN_EPS):
        super().__init__()
        self.glu = GatedLinearUnit(hidden, hidden)
        self.norm = nn.LayerNorm(hidden, epsilon=eps)

    def forward(self, x, skip):
        return self.norm(skip + self.glu(x))


class InterpretableMultiHeadAttention(nn.Layer):
    def __init__(self, hidden, n_heads):
        super().__init__()
        self.n_heads, self.d_head = n_heads, hidden // n_heads
        self.q_layers = nn.LayerList([nn.Linear(hidden, self.d_head) for _ in range(n_heads)])
        self.k_layers = nn.LayerList([nn.Linear(hidden, self.d_head) for _ in range(n_heads)])
        self.v_layer = nn.Linear(hidden, self.d_head)
        self.w_h = nn.Linear(self.d_head, hidden)

    def forward(self, q, k, v):
        steps = q.shape[1]
        future = paddle.triu(paddle.ones([steps, steps], dtype="float32"), diagonal=1)
        vs = self.v_layer(v)
        heads = []
        for i in range(self.n_heads):
            qs, ks = self.q_layers[i](q), self.k_layers[i](k)
            scores = paddle.matmul(qs, ks, transpose_y=True) / (self.d_head**0.5)
            scores = paddle.where(future > 0, paddle.full_like(scores, -1e9), scores)
            heads.append(paddle.matmul(F.softmax(scores, axis=-1), vs))
        head = paddle.stack(heads, axis=0).mean(axis=0)
        return self.w_h(head)


class TemporalFusionTransformer(nn.Layer):
    def __init__(self, softmax_axis=-1, gate_eps=LN_EPS):
        super().__init__()
        self.static_prescalers = nn.LayerList([nn.Linear(1, HIDDEN) for _ in range(N_STATIC)])
        self.time_prescalers = nn.LayerList([nn.Linear(1, HIDDEN) for _ in range(N_TIME)])
        self.static_vsn = VariableSelectionNetwork(N_STATIC, HIDDEN, softmax_axis=softmax_axis)
        self.static_context_variable_selection = GatedResidualNetwork(HIDDEN, HIDDEN, HIDDEN)
        self.static_context_enrichment = GatedResidualNetwork(HIDDEN, HIDDEN, HIDDEN)
        self.static_context_initial_hidden = GatedResidualNetwork(HIDDEN, HIDDEN, HIDDEN)
        self.static_context_initial_cell = GatedResidualNetwork(HIDDEN, HIDDEN, HIDDEN)
        self.temporal_vsn = VariableSelectionNetwork(N_TIME, HIDDEN, use_context=True, softmax_axis=softmax_axis)
        self.lstm_encoder = nn.RNN(nn.LSTMCell(HIDDEN, HIDDEN))
        self.post_lstm_gate = GateAddNorm(HIDDEN, gate_eps)
        self.static_enrichment = GatedResidualNetwork(HIDDEN, HIDDEN, HIDDEN, use_context=True)
        self.multihead_attn = InterpretableMultiHeadAttention(HIDDEN, HEADS)
        self.post_attn_gate = GateAddNorm(HIDDEN, gate_eps)
        self.pos_wise_ff = GatedResidualNetwork(HIDDEN, HIDDEN, HIDDEN)
        self.pre_output_gate = GateAddNorm(HIDDEN, gate_eps)
        self.output_layer = nn.Linear(HIDDEN, N_QUANTILES)

    def forward(self, static_reals, time_reals):
        static_embs = [pre(static_reals[:, j : j + 1]) for j, pre in enumerate(self.static_prescalers)]
        time_embs = [pre(time_reals[:, :, j : j + 1]) for j, pre in enumerate(self.time_prescalers)]
        static_embedding = self.static_vsn(static_embs)
        c_selection = self.static_context_variable_selection(static_embedding)
        c_enrichment = self.static_context_enrichment(static_embedding)
        c_h = self.static_context_initial_hidden(static_embedding)
        c_c = self.static_context_initial_cell(static_embedding)

        steps = time_reals.shape[1]
        ctx = c_selection.unsqueeze(1).expand([-1, steps, -1])
        x = self.temporal_vsn(time_embs, ctx)
        lstm_out, _ = self.lstm_encoder(x, (c_h, c_c))
        y = self.post_lstm_gate(lstm_out, x)

        enriched = self.static_enrichment(y, c_enrichment.unsqueeze(1).expand([-1, steps, -1]))
        attn = self.multihead_attn(enriched, enriched, enriched)
        z = self.post_attn_gate(attn, enriched)
        p = self.pos_wise_ff(z)
        f = self.pre_output_gate(p, y)
        return self.output_layer(f)  # [B, T, 3]


def _trained_look(m):
    rng = np.random.default_rng(23)
    for name, p in m.named_parameters():
        if name.endswith("layer_norm.weight") or name.endswith("norm.weight"):
            p.set_value(rng.uniform(0.6, 1.4, p.shape).astype("float32"))
        elif name.endswith("bias") or "bias_" in name:
            p.set_value(rng.normal(0.0, 0.2, p.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_tft paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = TemporalFusionTransformer(softmax_axis=1 if bug == "paddle_vsn_softmax_axis" else -1,
                                  gate_eps=1e-3 if bug == "paddle_gate_norm_eps" else LN_EPS)
    _trained_look(m)
    m.eval()
    return m


def _data():
    rng = np.random.default_rng(31)
    static = rng.standard_normal((BATCH, N_STATIC)).astype("float32")
    series = rng.standard_normal((BATCH, STEPS, N_TIME)).astype("float32")
    return static, series


def inputs():
    return tuple(paddle.to_tensor(a) for a in _data()), {}


def loss(output):
    # quantile forecasts [2, 8, 3]
    return (output**2).mean()

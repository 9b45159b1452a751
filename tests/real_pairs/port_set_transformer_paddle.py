"""Hand-written port, paddle side: a Set Transformer (Lee et al. 2019), written by "person A".

Input (positional): a batch of sets `x` [2, 10, 3] float32 (numpy rng seed 3232, standard
normal). Output: [2, 2, 5], one 5-vector per PMA seed.

Shared math (both sides), width 32, 4 heads of 8:
  MAB(X, Y): Q = X Wq + bq, K = Y Wk + bk, V = Y Wv + bv (each to 32), split into 4 heads;
             A_h = softmax(Q_h K_h^T / sqrt(32))      (the official code scales by sqrt(dim_V),
                                                       the full width, not the head width)
             O = Q + concat_h(A_h V_h)                 (the residual adds the PROJECTED query)
             H = LN0(O);  out = LN1(H + rFF(H)),  rFF = Linear(32, 64) -> exact GELU -> Linear(64, 32)
  ISAB(X)  = MAB(X, MAB(I, X)), I = 8 learned inducing points
  model    : ISAB(3 -> 32) -> ISAB(32 -> 32) -> PMA_2 (MAB(S, Z), S = 2 learned seeds) -> Linear(32, 5)

Paddle idioms on this side:
- root `SetTransformer`: `isab_layers` = LayerList of two `ISAB` (iterated), `pool` (a `PMA`),
  `head` nn.Linear(32, 5).
- `ISAB` registers `mab_ind` (I attends to the set), `mab_set` (the set attends to the induced
  summary) and only then `inducing_points`, a create_parameter of shape [8, 32] (2-D; it is
  unsqueezed and expanded in the forward). `PMA` registers `mab`, then `seeds` [2, 32].
- `MAB`: the attention is its OWN sublayer `attn` (`MultiheadAttn`: separate `q_proj`, `k_proj`,
  `v_proj` nn.Linear, heads split with reshape [B, N, 4, 8] + transpose [0, 2, 1, 3], scores by
  paddle.matmul(transpose_y=True), merged back with transpose + reshape; it returns Q + A V);
  then `ln_attn`, `ffn_in`, `ffn_out` and `ln_ffn`, the rFF inline (F.gelu) in MAB.forward.
- model() gives the LayerNorms trained-looking weights / biases and the inducing points / seeds
  seeded normal values.

The torch side (port_set_transformer_torch.py) was written independently from the official
repo's style: a fused key/value Linear, the "cat(split(..), 0)" head idiom, attention inline
in its MAB, rFF as an nn.Sequential, nn.Sequential encoder / decoder.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_attn_scale_head_dim -> MultiheadAttn scales the scores by 1 / sqrt(8) (head width,
                                the "usual" transformer convention) instead of 1 / sqrt(32)
  paddle_rff_prenorm         -> MAB.forward applies ln_ffn BEFORE the rFF (pre-norm habit):
                                out = H + rFF(LN1(H)) instead of LN1(H + rFF(H))
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

DIM_IN, DIM, HEADS, FFN = 3, 32, 4, 64
N_INDUCED, N_SEEDS, DIM_OUT = 8, 2, 5
BATCH, SET_SIZE = 2, 10
OWN_BUGS = {"paddle_attn_scale_head_dim", "paddle_rff_prenorm"}
OTHER_BUGS = {"torch_softmax_over_queries", "torch_gelu_tanh"}


class MultiheadAttn(nn.Layer):
    def __init__(self, dim_q, dim_kv, dim, heads, head_scale=False):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.scale = self.head_dim**-0.5 if head_scale else dim**-0.5
        self.q_proj = nn.Linear(dim_q, dim)
        self.k_proj = nn.Linear(dim_kv, dim)
        self.v_proj = nn.Linear(dim_kv, dim)

    def _split(self, t):
        b, n = t.shape[0], t.shape[1]
        return t.reshape([b, n, self.heads, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, query, key):
        q = self._split(self.q_proj(query))
        k = self._split(self.k_proj(key))
        v = self._split(self.v_proj(key))
        probs = F.softmax(paddle.matmul(q, k, transpose_y=True) * self.scale, axis=-1)
        out = q + paddle.matmul(probs, v)  # [B, H, Nq, D]
        b, nq = out.shape[0], out.shape[2]
        return out.transpose([0, 2, 1, 3]).reshape([b, nq, self.heads * self.head_dim])


class MAB(nn.Layer):
    def __init__(self, dim_q, dim_kv, head_scale=False, prenorm=False):
        super().__init__()
        self.prenorm = prenorm
        self.attn = MultiheadAttn(dim_q, dim_kv, DIM, HEADS, head_scale)
        self.ln_attn = nn.LayerNorm(DIM)
        self.ffn_in = nn.Linear(DIM, FFN)
        self.ffn_out = nn.Linear(FFN, DIM)
        self.ln_ffn = nn.LayerNorm(DIM)

    def forward(self, x, y):
        h = self.ln_attn(self.attn(x, y))
        if self.prenorm:
            return h + self.ffn_out(F.gelu(self.ffn_in(self.ln_ffn(h))))
        return self.ln_ffn(h + self.ffn_out(F.gelu(self.ffn_in(h))))


class ISAB(nn.Layer):
    def __init__(self, dim_in, **kw):
        super().__init__()
        self.mab_ind = MAB(DIM, dim_in, **kw)
        self.mab_set = MAB(dim_in, DIM, **kw)
        self.inducing_points = self.create_parameter(
            [N_INDUCED, DIM], default_initializer=nn.initializer.XavierUniform())

    def forward(self, x):
        ind = self.inducing_points.unsqueeze(0).expand([x.shape[0], N_INDUCED, DIM])
        return self.mab_set(x, self.mab_ind(ind, x))


class PMA(nn.Layer):
    def __init__(self, **kw):
        super().__init__()
        self.mab = MAB(DIM, DIM, **kw)
        self.seeds = self.create_parameter([N_SEEDS, DIM], default_initializer=nn.initializer.XavierUniform())

    def forward(self, z):
        return self.mab(self.seeds.unsqueeze(0).expand([z.shape[0], N_SEEDS, DIM]), z)


class SetTransformer(nn.Layer):
    def __init__(self, **kw):
        super().__init__()
        self.isab_layers = nn.LayerList([ISAB(DIM_IN, **kw), ISAB(DIM, **kw)])
        self.pool = PMA(**kw)
        self.head = nn.Linear(DIM, DIM_OUT)

    def forward(self, x):
        for isab in self.isab_layers:
            x = isab(x)
        return self.head(self.pool(x))


def _trained_look(m):
    rng = np.random.default_rng(3233)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.LayerNorm):
            layer.weight.set_value(rng.normal(1.0, 0.15, DIM).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.1, DIM).astype("float32"))
        if isinstance(layer, ISAB):
            layer.inducing_points.set_value(rng.normal(0.0, 1.0, (N_INDUCED, DIM)).astype("float32"))
        if isinstance(layer, PMA):
            layer.seeds.set_value(rng.normal(0.0, 1.0, (N_SEEDS, DIM)).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_set_transformer paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = SetTransformer(head_scale=bug == "paddle_attn_scale_head_dim", prenorm=bug == "paddle_rff_prenorm")
    _trained_look(m)
    m.eval()
    return m


def _set():
    return np.random.default_rng(3232).standard_normal((BATCH, SET_SIZE, DIM_IN)).astype("float32")


def inputs():
    return (paddle.to_tensor(_set()),), {}


def loss(output):
    # per-seed outputs [2, 2, 5]
    return (output**2).mean()

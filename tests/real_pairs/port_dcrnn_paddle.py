"""Hand-written port, paddle side: a DCRNN traffic-forecasting model (written by "person A").

DCRNN (Li et al., 2018): diffusion-convolution GRU cells over a fixed road graph, in a
sequence-to-sequence encoder-decoder. Sizes here: 8 sensors, 2 input features (scaled speed,
time of day), 16 hidden units, 2 stacked cells in the encoder and 2 in the decoder, K = 2
diffusion steps over two supports (forward and backward random walk), 6 input steps, 4
predicted steps (output_dim 1).

Input: positional `x` [2, 6, 8, 2] (batch, time, node, feature; numpy rng seed 3). Output: the
predictions [2, 4, 8, 1] (batch, horizon, node, 1).

The graph (gen_adj_mx style, built once in the constructor from the sensor distance list):
  dist[i, j] = road distance i -> j (0 on the diagonal, inf when not listed)
  sigma = population std of the finite distances; A = exp(-(dist / sigma)^2); A[A < 0.1] = 0
  P_fwd = D_out^-1 A          (rows of A normalised)
  P_bwd = D_in^-1 A^T         (rows of A^T normalised)
Diffusion of a node signal X [N, F] along support P: T_0 = X, T_1 = P^T X,
T_k = 2 P^T T_(k-1) - T_(k-2) (the DCRNN recursion), so with two supports and K = 2 there are
2K + 1 = 5 diffusion terms. Diffusion conv: out = sum_j T_j W_j + b.
DCGRU cell (input x, state h, both per node):
  r = sigmoid(dconv_r([x, h])), u = sigmoid(dconv_u([x, h]))
  c = tanh(dconv_c([x, r * h]))
  h' = u * h + (1 - u) * c
Encoder: zero states, 6 steps, layer 1 takes layer 0's new state. Decoder: starts from the
encoder's final states (layer by layer) and a zero GO frame; each step's prediction is a shared
Linear(16 -> 1) on the top state of every node, fed back as the next step's input.

Paddle idioms on this side:
- root `DCRNN`: `encoder` (DCRNNEncoder), `decoder` (DCRNNDecoder); each is called ONCE per
  forward and loops over time itself. The encoder returns its final states stacked
  [2, B, N, 16].
- states are kept per node, [B, N, 16]; cells take (x [B, N, F], h [B, N, 16]).
- `DCGRUCell` has three SEPARATE diffusion convs: `reset_conv`, `update_conv`, `cand_conv`;
  the gates and the GRU update are inline in its forward.
- `DiffusionConv` owns a copy of the random-walk matrices as a non-persistable buffer
  `supports` [2, N, N] (P_fwd, P_bwd, NOT transposed: the conv applies P^T with an einsum) and
  keeps ONE Linear PER DIFFUSION TERM (`hops`, a LayerList of 5 bias-free Linears [F, out]) plus
  one `bias` parameter. The terms are ordered hop by hop, alternating the supports:
  [X, P_fwd^T X, P_bwd^T X, T_2(fwd), T_2(bwd)].
- the graph is built with paddle ops in `build_supports`.
- model() gives the biases and the GRU weights trained-looking values (seeded), the gate biases
  around 1 as DCRNN's bias_start = 1.0 leaves them.

The torch side (port_dcrnn_torch.py) was written independently (DCRNN_PyTorch style): flat
[B, N * F] states, per-step encoder / decoder modules driven by the root, fused gate weights
with the diffusion conv as an inline method of the cell, one packed weight
[(F) * 5, out] per conv with feature-major / term-minor rows.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_sigma_unbiased      -> build_supports takes sigma = paddle.std(finite distances) with
                                paddle's default unbiased=True (N - 1) instead of the population
                                std, so the Gaussian kernel is ~1.3% wider (small)
  paddle_update_gate_swapped -> the cell writes the textbook GRU update
                                h' = (1 - u) * h + u * c instead of DCRNN's u * h + (1 - u) * c
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

NUM_NODES, IN_DIM, OUT_DIM, HIDDEN = 8, 2, 1, 16
NUM_LAYERS, K_HOPS, SEQ_LEN, HORIZON = 2, 2, 6, 4
KERNEL_THRESHOLD = 0.1
BATCH = 2
OWN_BUGS = {"paddle_sigma_unbiased", "paddle_update_gate_swapped"}
OTHER_BUGS = {"torch_x0_not_reset", "torch_dec_hidden_layer0"}

# sensor graph: (from, to, road distance in metres); self-distances are 0
SENSOR_DISTANCES = [
    (0, 1, 612.0), (1, 2, 488.0), (2, 3, 731.0), (3, 4, 540.0), (4, 5, 866.0), (5, 6, 395.0),
    (6, 7, 654.0), (1, 0, 701.0), (3, 2, 802.0), (5, 4, 935.0), (7, 6, 577.0), (2, 5, 1120.0),
    (6, 1, 1245.0), (0, 3, 2460.0), (4, 7, 1080.0), (0, 2, 1100.0), (2, 0, 1190.0), (1, 3, 1219.0),
    (3, 5, 1406.0), (4, 6, 1261.0), (5, 7, 1049.0), (7, 5, 1231.0), (6, 4, 1330.0), (2, 4, 1271.0),
    (4, 2, 1342.0), (1, 4, 1759.0), (3, 6, 1795.0), (0, 4, 2011.0), (7, 3, 2127.0), (5, 1, 2083.0),
    (6, 2, 1938.0), (2, 7, 2205.0),
]


def build_supports(num_nodes, edges, unbiased_sigma=False):
    """[2, N, N] float32: the forward and backward random-walk matrices (rows sum to 1)."""
    dist = np.full((num_nodes, num_nodes), np.inf, dtype="float32")
    np.fill_diagonal(dist, 0.0)
    for i, j, d in edges:
        dist[i, j] = d
    dist = paddle.to_tensor(dist)
    finite = paddle.masked_select(dist, paddle.isfinite(dist))
    if unbiased_sigma:
        sigma = paddle.std(finite)
    else:
        sigma = paddle.std(finite, unbiased=False)
    adj = paddle.exp(-paddle.square(dist / sigma))
    adj = paddle.where(adj < KERNEL_THRESHOLD, paddle.zeros_like(adj), adj)
    p_fwd = adj / adj.sum(axis=1, keepdim=True)
    adj_t = adj.t()
    p_bwd = adj_t / adj_t.sum(axis=1, keepdim=True)
    return paddle.stack([p_fwd, p_bwd])


class DiffusionConv(nn.Layer):
    def __init__(self, in_features, out_features, supports, k_hops=K_HOPS):
        super().__init__()
        self.k_hops = k_hops
        self.register_buffer("supports", supports.clone(), persistable=False)
        n_terms = supports.shape[0] * k_hops + 1
        self.hops = nn.LayerList([nn.Linear(in_features, out_features, bias_attr=False) for _ in range(n_terms)])
        self.bias = self.create_parameter([out_features], is_bias=True)

    def _walk(self, p, x):
        # P^T X on every batch element: out[b, m, f] = sum_n P[n, m] x[b, n, f]
        return paddle.einsum("nm,bnf->bmf", p, x)

    def forward(self, x):
        # chains per support: [T_1, T_2, ...]
        chains = []
        for s in range(self.supports.shape[0]):
            p = self.supports[s]
            t_prev, t_cur = x, self._walk(p, x)
            chain = [t_cur]
            for _ in range(2, self.k_hops + 1):
                t_prev, t_cur = t_cur, 2.0 * self._walk(p, t_cur) - t_prev
                chain.append(t_cur)
            chains.append(chain)
        terms = [x]
        for k in range(self.k_hops):  # hop by hop, alternating the supports
            for chain in chains:
                terms.append(chain[k])
        out = self.bias
        for lin, t in zip(self.hops, terms):
            out = out + lin(t)
        return out


class DCGRUCell(nn.Layer):
    def __init__(self, in_features, hidden, supports, swap_update=False):
        super().__init__()
        self.swap_update = swap_update
        self.reset_conv = DiffusionConv(in_features + hidden, hidden, supports)
        self.update_conv = DiffusionConv(in_features + hidden, hidden, supports)
        self.cand_conv = DiffusionConv(in_features + hidden, hidden, supports)

    def forward(self, x, h):
        xh = paddle.concat([x, h], axis=-1)
        r = F.sigmoid(self.reset_conv(xh))
        u = F.sigmoid(self.update_conv(xh))
        c = paddle.tanh(self.cand_conv(paddle.concat([x, r * h], axis=-1)))
        if self.swap_update:
            return (1.0 - u) * h + u * c
        return u * h + (1.0 - u) * c


class DCRNNEncoder(nn.Layer):
    def __init__(self, supports, swap_update=False):
        super().__init__()
        dims = [IN_DIM] + [HIDDEN] * (NUM_LAYERS - 1)
        self.cells = nn.LayerList([DCGRUCell(d, HIDDEN, supports, swap_update) for d in dims])

    def forward(self, x):  # x [B, T, N, IN_DIM]
        b = x.shape[0]
        states = [paddle.zeros([b, NUM_NODES, HIDDEN], dtype=x.dtype) for _ in self.cells]
        for t in range(x.shape[1]):
            inp = x[:, t]
            for i, cell in enumerate(self.cells):
                states[i] = cell(inp, states[i])
                inp = states[i]
        return paddle.stack(states)  # [L, B, N, H]


class DCRNNDecoder(nn.Layer):
    def __init__(self, supports, swap_update=False):
        super().__init__()
        dims = [OUT_DIM] + [HIDDEN] * (NUM_LAYERS - 1)
        self.cells = nn.LayerList([DCGRUCell(d, HIDDEN, supports, swap_update) for d in dims])
        self.proj = nn.Linear(HIDDEN, OUT_DIM)

    def forward(self, enc_states):  # [L, B, N, H]
        states = [enc_states[i] for i in range(len(self.cells))]
        b = enc_states.shape[1]
        go = paddle.zeros([b, NUM_NODES, OUT_DIM], dtype=enc_states.dtype)
        preds = []
        for _ in range(HORIZON):
            inp = go
            for i, cell in enumerate(self.cells):
                states[i] = cell(inp, states[i])
                inp = states[i]
            go = self.proj(inp)  # [B, N, 1]
            preds.append(go)
        return paddle.stack(preds, axis=1)  # [B, HORIZON, N, 1]


class DCRNN(nn.Layer):
    def __init__(self, unbiased_sigma=False, swap_update=False):
        super().__init__()
        supports = build_supports(NUM_NODES, SENSOR_DISTANCES, unbiased_sigma)
        self.encoder = DCRNNEncoder(supports, swap_update)
        self.decoder = DCRNNDecoder(supports, swap_update)

    def forward(self, x):
        return self.decoder(self.encoder(x))


def _trained_look(m):
    rng = np.random.default_rng(29)
    for name, layer in m.named_sublayers():
        if isinstance(layer, DiffusionConv):
            fan_in = layer.hops[0].weight.shape[0] * len(layer.hops)
            for lin in layer.hops:
                w = rng.normal(0.0, 1.6 / np.sqrt(fan_in), lin.weight.shape)
                lin.weight.set_value(w.astype("float32"))
            centre = 1.0 if name.endswith(("reset_conv", "update_conv")) else 0.0
            layer.bias.set_value((centre + rng.normal(0.0, 0.3, layer.bias.shape)).astype("float32"))
    m.decoder.proj.bias.set_value(np.array([0.35], dtype="float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dcrnn paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = DCRNN(unbiased_sigma=bug == "paddle_sigma_unbiased", swap_update=bug == "paddle_update_gate_swapped")
    _trained_look(m)
    m.eval()
    return m


def _series():
    rng = np.random.default_rng(3)
    speed = rng.standard_normal((BATCH, SEQ_LEN, NUM_NODES, 1))
    tod = (np.arange(SEQ_LEN) / 288.0 + 0.3)[None, :, None, None] + np.zeros((BATCH, 1, NUM_NODES, 1))
    tod[1] += 0.25
    return np.concatenate([speed, tod], axis=-1).astype("float32")


def inputs():
    return (paddle.to_tensor(_series()),), {}


def loss(output):
    # predictions [2, 4, 8, 1]
    return (output**2).mean()

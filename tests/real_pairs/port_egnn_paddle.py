"""Hand-written port, paddle side: an E(n)-equivariant graph neural network, EGNN (Satorras et
al. 2021), over small fully connected graphs (written by "person A", egnn_clean style).

Inputs (positional, numpy rng seed 41): node features h [2, 6, 5], coordinates x [2, 6, 3] and
dense edge attributes edge_attr [2, 6, 6, 2] (entry [b, i, j] belongs to the edge j -> i; the
diagonal is never used). Two graphs of 6 nodes, every ordered pair i != j is an edge (30 per
graph, 60 in all). Output: concat(h_out [.., 4], x_out [.., 3]) reshaped to [2, 6, 7].

Model: embedding_in Linear(5, 16), two E_GCL layers of width 16, embedding_out Linear(16, 4).
One E_GCL layer (i = receiving node, j = sending node):
  m_ij = edge_mlp(cat(h_i, h_j, |x_i - x_j|^2, a_ij))          Linear(35, 16) SiLU Linear SiLU
  x_i' = x_i + mean_{j != i} (x_i - x_j) * coord_mlp(m_ij)      Linear(16, 16) SiLU Linear(16, 1, no bias)
  h_i' = h_i + node_mlp(cat(h_i, sum_{j != i} m_ij))            Linear(32, 16) SiLU Linear(16, 16)

Paddle idioms on this side (sparse, gather / scatter):
- root `EGNN`: `embedding_in`, the layers added with add_sublayer("gcl_%d") and fetched from
  `_sub_layers` in the forward, `embedding_out`; the edge list is two int64 buffers `edge_rows`
  (receivers) / `edge_cols` (senders) built in __init__ for the fixed 2 x 6 batch. The forward
  flattens the nodes to [12, *] and gathers the dense edge attributes to [60, 2] with
  paddle.gather.
- `E_GCL`: `edge_mlp`, `node_mlp`, `coord_mlp` nn.Sequential (nn.Silu modules); the edge, node
  and coordinate models are METHODS (inline in the layer's forward): h[row] / h[col] gathers,
  coord[row] - coord[col], paddle.index_add for the message sum (unsorted segment sum),
  paddle.geometric.segment_mean for the coordinate mean (receivers are sorted).
- model() gives every bias trained-looking values and the last coordinate Linear a
  trained-looking scale (seeded), so coordinates really move.

The torch side (port_egnn_torch.py) was written independently: dense pairwise tensors
[B, N, N, *] with an off-diagonal mask, the first edge Linear split into per-node projections
broadcast over the pair axes, and separate message / coordinate / node modules.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_agg_by_col  -> node_model sums the messages by `col` (the SENDING node) instead of `row`
                        (the receiving node): h_i gets sum_j m_ji
  paddle_coord_tanh  -> E_GCL is built with the reference code's tanh=True branch, so coord_mlp
                        ends in nn.Tanh (coords_range 1.0); the torch port has no tanh
                        (precision-level: the coordinate weights are small)
"""
import os

import numpy as np
import paddle
from paddle import nn

IN_NF, HIDDEN, EDGE_NF, OUT_NF, N_LAYERS = 5, 16, 2, 4, 2
BATCH, N_NODES = 2, 6
OWN_BUGS = {"paddle_agg_by_col", "paddle_coord_tanh"}
OTHER_BUGS = {"torch_coord_mean_all", "torch_proj_j_broadcast"}


def unsorted_segment_sum(data, segment_ids, num_segments):
    out = paddle.zeros([num_segments, data.shape[1]], dtype=data.dtype)
    return paddle.index_add(out, segment_ids, 0, data)


class E_GCL(nn.Layer):
    def __init__(self, input_nf, output_nf, hidden_nf, edges_in_d, tanh=False, agg_by_col=False):
        super().__init__()
        self.agg_by_col = agg_by_col
        self.edge_mlp = nn.Sequential(
            nn.Linear(2 * input_nf + 1 + edges_in_d, hidden_nf), nn.Silu(),
            nn.Linear(hidden_nf, hidden_nf), nn.Silu())
        self.node_mlp = nn.Sequential(
            nn.Linear(hidden_nf + input_nf, hidden_nf), nn.Silu(), nn.Linear(hidden_nf, output_nf))
        coord_mlp = [nn.Linear(hidden_nf, hidden_nf), nn.Silu(), nn.Linear(hidden_nf, 1, bias_attr=False)]
        if tanh:
            coord_mlp.append(nn.Tanh())
        self.coord_mlp = nn.Sequential(*coord_mlp)

    def edge_model(self, source, target, radial, edge_attr):
        return self.edge_mlp(paddle.concat([source, target, radial, edge_attr], axis=1))

    def node_model(self, x, edge_index, edge_feat):
        row, col = edge_index
        seg = col if self.agg_by_col else row
        agg = unsorted_segment_sum(edge_feat, seg, x.shape[0])
        return x + self.node_mlp(paddle.concat([x, agg], axis=1))

    def coord_model(self, coord, edge_index, coord_diff, edge_feat):
        row, _ = edge_index
        trans = coord_diff * self.coord_mlp(edge_feat)
        return coord + paddle.geometric.segment_mean(trans, row)

    def coord2radial(self, edge_index, coord):
        row, col = edge_index
        coord_diff = paddle.gather(coord, row) - paddle.gather(coord, col)
        radial = paddle.sum(coord_diff**2, axis=1, keepdim=True)
        return radial, coord_diff

    def forward(self, h, edge_index, coord, edge_attr):
        row, col = edge_index
        radial, coord_diff = self.coord2radial(edge_index, coord)
        edge_feat = self.edge_model(paddle.gather(h, row), paddle.gather(h, col), radial, edge_attr)
        coord = self.coord_model(coord, edge_index, coord_diff, edge_feat)
        h = self.node_model(h, edge_index, edge_feat)
        return h, coord


def _full_edges(batch, n):
    rows, cols = [], []
    for b in range(batch):
        for i in range(n):
            for j in range(n):
                if i != j:
                    rows.append(b * n + i)
                    cols.append(b * n + j)
    return np.array(rows, dtype="int64"), np.array(cols, dtype="int64")


class EGNN(nn.Layer):
    def __init__(self, tanh=False, agg_by_col=False):
        super().__init__()
        self.n_layers = N_LAYERS
        self.embedding_in = nn.Linear(IN_NF, HIDDEN)
        for i in range(N_LAYERS):
            self.add_sublayer(f"gcl_{i}", E_GCL(HIDDEN, HIDDEN, HIDDEN, EDGE_NF, tanh=tanh, agg_by_col=agg_by_col))
        self.embedding_out = nn.Linear(HIDDEN, OUT_NF)
        rows, cols = _full_edges(BATCH, N_NODES)
        self.register_buffer("edge_rows", paddle.to_tensor(rows))
        self.register_buffer("edge_cols", paddle.to_tensor(cols))

    def forward(self, h, x, edge_attr):
        b, n = h.shape[0], h.shape[1]
        h = h.reshape([b * n, -1])
        x = x.reshape([b * n, 3])
        edges = [self.edge_rows, self.edge_cols]
        # dense entry [b, i, j] sits at flat index (b * n + i) * n + j = row * n + col % n
        ea = paddle.gather(edge_attr.reshape([b * n * n, -1]), self.edge_rows * n + self.edge_cols % n)
        h = self.embedding_in(h)
        for i in range(self.n_layers):
            h, x = self._sub_layers[f"gcl_{i}"](h, edges, x, ea)
        h = self.embedding_out(h)
        return paddle.concat([h, x], axis=1).reshape([b, n, -1])


def _trained_look(m):
    rng = np.random.default_rng(141)
    for name, p in m.named_parameters():
        if name.endswith(".bias"):
            p.set_value(rng.normal(0.0, 0.15, p.shape).astype("float32"))
        elif name.endswith("coord_mlp.2.weight"):
            p.set_value(rng.uniform(-0.12, 0.12, p.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_egnn paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = EGNN(tanh=bug == "paddle_coord_tanh", agg_by_col=bug == "paddle_agg_by_col")
    _trained_look(m)
    m.eval()
    return m


def _graphs():
    rng = np.random.default_rng(41)
    h = rng.standard_normal((BATCH, N_NODES, IN_NF)).astype("float32")
    x = (0.8 * rng.standard_normal((BATCH, N_NODES, 3))).astype("float32")
    ea = rng.uniform(0.0, 1.0, (BATCH, N_NODES, N_NODES, EDGE_NF)).astype("float32")
    return h, x, ea


def inputs():
    return tuple(paddle.to_tensor(a) for a in _graphs()), {}


def loss(output):
    # [2, 6, 7]: node outputs (4) and updated coordinates (3)
    return (output**2).mean()

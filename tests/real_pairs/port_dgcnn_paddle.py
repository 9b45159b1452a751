"""Hand-written port, paddle side: a tiny DGCNN point-cloud classifier (written by "person A").

Input: one point batch [2, 30, 3] (positional; person A keeps points CHANNELS-LAST, [B, N, xyz];
numpy rng seed 70, standard normal). Output: logits [2, 5].

Architecture (DGCNN, Wang et al. 2019), k = 4 neighbours (each point's own index included, as
in the reference code):
  EdgeConv 1   kNN on xyz; edge feature e_ij = [x_j - x_i, x_i] (6); shared 6 -> 16 layer
               without bias -> BN -> LeakyReLU(0.2) -> max over the 4 neighbours: [B, N, 16]
  EdgeConv 2   the same on the 16-d features (the graph is rebuilt in feature space):
               32 -> 16, max over neighbours: [B, N, 16]
  fuse         concat (16 + 16 = 32) -> shared 32 -> 32 layer without bias -> BN -> LeakyReLU(0.2)
  pooling      global max and global mean over the points, concatenated: [B, 64]
  head         Linear(64, 32, no bias) -> BN -> LeakyReLU(0.2) -> Dropout(0.5) -> Linear(32, 5)
BN eps 1e-5 everywhere; eval mode (running statistics, dropout off).

Paddle idioms on this side:
- root `PointDGCNN`: `edge1`, `edge2` (EdgeConv), `fuse` nn.Linear(32, 32, bias_attr=False)
  applied to [B, N, 32], `fuse_bn` nn.BatchNorm1D(32, data_format="NLC"), inline F.leaky_relu
  and inline global max / mean (no pool module), then `classifier` nn.Sequential(Linear(64, 32,
  bias_attr=False), BatchNorm1D(32), LeakyReLU(0.2), Dropout(0.5), Linear(32, 5)).
- `EdgeConv` registers `graph` (KNNGraph, a helper layer with no parameters), `lin`
  nn.Linear(2C, out, bias_attr=False) ([in, out]) and `bn` nn.BatchNorm2D(out,
  data_format="NHWC") on the [B, N, k, out] edge map; the LeakyReLU is inline (F.leaky_relu) and
  the max over neighbours is x.max(axis=2).
- `KNNGraph`: squared distances from explicit differences (x_i - x_j)^2 summed over channels,
  paddle.topk(-d, k) for the neighbour indices, gather of the neighbour rows from the flattened
  [B * N, C] table, and concat([x_j - x_i, x_i], -1): returns [B, N, k, 2C].
- model() gives every BN trained-looking weight / bias / running mean / running variance
  (seeded), so no BN is an identity.

The torch side (port_dgcnn_torch.py) was written independently in the style of the reference
WangYueFt/dgcnn code: points channels-FIRST [B, 3, N], 1x1 nn.Conv2d / nn.Conv1d layers inside
nn.Sequential blocks with nn.LeakyReLU modules, and the kNN / edge-feature code as plain functions
called inline.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_edge_feature_order  -> KNNGraph concatenates [x_i, x_j - x_i] instead of
                                [x_j - x_i, x_i] (both EdgeConvs)
  paddle_leaky_default_slope -> EdgeConv calls F.leaky_relu(x) with paddle's default
                                negative_slope 0.01 instead of 0.2 (both EdgeConvs; the fuse and
                                head activations keep 0.2)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

K, N_POINTS, BATCH, N_CLASSES = 4, 30, 2, 5
EDGE_DIMS, EMB, HID = (16, 16), 32, 32
SLOPE = 0.2
OWN_BUGS = {"paddle_edge_feature_order", "paddle_leaky_default_slope"}
OTHER_BUGS = {"torch_knn_farthest", "torch_bn5_eps"}


class KNNGraph(nn.Layer):
    """Edge features of the k nearest neighbours: [B, N, C] -> [B, N, k, 2C]."""

    def __init__(self, k, swap_order=False):
        super().__init__()
        self.k = k
        self.swap_order = swap_order

    def forward(self, x):
        b, n, c = x.shape
        diff = x.unsqueeze(2) - x.unsqueeze(1)  # [B, N, N, C]
        dist = paddle.sum(diff * diff, axis=-1)  # [B, N, N]
        _, idx = paddle.topk(-dist, k=self.k, axis=-1)  # [B, N, k]
        base = (paddle.arange(b, dtype="int64") * n).reshape([b, 1, 1])
        flat_idx = (idx + base).reshape([-1])
        neighbours = paddle.gather(x.reshape([b * n, c]), flat_idx).reshape([b, n, self.k, c])
        centre = x.unsqueeze(2).expand([b, n, self.k, c])
        if self.swap_order:
            return paddle.concat([centre, neighbours - centre], axis=-1)
        return paddle.concat([neighbours - centre, centre], axis=-1)


class EdgeConv(nn.Layer):
    def __init__(self, in_dim, out_dim, k, swap_order=False, slope=SLOPE):
        super().__init__()
        self.slope = slope
        self.graph = KNNGraph(k, swap_order)
        self.lin = nn.Linear(2 * in_dim, out_dim, bias_attr=False)
        self.bn = nn.BatchNorm2D(out_dim, data_format="NHWC")

    def forward(self, x):
        e = self.graph(x)  # [B, N, k, 2C]
        h = self.bn(self.lin(e))  # [B, N, k, out]
        if self.slope is None:
            h = F.leaky_relu(h)
        else:
            h = F.leaky_relu(h, negative_slope=self.slope)
        return h.max(axis=2)  # [B, N, out]


class PointDGCNN(nn.Layer):
    def __init__(self, swap_order=False, default_slope=False):
        super().__init__()
        slope = None if default_slope else SLOPE
        self.edge1 = EdgeConv(3, EDGE_DIMS[0], K, swap_order, slope)
        self.edge2 = EdgeConv(EDGE_DIMS[0], EDGE_DIMS[1], K, swap_order, slope)
        self.fuse = nn.Linear(sum(EDGE_DIMS), EMB, bias_attr=False)
        self.fuse_bn = nn.BatchNorm1D(EMB, data_format="NLC")
        self.classifier = nn.Sequential(
            nn.Linear(2 * EMB, HID, bias_attr=False),
            nn.BatchNorm1D(HID),
            nn.LeakyReLU(SLOPE),
            nn.Dropout(0.5),
            nn.Linear(HID, N_CLASSES),
        )

    def forward(self, points):
        f1 = self.edge1(points)
        f2 = self.edge2(f1)
        h = self.fuse_bn(self.fuse(paddle.concat([f1, f2], axis=-1)))
        h = F.leaky_relu(h, negative_slope=SLOPE)  # [B, N, 32]
        g = paddle.concat([h.max(axis=1), h.mean(axis=1)], axis=-1)  # [B, 64]
        return self.classifier(g)


def _trained_look(m):
    rng = np.random.default_rng(43)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, (nn.BatchNorm1D, nn.BatchNorm2D)):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))
    head = m.classifier[4]
    head.bias.set_value(rng.normal(0.0, 0.1, head.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dgcnn paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = PointDGCNN(swap_order=bug == "paddle_edge_feature_order",
                   default_slope=bug == "paddle_leaky_default_slope")
    _trained_look(m)
    m.eval()
    return m


def _points():
    rng = np.random.default_rng(70)
    return rng.standard_normal((BATCH, N_POINTS, 3)).astype("float32")


def inputs():
    return (paddle.to_tensor(_points()),), {}


def loss(output):
    # logits [2, 5]
    return (output**2).mean()

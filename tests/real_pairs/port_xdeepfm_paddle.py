"""Hand-written port, paddle side: a tiny xDeepFM CTR model (written by "person A", PaddleRec style).

Inputs: one positional tensor `sparse_ids` [8, 4] int64 (numpy rng seed 31): four categorical
fields with vocabularies 7 / 5 / 9 / 6, each column holding a field-local id. Output: the click
probability [8, 1].

    x0       = shared embedding table (27 x 8) looked up at ids + per-field offsets  [B, 4, 8]
    linear   = sum over fields of a shared first-order table (27 x 1) at ids + offsets, + bias
    CIN      = two layers of 8 / 6 feature maps; layer k: outer products of x0 with the previous
               hidden layer, z[b, f*H+h, d] = x0[b, f, d] * h_prev[b, h, d], compressed by a 1x1
               Conv1D (F*H -> size, with bias), relu; split-half on all but the last layer: the
               FIRST half of the maps is the direct connection (sum-pooled to the output), the
               SECOND half is the next hidden layer (the pytorch-fm convention); the pooled
               4 + 6 maps go through `fc` (10 -> 1, no bias)
    DNN      = flatten(x0) [B, 32] -> Linear 32 -> BN -> relu -> Linear 16 -> BN -> relu
               -> Linear 1 (no bias)
    p        = sigmoid(linear + CIN + DNN)

Paddle idioms on this side:
- root `XDeepFM`: `embedding` (ONE nn.Embedding(27, 8) for all fields), `first_order`
  (`FirstOrder`), `cin` (`CompressedInteraction`), `dnn` (nn.Sequential ending in the output
  Linear(16, 1, bias_attr=False)); the per-field offsets are a non-persistable buffer `offsets`
  [1, 4] of the root; the final sigmoid is F.sigmoid inline.
- `FirstOrder`: `table` nn.Embedding(27, 1) and `bias` [1] (create_parameter); it builds its own
  offsets inline from its field sizes (np.cumsum) in the forward and takes the RAW ids.
- `CompressedInteraction`: `conv_layers` (LayerList of nn.Conv1D(16, 8, 1) and
  nn.Conv1D(16, 6, 1), NCL) and `fc` nn.Linear(10, 1, bias_attr=False); the outer product,
  relu, split and sum-pooling are inline.
- model() gives the BN layers trained-looking affine weights / running statistics and every
  bias (conv, first-order) trained-looking nonzero values (seeded).

The torch side (port_xdeepfm_torch.py) was written independently (DeepCTR-Torch style): one
embedding table per field in an nn.ModuleDict, an einsum CIN with one weight tensor per layer
[H, F, size] (its own `CINLayer` modules) and the DeepCTR split-half convention (FIRST half =
next hidden), a DNN module with ModuleLists, and a PredictionLayer holding the global bias.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_linear_no_offsets -> FirstOrder looks its shared table up at the raw field-local ids,
                              forgetting to add the per-field offsets
  paddle_dnn_bn_eps        -> the DNN's BatchNorm1D layers are built with epsilon=1e-3 (a TF
                              config value) instead of 1e-5 (precision-level)
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

FIELD_DIMS = (7, 5, 9, 6)
EMBED_DIM = 8
CIN_LAYERS = (8, 6)
DNN_UNITS = (32, 16)
BATCH = 8
OWN_BUGS = {"paddle_linear_no_offsets", "paddle_dnn_bn_eps"}
OTHER_BUGS = {"torch_cin_split_swapped", "torch_cin_einsum_transposed"}


class FirstOrder(nn.Layer):
    def __init__(self, field_dims, use_offsets=True):
        super().__init__()
        self.field_dims = tuple(field_dims)
        self.use_offsets = use_offsets
        self.table = nn.Embedding(sum(field_dims), 1)
        self.bias = self.create_parameter([1], default_initializer=nn.initializer.Constant(0.0))

    def forward(self, ids):
        if self.use_offsets:
            offs = np.concatenate([[0], np.cumsum(self.field_dims)[:-1]]).astype("int64")
            ids = ids + paddle.to_tensor(offs).unsqueeze(0)
        return paddle.sum(self.table(ids), axis=1) + self.bias  # [B, 1]


class CompressedInteraction(nn.Layer):
    def __init__(self, num_fields, layer_sizes, split_half=True):
        super().__init__()
        self.num_fields = num_fields
        self.split_half = split_half
        self.conv_layers = nn.LayerList()
        prev, fc_in = num_fields, 0
        for i, size in enumerate(layer_sizes):
            self.conv_layers.append(nn.Conv1D(num_fields * prev, size, 1, data_format="NCL"))
            kept = size // 2 if split_half and i != len(layer_sizes) - 1 else size
            prev = kept
            fc_in += kept
        self.fc = nn.Linear(fc_in, 1, bias_attr=False)

    def forward(self, x0):
        b, f, d = x0.shape
        h, pooled = x0, []
        for i, conv in enumerate(self.conv_layers):
            z = x0.unsqueeze(2) * h.unsqueeze(1)  # [B, F, H, D]
            z = z.reshape([b, f * h.shape[1], d])
            x = F.relu(conv(z))
            if self.split_half and i != len(self.conv_layers) - 1:
                x, h = paddle.split(x, 2, axis=1)  # first half out, second half onward
            else:
                h = x
            pooled.append(paddle.sum(x, axis=2))
        return self.fc(paddle.concat(pooled, axis=1))  # [B, 1]


class XDeepFM(nn.Layer):
    def __init__(self, bn_eps=1e-5, linear_offsets=True):
        super().__init__()
        nf = len(FIELD_DIMS)
        self.embedding = nn.Embedding(sum(FIELD_DIMS), EMBED_DIM)
        self.first_order = FirstOrder(FIELD_DIMS, use_offsets=linear_offsets)
        self.cin = CompressedInteraction(nf, CIN_LAYERS)
        layers, width = [], nf * EMBED_DIM
        for units in DNN_UNITS:
            layers += [nn.Linear(width, units), nn.BatchNorm1D(units, epsilon=bn_eps), nn.ReLU()]
            width = units
        layers.append(nn.Linear(width, 1, bias_attr=False))
        self.dnn = nn.Sequential(*layers)
        offs = np.concatenate([[0], np.cumsum(FIELD_DIMS)[:-1]]).astype("int64")[None, :]
        self.register_buffer("offsets", paddle.to_tensor(offs), persistable=False)

    def forward(self, sparse_ids):
        x0 = self.embedding(sparse_ids + self.offsets)  # [B, F, D]
        logit = self.first_order(sparse_ids)
        logit = logit + self.cin(x0)
        logit = logit + self.dnn(x0.flatten(1))
        return F.sigmoid(logit)


def _trained_look(m):
    rng = np.random.default_rng(37)
    m.embedding.weight.set_value(rng.normal(0.0, 0.5, m.embedding.weight.shape).astype("float32"))
    m.first_order.table.weight.set_value(rng.normal(0.0, 0.2, m.first_order.table.weight.shape).astype("float32"))
    m.first_order.bias.set_value(np.array([-1.5], dtype="float32"))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm1D):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._variance.set_value(rng.uniform(0.3, 1.5, n).astype("float32"))
        elif isinstance(layer, (nn.Conv1D, nn.Linear)) and layer.bias is not None:
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_xdeepfm paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = XDeepFM(bn_eps=1e-3 if bug == "paddle_dnn_bn_eps" else 1e-5,
                linear_offsets=bug != "paddle_linear_no_offsets")
    _trained_look(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(31)
    return np.stack([rng.integers(0, v, BATCH) for v in FIELD_DIMS], axis=1).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # click probabilities [8, 1]: binary cross-entropy against fixed labels
    labels = paddle.to_tensor(np.array([[1], [0], [0], [1], [0], [1], [1], [0]], dtype="float32"))
    return F.binary_cross_entropy(output, labels)

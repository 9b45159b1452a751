"""Hand-written port, paddle side: a tiny DeepFM click-through-rate model (written by "person A").

F = 6 sparse fields with vocab sizes [7, 11, 20, 9, 15, 13], embedding dim 8, batch 4. The
input is one int64 tensor `sparse_ids` [4, 6] holding each field's LOCAL id (0 .. vocab_f - 1).
Output: the click probability [4] = sigmoid(first-order + FM second-order + DNN).

Paddle idioms on this side (one table PER FIELD):
- root `DeepFM` registers `dnn` first, then `fm`, `sparse_embedding`, `first_order` and the
  global `bias` (create_parameter [1], zeros); it calls them as first_order, sparse_embedding,
  fm, dnn;
- `FieldEmbedding` (used twice): `tables` = LayerList of 6 nn.Embedding(vocab_f, dim), field f
  looks up column f of the ids, the results are paddle.stack-ed to [B, F, dim];
  `sparse_embedding` has dim 8, `first_order` has dim 1 (the per-field weights w_i);
- `FMSecondOrder` (no parameters): 0.5 * sum_k((sum_f e_fk)^2 - sum_f e_fk^2) -> [B, 1];
- `DNN`: `fcs` = LayerList of Linear(48, 32), Linear(32, 32), `bns` = LayerList of two
  BatchNorm1D (eval: running statistics), F.relu after each BN, then `out` Linear(32, 1);
  registered fcs, out, bns; the embeddings are flattened (paddle.flatten, start_axis=1) in the
  root before dnn.

The torch side (port_deepfm_torch.py) was written independently in the pytorch-fm style: ONE
packed nn.Embedding(75, 8) (and one packed nn.Embedding(75, 1) for the first-order term) with
per-field offsets added to the ids, a Sequential MLP.

PADIFF_BUG plants this side's bugs:
  paddle_fm_no_half       -> FMSecondOrder drops the 0.5 of 0.5 * ((sum e)^2 - sum e^2)
  paddle_dnn_last_no_relu -> DNN.forward applies F.relu only between hidden layers, not after
                             the last hidden layer's BatchNorm (a `if i < len - 1` guard)
The torch side's bug names are accepted and ignored; any other name raises ValueError.
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

FIELD_DIMS = [7, 11, 20, 9, 15, 13]
EMB_DIM = 8
HIDDEN = [32, 32]
BATCH = 4
OWN_BUGS = {"paddle_fm_no_half", "paddle_dnn_last_no_relu"}
OTHER_BUGS = {"torch_offsets_off_by_one"}


class FieldEmbedding(nn.Layer):
    def __init__(self, field_dims, dim, std):
        super().__init__()
        self.tables = nn.LayerList(
            [nn.Embedding(v, dim, weight_attr=nn.initializer.Normal(0.0, std)) for v in field_dims]
        )

    def forward(self, sparse_ids):
        embs = [table(sparse_ids[:, i]) for i, table in enumerate(self.tables)]
        return paddle.stack(embs, axis=1)  # [B, F, dim]


class FMSecondOrder(nn.Layer):
    def __init__(self, no_half=False):
        super().__init__()
        self.no_half = no_half

    def forward(self, emb):
        summed_square = paddle.square(paddle.sum(emb, axis=1))  # [B, dim]
        square_summed = paddle.sum(paddle.square(emb), axis=1)  # [B, dim]
        second = paddle.sum(summed_square - square_summed, axis=1, keepdim=True)
        return second if self.no_half else 0.5 * second


class DNN(nn.Layer):
    def __init__(self, in_dim, hidden, last_no_relu=False):
        super().__init__()
        self.last_no_relu = last_no_relu
        dims = [in_dim] + hidden
        self.fcs = nn.LayerList([nn.Linear(dims[i], dims[i + 1]) for i in range(len(hidden))])
        self.out = nn.Linear(hidden[-1], 1)
        self.bns = nn.LayerList([nn.BatchNorm1D(h) for h in hidden])

    def forward(self, x):
        n = len(self.fcs)
        for i, (fc, bn) in enumerate(zip(self.fcs, self.bns)):
            x = bn(fc(x))
            if not self.last_no_relu or i < n - 1:
                x = F.relu(x)
        return self.out(x)


class DeepFM(nn.Layer):
    def __init__(self, fm_no_half=False, dnn_last_no_relu=False):
        super().__init__()
        num_fields = len(FIELD_DIMS)
        self.dnn = DNN(num_fields * EMB_DIM, HIDDEN, dnn_last_no_relu)
        self.fm = FMSecondOrder(fm_no_half)
        self.sparse_embedding = FieldEmbedding(FIELD_DIMS, EMB_DIM, 0.3)
        self.first_order = FieldEmbedding(FIELD_DIMS, 1, 0.3)
        self.bias = self.create_parameter([1], default_initializer=nn.initializer.Constant(0.1))

    def forward(self, sparse_ids):
        y_first = paddle.sum(self.first_order(sparse_ids), axis=1) + self.bias  # [B, 1]
        emb = self.sparse_embedding(sparse_ids)  # [B, F, 8]
        y_fm = self.fm(emb)
        y_dnn = self.dnn(paddle.flatten(emb, start_axis=1))
        logit = y_first + y_fm + y_dnn
        return F.sigmoid(paddle.squeeze(logit, axis=1))


def _randomize_bn_stats(m):
    rng = np.random.default_rng(4)
    for layer in m.sublayers():
        if isinstance(layer, nn.BatchNorm1D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.2, 1.0, c).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_deepfm paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = DeepFM(fm_no_half=bug == "paddle_fm_no_half", dnn_last_no_relu=bug == "paddle_dnn_last_no_relu")
    _randomize_bn_stats(m)
    m.eval()
    return m


def _ids():
    rng = np.random.default_rng(9)
    return np.stack([rng.integers(0, v, BATCH) for v in FIELD_DIMS], axis=1).astype("int64")


def inputs():
    return (paddle.to_tensor(_ids()),), {}


def loss(output):
    # click probabilities [4]
    return (output**2).mean()

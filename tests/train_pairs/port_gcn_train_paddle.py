"""Hand-written port in TRAINING mode, paddle side (written by "person A", after Kipf & Welling's
TensorFlow gcn): a 2-layer graph convolutional network for node classification on a fixed
12-node graph, trained 3 full-batch steps.

    graph: a 12-node ring plus 5 chords (17 undirected edges); A_hat = D^-1/2 (A + I) D^-1/2
        computed ONCE with paddle ops at import (paddle.diag(d^-1/2) @ (A + I) @ paddle.diag(d^-1/2))
        and passed to the model as a FORWARD INPUT: forward(x, adj)
    convs = LayerList([GraphConv(8, 16), GraphConv(16, 3)]); GraphConv (TF-gcn style): dropout on its
        INPUT (F.dropout(x, self.dropout), p 0.3), weight [in, out] and bias [out] made with
        create_parameter, out = adj @ (x @ W) + b
    ReLU between the layers; the second layer's output is the logits [12, 3].
Dropout: 2 calls per forward (inside convs.0 on the features [12, 8], inside convs.1 on the hidden
[12, 16]), model.train().

Data: features N(0, 1) [12, 8] (default_rng(28)); labels 0,0,0,0,1,1,1,1,2,2,2,2; training nodes
0, 1, 4, 5, 8, 9 (the rest unlabelled for training). Loss: cross-entropy over the training nodes
only, written as F.cross_entropy(gather(logits, idx_train), gather(labels, idx_train)).
Optimizer: paddle.optimizer.SGD(learning_rate=CosineAnnealingDecay(0.5, T_max=3)) (lr 0.5, 0.375,
0.125 for updates 1..3) with weight decay 5e-3 on the WEIGHTS only, expressed the paddle way: a
param-level regularizer, ParamAttr(regularizer=L2Decay(5e-3)) on each weight; the biases have none
and the optimizer has weight_decay=None. optimizer() returns (opt, sched).
Weights: paddle's default Xavier weights, biases N(0, 0.1) (paddle.seed(0)).

PADIFF_BUG (this side only):
  paddle_keep_prob   -> GraphConv drops with F.dropout(x, 1 - self.dropout): the TF original's
                     tf.nn.dropout(x, 1 - dropout) (whose 2nd argument is keep_prob) translated
                     literally: p 0.7 instead of 0.3 in both layers
  paddle_bias_decay  -> the bias made with the weight's ParamAttr too (attr=self._attr, copy-paste):
                     L2Decay(5e-3) on the biases as well
"""
import numpy as np
import paddle
import paddle.nn.functional as F
from _train_common import bug
from paddle import nn

BUGS = {"paddle_keep_prob", "paddle_bias_decay"} | {"mask_mean_all"}  # the torch side's, ignored here
N_NODES, N_FEAT, N_HID, N_CLASS = 12, 8, 16, 3
DROPOUT = 0.3
LR, T_MAX, WD = 0.5, 3, 5e-3

EDGES = [(i, (i + 1) % N_NODES) for i in range(N_NODES)] + [(0, 6), (1, 5), (2, 9), (3, 7), (4, 10)]
FEATURES = np.random.default_rng(28).standard_normal((N_NODES, N_FEAT)).astype("float32")
LABELS = np.repeat(np.arange(N_CLASS), N_NODES // N_CLASS).astype("int64")
IDX_TRAIN = np.array([0, 1, 4, 5, 8, 9], "int64")


def normalized_adjacency():
    a = np.zeros((N_NODES, N_NODES), "float32")
    for i, j in EDGES:
        a[i, j] = a[j, i] = 1.0
    a_hat = paddle.to_tensor(a) + paddle.eye(N_NODES)
    d_inv_sqrt = paddle.diag(a_hat.sum(axis=1).pow(-0.5))
    return paddle.matmul(paddle.matmul(d_inv_sqrt, a_hat), d_inv_sqrt)


ADJ = normalized_adjacency()  # once


class GraphConv(nn.Layer):
    def __init__(self, in_dim, out_dim, dropout, weight_decay, bias_decay=False):
        super().__init__()
        self.dropout = dropout
        self._attr = paddle.ParamAttr(regularizer=paddle.regularizer.L2Decay(weight_decay))
        self.weight = self.create_parameter([in_dim, out_dim], attr=self._attr)
        self.bias = self.create_parameter([out_dim], attr=self._attr if bias_decay else None, is_bias=True)

    def forward(self, x, adj, keep_prob_bug=False):
        x = F.dropout(x, 1 - self.dropout if keep_prob_bug else self.dropout, training=self.training)
        return paddle.matmul(adj, paddle.matmul(x, self.weight)) + self.bias


class GCN(nn.Layer):
    def __init__(self, nfeat, nhid, nclass, dropout, weight_decay, bias_decay=False, keep_prob_bug=False):
        super().__init__()
        self.keep_prob_bug = keep_prob_bug
        self.convs = nn.LayerList([GraphConv(nfeat, nhid, dropout, weight_decay, bias_decay),
                                   GraphConv(nhid, nclass, dropout, weight_decay, bias_decay)])

    def forward(self, x, adj):
        h = F.relu(self.convs[0](x, adj, self.keep_prob_bug))
        return self.convs[1](h, adj, self.keep_prob_bug)


def model():
    b = bug(BUGS)
    paddle.seed(0)
    m = GCN(N_FEAT, N_HID, N_CLASS, DROPOUT, WD, bias_decay=b == "paddle_bias_decay",
            keep_prob_bug=b == "paddle_keep_prob")
    for name, p in m.named_parameters():
        if name.endswith("bias"):
            p.set_value(paddle.normal(0.0, 0.1, p.shape).astype(p.dtype))
    m.train()
    return m


def inputs():
    return (paddle.to_tensor(FEATURES), ADJ), {}


def loss(output):
    idx = paddle.to_tensor(IDX_TRAIN)
    return F.cross_entropy(paddle.gather(output, idx), paddle.gather(paddle.to_tensor(LABELS), idx))


def optimizer(model):
    sched = paddle.optimizer.lr.CosineAnnealingDecay(learning_rate=LR, T_max=T_MAX)
    opt = paddle.optimizer.SGD(learning_rate=sched, parameters=model.parameters())  # decay: per parameter
    return opt, sched

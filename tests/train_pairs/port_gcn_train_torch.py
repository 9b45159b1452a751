"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_gcn_train_paddle.py), in the PyG GCNConv style without PyG:

    adj_norm: D^-1/2 (A + I) D^-1/2 computed ONCE in __init__ with torch ops (degree vector, rsqrt,
        broadcasting d[:, None] * A_hat * d[None, :]) and stored as a non-trainable,
        non-persistent BUFFER of the model: forward(x) takes the features only
    gc1, gc2 = GCNLayer(8, 16), GCNLayer(16, 3): F.dropout on the layer's input (p 0.3), then
        out = lin(adj @ x) + bias with lin = nn.Linear(in, out, bias=False) (weight [out, in]) and
        a separate bias parameter added after the aggregation (aggregate first: (A X) W)
    act = nn.ReLU() between the layers.
Dropout: 2 calls per forward, same order and shapes as the paddle side.

Loss: per-node F.cross_entropy(..., reduction="none") times a float train mask, summed and divided by
the mask's sum (the masked mean over the 6 training nodes).
Optimizer: torch.optim.SGD(lr 0.5) with two parameter groups: weights weight_decay 5e-3, biases 0
(decay by name: "bias" in the name), + CosineAnnealingLR(T_max=3): lr 0.5, 0.375, 0.125.

PADIFF_BUG (this side only):
  mask_mean_all -> (loss * mask).mean(): the masked losses divided by all 12 nodes instead of the 6
                 training nodes (the loss and every gradient halved)
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"mask_mean_all"} | {"paddle_keep_prob", "paddle_bias_decay"}  # the paddle side's, ignored here
NUM_NODES = 12
HPARAMS = {"hidden": 16, "dropout": 0.3, "lr": 0.5, "weight_decay": 5e-3, "epochs": 3}
RING = [(i, (i + 1) % NUM_NODES) for i in range(NUM_NODES)]
CHORDS = [(0, 6), (1, 5), (2, 9), (3, 7), (4, 10)]

X = np.random.default_rng(28).standard_normal((NUM_NODES, 8)).astype("float32")
Y = np.array([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2], "int64")
TRAIN_MASK = np.zeros(NUM_NODES, bool)
TRAIN_MASK[[0, 1, 4, 5, 8, 9]] = True


def gcn_norm(edges, n):
    a = torch.zeros(n, n)
    idx = torch.tensor(edges)
    a[idx[:, 0], idx[:, 1]] = 1.0
    a[idx[:, 1], idx[:, 0]] = 1.0
    a = a + torch.eye(n)
    d = a.sum(dim=1).rsqrt()
    return d[:, None] * a * d[None, :]


class GCNLayer(nn.Module):
    def __init__(self, in_channels, out_channels, dropout):
        super().__init__()
        self.p = dropout
        self.lin = nn.Linear(in_channels, out_channels, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_channels))

    def forward(self, x, adj):
        x = F.dropout(x, self.p, self.training)
        return self.lin(adj @ x) + self.bias


class NodeClassifier(nn.Module):
    def __init__(self, in_channels, num_classes, hp):
        super().__init__()
        self.register_buffer("adj_norm", gcn_norm(RING + CHORDS, NUM_NODES), persistent=False)
        self.gc1 = GCNLayer(in_channels, hp["hidden"], hp["dropout"])
        self.act = nn.ReLU()
        self.gc2 = GCNLayer(hp["hidden"], num_classes, hp["dropout"])

    def forward(self, x):
        return self.gc2(self.act(self.gc1(x, self.adj_norm)), self.adj_norm)


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = NodeClassifier(X.shape[1], int(Y.max()) + 1, HPARAMS)
    m.train()
    return m


def inputs():
    return (torch.from_numpy(X),), {}


def loss(output):
    mask = torch.from_numpy(TRAIN_MASK).to(output.dtype)
    per_node = F.cross_entropy(output, torch.from_numpy(Y), reduction="none")
    if bug(BUGS) == "mask_mean_all":
        return (per_node * mask).mean()
    return (per_node * mask).sum() / mask.sum()


def optimizer(model):
    decay = [p for n, p in model.named_parameters() if "bias" not in n]
    no_decay = [p for n, p in model.named_parameters() if "bias" in n]
    opt = torch.optim.SGD([{"params": decay, "weight_decay": HPARAMS["weight_decay"]},
                           {"params": no_decay, "weight_decay": 0.0}], lr=HPARAMS["lr"])
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=HPARAMS["epochs"])
    return opt, sched

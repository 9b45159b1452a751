"""Hand-written port, paddle side: an MMoE multi-task recommender (written by "person A").

Inputs (positional, numpy rng seed 77, batch 8):
  sparse_ids [8, 3] int64: one id per sparse field, vocabularies 10 / 8 / 6
  dense      [8, 5] float32: five raw dense features (normal, mean 0.5, std 1.5)
Output: [8, 2] float32, the two task probabilities (column 0: CTR, column 1: CVR).

Model (Ma et al. 2018, multi-gate mixture-of-experts):
  x        = concat(emb_0(id_0), emb_1(id_1), emb_2(id_2), BN(dense))      [8, 3*4 + 5 = 17]
             (BN: eval-mode batch norm with trained statistics, eps 1e-3)
  expert e = relu(W2_e relu(W1_e x + b1_e) + b2_e), 17 -> 16 -> 8, e = 0..3      [8, 8]
  gate t   = softmax over the 4 experts of (G_t x + c_t), t = 0 (CTR), 1 (CVR)  [8, 4]
  mix t    = sum_e gate_t[:, e] * expert_e                                       [8, 8]
  prob t   = sigmoid(V2_t relu(V1_t mix_t + a1_t) + a2_t), 8 -> 8 -> 1           [8, 1]

Paddle idioms on this side:
- root `MMoE`: `embeddings` (LayerList, ONE nn.Embedding(V_i, 4) PER FIELD, called per field),
  `dense_bn` (nn.BatchNorm1D(5, epsilon=1e-3)), `mmoe` (`MMoELayer`), `towers` (LayerList of
  `Tower`, index 0 = CTR, 1 = CVR). The concatenations are inline in the root forward; the root
  returns paddle.concat of the two [8, 1] probabilities.
- `MMoELayer`: `experts` (LayerList of four `Expert`, each its own `fc1` / `fc2` Linear, ReLU
  inline after both) and `gates` (LayerList of two Linear(17, 4)). The gate softmax, the stack of
  the expert outputs to [8, 4, 8] and the weighted sum are INLINE in its forward; it returns a
  list of the two task mixtures.
- `Tower`: `fc1` Linear(8, 8), F.relu inline, `fc2` Linear(8, 1), F.sigmoid inline.
- Linear weights are [in, out] (paddle layout).
- model() gives the embeddings, every Linear bias and the BN affine weights / running statistics
  trained-looking values (seeded, rng 7), so no bias is zero and the BN is not an identity.

The torch side (port_mmoe_torch.py) was written independently: one offset embedding table, a
hand-written dense standardiser, the experts stacked into batched [E, in, out] weights (bmm), one
fused gate Linear for both tasks with an nn.Softmax module, and an nn.ModuleDict of towers.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_expert_no_out_relu -> `Expert.forward` returns fc2(...) without the ReLU on the
                               expert output (all four experts)
  paddle_gate_softmax_axis0 -> `MMoELayer.forward` takes the gate softmax over axis 0 (the
                               batch) instead of the expert axis
"""
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

VOCABS = (10, 8, 6)
EMB_DIM, N_DENSE = 4, 5
IN_DIM = len(VOCABS) * EMB_DIM + N_DENSE  # 17
N_EXPERTS, EXPERT_HIDDEN, EXPERT_OUT = 4, 16, 8
N_TASKS, TOWER_HIDDEN = 2, 8
BN_EPS = 1e-3
BATCH = 8
OWN_BUGS = {"paddle_expert_no_out_relu", "paddle_gate_softmax_axis0"}
OTHER_BUGS = {"torch_experts_reshape", "torch_dense_eps_outside"}


class Expert(nn.Layer):
    def __init__(self, out_relu=True):
        super().__init__()
        self.out_relu = out_relu
        self.fc1 = nn.Linear(IN_DIM, EXPERT_HIDDEN)
        self.fc2 = nn.Linear(EXPERT_HIDDEN, EXPERT_OUT)

    def forward(self, x):
        y = self.fc2(F.relu(self.fc1(x)))
        return F.relu(y) if self.out_relu else y


class MMoELayer(nn.Layer):
    def __init__(self, out_relu=True, softmax_axis=-1):
        super().__init__()
        self.softmax_axis = softmax_axis
        self.experts = nn.LayerList([Expert(out_relu) for _ in range(N_EXPERTS)])
        self.gates = nn.LayerList([nn.Linear(IN_DIM, N_EXPERTS) for _ in range(N_TASKS)])

    def forward(self, x):
        expert_out = paddle.stack([expert(x) for expert in self.experts], axis=1)  # [B, E, D]
        mixes = []
        for gate in self.gates:
            g = F.softmax(gate(x), axis=self.softmax_axis)  # [B, E]
            mixes.append(paddle.sum(g.unsqueeze(-1) * expert_out, axis=1))  # [B, D]
        return mixes


class Tower(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(EXPERT_OUT, TOWER_HIDDEN)
        self.fc2 = nn.Linear(TOWER_HIDDEN, 1)

    def forward(self, x):
        return F.sigmoid(self.fc2(F.relu(self.fc1(x))))


class MMoE(nn.Layer):
    def __init__(self, out_relu=True, softmax_axis=-1):
        super().__init__()
        self.embeddings = nn.LayerList([nn.Embedding(v, EMB_DIM) for v in VOCABS])
        self.dense_bn = nn.BatchNorm1D(N_DENSE, momentum=0.99, epsilon=BN_EPS)
        self.mmoe = MMoELayer(out_relu, softmax_axis)
        self.towers = nn.LayerList([Tower() for _ in range(N_TASKS)])

    def forward(self, sparse_ids, dense):
        embs = [emb(sparse_ids[:, i]) for i, emb in enumerate(self.embeddings)]
        x = paddle.concat(embs + [self.dense_bn(dense)], axis=-1)  # [B, 17]
        mixes = self.mmoe(x)
        probs = [tower(mix) for tower, mix in zip(self.towers, mixes)]
        return paddle.concat(probs, axis=-1)  # [B, 2]


def _trained_look(m):
    rng = np.random.default_rng(7)
    for emb in m.embeddings:
        emb.weight.set_value(rng.normal(0.0, 0.5, emb.weight.shape).astype("float32"))
    bn = m.dense_bn
    bn.weight.set_value(rng.uniform(0.6, 1.4, N_DENSE).astype("float32"))
    bn.bias.set_value(rng.normal(0.0, 0.3, N_DENSE).astype("float32"))
    bn._mean.set_value(rng.normal(0.5, 0.5, N_DENSE).astype("float32"))
    bn._variance.set_value(rng.uniform(0.05, 3.0, N_DENSE).astype("float32"))
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.Linear):
            layer.bias.set_value(rng.normal(0.0, 0.2, layer.bias.shape).astype("float32"))


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_mmoe paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = MMoE(out_relu=bug != "paddle_expert_no_out_relu",
             softmax_axis=0 if bug == "paddle_gate_softmax_axis0" else -1)
    _trained_look(m)
    m.eval()
    return m


def _data():
    rng = np.random.default_rng(77)
    ids = np.stack([rng.integers(0, v, BATCH) for v in VOCABS], axis=1).astype("int64")
    dense = rng.normal(0.5, 1.5, (BATCH, N_DENSE)).astype("float32")
    return ids, dense


def inputs():
    ids, dense = _data()
    return (paddle.to_tensor(ids), paddle.to_tensor(dense)), {}


def loss(output):
    # task probabilities [8, 2]: binary cross-entropy against fixed labels
    labels = paddle.to_tensor(np.array([[1, 0], [0, 0], [1, 1], [0, 0], [1, 0], [0, 0], [1, 1], [0, 1]], "float32"))
    return F.binary_cross_entropy(output, labels)

"""Hand-written port, paddle side: a tiny Deep & Cross Network v2 for CTR data (written by "person A").

Inputs (positional): `dense` [16, 6] float32 (numpy rng seed 31, log-normal-ish features, then
log1p'd by the data pipeline) and `sparse_ids` [16, 4] int64, one categorical id per field with
vocab sizes 10 / 7 / 13 / 5 (same rng). Output: one click logit per row, [16, 1].

Model (parallel DCN-v2, full-rank cross layers):
  emb_f   = table_f[id_f]                      (4 fields, embedding dim 4)
  x0      = concat(emb_0, emb_1, emb_2, emb_3, dense)       -> d = 16 + 6 = 22
  cross   x_{l+1} = x0 * (x_l W_l + b_l) + x_l, l = 0, 1, 2  (3 full-rank layers)
  deep    Linear(22, 32) -> BN -> ReLU -> Linear(32, 16) -> BN -> ReLU
  logit   Linear(22 + 16, 1) over concat(cross_out, deep_out)

Paddle idioms on this side:
- root `DCNv2`: `embedding` = ONE nn.Embedding(35, 4) shared by all fields, indexed with
  id + field offset (a non-persistable buffer `field_offsets` = [0, 10, 17, 30]); the four
  field vectors are flattened to [B, 16] and concatenated BEFORE the dense features (sparse | dense).
- `cross_net` = `CrossNet`: the cross weights are ONE stacked parameter `kernels` [3, 22, 22]
  ([in, out] per layer, x @ W) and `biases` [3, 22] (create_parameter); the three layers are an
  inline loop, no per-layer module.
- `deep_net` = nn.Sequential(Linear, BatchNorm1D, ReLU, Linear, BatchNorm1D, ReLU).
- `logit` = nn.Linear(38, 1).
- model() gives the embedding, the cross weights / biases, the Linear biases and the BN affine
  weights trained-looking (seeded, rng 41) values, and the BN running statistics values close to
  the statistics of the data each BN sees (batch mean + noise, batch variance x U(0.7, 1.4)), so
  that nothing is an identity.

The torch side (port_dcnv2_torch.py) was written independently: one nn.Embedding per field,
dense | sparse order, the cross layers as a ModuleList of nn.Linear, an MLP module built in a loop.

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_cross_uses_xl -> the cross loop multiplies by x_l instead of x0:
                          x_{l+1} = x_l * (x_l W_l + b_l) + x_l (identical for layer 0)
  paddle_bn_eps        -> the deep tower's BatchNorm1D layers are built with epsilon=1e-3 (the
                          Keras default of the TF reference; the port should use 1e-5)
"""
import os

import numpy as np
import paddle
from paddle import nn

VOCAB_SIZES = (10, 7, 13, 5)
EMB_DIM, N_DENSE, N_CROSS = 4, 6, 3
DEEP_DIMS = (32, 16)
BATCH = 16
D_IN = EMB_DIM * len(VOCAB_SIZES) + N_DENSE
OWN_BUGS = {"paddle_cross_uses_xl", "paddle_bn_eps"}
OTHER_BUGS = {"torch_cross_residual_x0", "torch_mlp_last_no_relu"}


class CrossNet(nn.Layer):
    def __init__(self, dim, num_layers, uses_xl=False):
        super().__init__()
        self.num_layers = num_layers
        self.uses_xl = uses_xl
        self.kernels = self.create_parameter(
            [num_layers, dim, dim], default_initializer=nn.initializer.XavierNormal())
        self.biases = self.create_parameter(
            [num_layers, dim], is_bias=True, default_initializer=nn.initializer.Constant(0.0))

    def forward(self, x0):
        x = x0
        for i in range(self.num_layers):
            xw = paddle.matmul(x, self.kernels[i]) + self.biases[i]
            if self.uses_xl:
                x = x * xw + x
            else:
                x = x0 * xw + x
        return x


class DCNv2(nn.Layer):
    def __init__(self, cross_uses_xl=False, bn_eps=1e-5):
        super().__init__()
        self.embedding = nn.Embedding(sum(VOCAB_SIZES), EMB_DIM)
        offsets = np.concatenate([[0], np.cumsum(VOCAB_SIZES)[:-1]]).astype("int64")
        self.register_buffer("field_offsets", paddle.to_tensor(offsets), persistable=False)
        self.cross_net = CrossNet(D_IN, N_CROSS, uses_xl=cross_uses_xl)
        layers, prev = [], D_IN
        for h in DEEP_DIMS:
            layers += [nn.Linear(prev, h), nn.BatchNorm1D(h, epsilon=bn_eps), nn.ReLU()]
            prev = h
        self.deep_net = nn.Sequential(*layers)
        self.logit = nn.Linear(D_IN + DEEP_DIMS[-1], 1)

    def forward(self, dense, sparse_ids):
        emb = self.embedding(sparse_ids + self.field_offsets)  # [B, 4, 4]
        x0 = paddle.concat([emb.reshape([emb.shape[0], -1]), dense], axis=1)  # sparse | dense
        cross_out = self.cross_net(x0)
        deep_out = self.deep_net(x0)
        return self.logit(paddle.concat([cross_out, deep_out], axis=1))


def _trained_look(m):
    rng = np.random.default_rng(41)
    m.embedding.weight.set_value(rng.normal(0.0, 0.5, m.embedding.weight.shape).astype("float32"))
    cn = m.cross_net
    cn.kernels.set_value(rng.normal(0.0, 0.12, cn.kernels.shape).astype("float32"))
    cn.biases.set_value(rng.normal(0.0, 0.1, cn.biases.shape).astype("float32"))
    for layer in m.sublayers():
        if isinstance(layer, nn.Linear):
            layer.bias.set_value(rng.normal(0.0, 0.1, layer.bias.shape).astype("float32"))
    # BN running statistics that look like the end of training: close to the statistics of
    # (a batch of) the data each BN actually sees, not 0 / 1
    (dense, ids), _ = inputs()
    with paddle.no_grad():
        x = paddle.concat([m.embedding(ids + m.field_offsets).reshape([BATCH, -1]), dense], axis=1)
        for layer in m.deep_net:
            if isinstance(layer, nn.BatchNorm1D):
                h, n = x.numpy(), x.shape[1]
                layer.weight.set_value(rng.uniform(0.6, 1.4, n).astype("float32"))
                layer.bias.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
                layer._mean.set_value((h.mean(0) + rng.normal(0.0, 0.1, n) * h.std(0)).astype("float32"))
                layer._variance.set_value((h.var(0) * rng.uniform(0.7, 1.4, n)).astype("float32"))
                x = paddle.nn.functional.batch_norm(x, layer._mean, layer._variance, layer.weight, layer.bias,
                                                    training=False, epsilon=1e-5)
            else:
                x = layer(x)


def model():
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_dcnv2 paddle: unknown PADIFF_BUG {bug!r}")
    paddle.seed(0)
    m = DCNv2(cross_uses_xl=bug == "paddle_cross_uses_xl", bn_eps=1e-3 if bug == "paddle_bn_eps" else 1e-5)
    _trained_look(m)
    m.eval()
    return m


def _data():
    rng = np.random.default_rng(31)
    dense = np.log1p(rng.lognormal(0.0, 1.0, (BATCH, N_DENSE))).astype("float32")
    ids = np.stack([rng.integers(0, v, BATCH) for v in VOCAB_SIZES], axis=1).astype("int64")
    return dense, ids


def inputs():
    dense, ids = _data()
    return (paddle.to_tensor(dense), paddle.to_tensor(ids)), {}


def loss(output):
    # click logits [16, 1]
    return (output**2).mean()

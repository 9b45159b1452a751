"""Hand-written port, paddle side: a TabNet encoder + head (Arik & Pfister) for tabular rows (written by "person A").

Input: one float tensor `features` [8, 10] (positional; 8 rows of 10 numeric features, numpy rng
seed 27). Output: class logits [8, 3].

The model (eval mode; every BN uses trained-looking running statistics):
  x      = BN(features)                                      (feature_bn)
  h      = FT_0(x); a = h[:, 8:]                              (initial split, no decision)
  prior  = 1
  for step in 0, 1, 2:
      M      = sparsemax(BN(a @ W_att) * prior)              (attentive transformer)
      prior  = prior * (1.3 - M)                             (relaxation gamma 1.3)
      h      = FT_{step+1}(M * x)
      d_sum += relu(h[:, :8]); a = h[:, 8:]
  logits = d_sum @ W_head + b

A feature transformer FT is four GLU units of width 16 (n_d = n_a = 8):
  u(x) = BN_v(x @ W_v) * sigmoid(BN_g(x @ W_g))              (no Linear bias)
  FT(x): x = u_s0(x); x = (x + u_s1(x)) * sqrt(0.5); x = (x + u_k0(x)) * sqrt(0.5);
         x = (x + u_k1(x)) * sqrt(0.5)
The first two units (u_s0: 10 -> 16, u_s1: 16 -> 16) are SHARED by all four transformers: one
LayerList object, every Linear and BN of it reused; u_k0 / u_k1 belong to each transformer.

Paddle idioms on this side:
- root `TabNetModel` registers `feature_bn` (BatchNorm1D(10)), `shared_glu` (the shared
  LayerList of two `GLUUnit`), `splitter` (the initial FeatureTransformer), `step_transformers`
  (LayerList of 3 FeatureTransformer), `attentions` (LayerList of 3 AttentiveTransformer), `head`
  Linear(8, 3). The prior update, masking, decision relu and step sum are inline in its forward.
- `GLUUnit` keeps the two GLU halves apart: `value_fc`, `gate_fc` (Linear(in, 16,
  bias_attr=False)), `value_bn`, `gate_bn` (BatchNorm1D(16, momentum=0.98)).
- `FeatureTransformer(shared, width)` stores the shared LayerList as `shared` (the same object in
  all four; paddle names it after the root's `shared_glu`) and its own `step_units` (LayerList of
  two GLUUnit); the sqrt(0.5)-scaled residuals are inline in its forward.
- `AttentiveTransformer`: `proj` Linear(8, 10, bias_attr=False), `norm` BatchNorm1D(10), called
  as (a, prior); the sparsemax is a module-level function (sort-based, descending sort, support
  from 1 + k * z_(k) > cumsum, tau = (sum of the support - 1) / |support|), inline, no module.
- model() gives every BN trained-looking affine weights / running statistics and the head a
  non-zero bias (seeded), so that nothing is an identity.

The torch side (port_tabnet_torch.py) was written independently in the style of
dreamquark-ai's pytorch-tabnet: an `encoder` module, FUSED GLU Linears of 2 * 16 (value | gate),
ghost-BN wrappers, a `Sparsemax` module, and only the shared Linears shared (each transformer
there has its own BN modules in the shared block, holding the same values after the copy).

PADIFF_BUG names planted on this side (the torch side's names are accepted and ignored; any
other name raises ValueError):
  paddle_att_bn_eps          -> the attentive transformer's BatchNorm1D is built with epsilon=1e-3
                                (the Keras default, from the TF reference code) instead of 1e-5
  paddle_sparsemax_ascending -> the sparsemax helper sorts with paddle.sort's default (ASCENDING)
                                order instead of descending=True
"""
import math
import os

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn

N_FEATURES, N_D, N_A, N_CLASSES = 10, 8, 8, 3
N_STEPS, N_SHARED, N_INDEPENDENT = 3, 2, 2
GAMMA = 1.3
BATCH = 8
OWN_BUGS = {"paddle_att_bn_eps", "paddle_sparsemax_ascending"}
OTHER_BUGS = {"torch_specifics_first", "torch_prior_after_sparsemax"}

_SPARSEMAX_DESCENDING = True


def sparsemax(z):
    """Sparsemax over the last axis (Martins & Astudillo), sort-based."""
    if _SPARSEMAX_DESCENDING:
        z_sorted = paddle.sort(z, axis=-1, descending=True)
    else:
        z_sorted = paddle.sort(z, axis=-1)
    k = paddle.arange(1, z.shape[-1] + 1, dtype=z.dtype)
    cumsum = paddle.cumsum(z_sorted, axis=-1)
    support = (1.0 + k * z_sorted > cumsum).astype(z.dtype)
    k_z = paddle.sum(support, axis=-1, keepdim=True)
    tau = (paddle.sum(z_sorted * support, axis=-1, keepdim=True) - 1.0) / k_z
    return F.relu(z - tau)


class GLUUnit(nn.Layer):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.value_fc = nn.Linear(in_dim, out_dim, bias_attr=False)
        self.gate_fc = nn.Linear(in_dim, out_dim, bias_attr=False)
        self.value_bn = nn.BatchNorm1D(out_dim, momentum=0.98)
        self.gate_bn = nn.BatchNorm1D(out_dim, momentum=0.98)

    def forward(self, x):
        return self.value_bn(self.value_fc(x)) * F.sigmoid(self.gate_bn(self.gate_fc(x)))


class FeatureTransformer(nn.Layer):
    def __init__(self, shared, width):
        super().__init__()
        self.shared = shared  # the SAME LayerList in every transformer
        self.step_units = nn.LayerList([GLUUnit(width, width) for _ in range(N_INDEPENDENT)])

    def forward(self, x):
        scale = math.sqrt(0.5)
        x = self.shared[0](x)
        for unit in self.shared[1:]:
            x = (x + unit(x)) * scale
        for unit in self.step_units:
            x = (x + unit(x)) * scale
        return x


class AttentiveTransformer(nn.Layer):
    def __init__(self, n_a, n_features, bn_eps=1e-5):
        super().__init__()
        self.proj = nn.Linear(n_a, n_features, bias_attr=False)
        self.norm = nn.BatchNorm1D(n_features, momentum=0.98, epsilon=bn_eps)

    def forward(self, a, prior):
        return sparsemax(self.norm(self.proj(a)) * prior)


class TabNetModel(nn.Layer):
    def __init__(self, att_bn_eps=1e-5):
        super().__init__()
        width = N_D + N_A
        self.feature_bn = nn.BatchNorm1D(N_FEATURES, momentum=0.99)
        self.shared_glu = nn.LayerList([GLUUnit(N_FEATURES, width)] +
                                       [GLUUnit(width, width) for _ in range(N_SHARED - 1)])
        self.splitter = FeatureTransformer(self.shared_glu, width)
        self.step_transformers = nn.LayerList([FeatureTransformer(self.shared_glu, width) for _ in range(N_STEPS)])
        self.attentions = nn.LayerList([AttentiveTransformer(N_A, N_FEATURES, att_bn_eps) for _ in range(N_STEPS)])
        self.head = nn.Linear(N_D, N_CLASSES)

    def forward(self, features):
        x = self.feature_bn(features)
        a = self.splitter(x)[:, N_D:]
        prior = paddle.ones_like(x)
        decision = paddle.zeros([x.shape[0], N_D], dtype=x.dtype)
        for step in range(N_STEPS):
            mask = self.attentions[step](a, prior)
            prior = prior * (GAMMA - mask)
            h = self.step_transformers[step](mask * x)
            decision = decision + F.relu(h[:, :N_D])
            a = h[:, N_D:]
        return self.head(decision)


def _trained_look(m):
    rng = np.random.default_rng(27)
    for _name, layer in m.named_sublayers():
        if isinstance(layer, nn.BatchNorm1D):
            c = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.6, 1.4, c).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.3, c).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 2.0, c).astype("float32"))
    m.head.bias.set_value(rng.normal(0.0, 0.2, N_CLASSES).astype("float32"))


def model():
    global _SPARSEMAX_DESCENDING
    bug = os.environ.get("PADIFF_BUG", "")
    if bug and bug not in OWN_BUGS | OTHER_BUGS:
        raise ValueError(f"port_tabnet paddle: unknown PADIFF_BUG {bug!r}")
    _SPARSEMAX_DESCENDING = bug != "paddle_sparsemax_ascending"
    paddle.seed(0)
    m = TabNetModel(att_bn_eps=1e-3 if bug == "paddle_att_bn_eps" else 1e-5)
    _trained_look(m)
    m.eval()
    return m


def _features():
    rng = np.random.default_rng(27)
    return (rng.standard_normal((BATCH, N_FEATURES)) * 1.5 + 0.2).astype("float32")


def inputs():
    return (paddle.to_tensor(_features()),), {}


def loss(output):
    # class logits [8, 3]
    return (output**2).mean()

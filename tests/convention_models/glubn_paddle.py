"""Gated units with batch norms: here each half of the unit has a Linear and a BatchNorm of its
own (``value_fc``, ``value_bn``, ``gate_fc``, ``gate_bn``); the torch side (glubn_torch.py) keeps
one Linear ``fc [2d]`` and one ``BatchNorm1d(2d)`` over both halves and calls ``F.glu``. The
per-channel tensors of the one BatchNorm (weight, bias, running mean and variance) hold the two
BatchNorms' side by side, value half first. Eval mode: the running statistics are used.

PADIFF_BUG: paddle_gate_bn_eps (this side: the gate's BatchNorm with epsilon 1e-3)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug, hidden
from paddle import nn

D, N = 16, 2


class GatedUnit(nn.Layer):
    def __init__(self):
        super().__init__()
        self.value_fc = nn.Linear(D, D, bias_attr=False)
        self.value_bn = nn.BatchNorm1D(D)
        self.gate_fc = nn.Linear(D, D, bias_attr=False)
        self.gate_bn = nn.BatchNorm1D(D, epsilon=1e-3 if bug() == "paddle_gate_bn_eps" else 1e-5)

    def forward(self, x):
        b, s, d = x.shape
        flat = x.reshape([b * s, d])
        value = self.value_bn(self.value_fc(flat))
        gate = self.gate_bn(self.gate_fc(flat))
        return (value * F.sigmoid(gate)).reshape([b, s, d])


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.units = nn.LayerList([GatedUnit() for _ in range(N)])
        self.norm = nn.LayerNorm(D)

    def forward(self, x):
        for u in self.units:
            x = x + u(x)
        return self.norm(x)


def model():
    if bug() not in ("", "paddle_gate_bn_eps"):
        raise ValueError(f"glubn paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(5)
    for u in net.units:  # statistics and affine terms as training leaves them
        for bn in (u.value_bn, u.gate_bn):
            bn.weight.set_value(rng.uniform(0.5, 1.5, D).astype("float32"))
            bn.bias.set_value(rng.normal(0.0, 0.3, D).astype("float32"))
            bn._mean.set_value(rng.normal(0.0, 0.2, D).astype("float32"))
            bn._variance.set_value(rng.uniform(0.05, 0.1, D).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out[..., :4].pow(2).mean()  # a LayerNorm output squared and averaged over all features is constant

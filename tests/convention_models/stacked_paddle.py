"""A multi-task mixture of experts written the way one library writes it: a list of expert
modules (Linear, GELU, Linear), one gate Linear per task with its softmax inline, one tower per
task. The torch side (stacked_torch.py) holds the experts batched (``w1 [E, D, H]``, one call
returning every expert's output ``[N, E, OUT]``), one Linear for both tasks' gates and a softmax
module of its own.

PADIFF_BUG: paddle_gate_temperature (this side: the gate logits divided by 2 before the softmax),
paddle_expert1_gelu_tanh (this side: expert 1 computes the tanh approximation of GELU),
paddle_experts_gelu_tanh (this side: every expert does)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import D, bug, hidden
from paddle import nn

E, H, OUT, T = 3, 24, 8, 2


class Expert(nn.Layer):
    def __init__(self, approximate=False):
        super().__init__()
        self.up = nn.Linear(D, H)
        self.down = nn.Linear(H, OUT)
        self.approximate = approximate

    def forward(self, x):
        return self.down(F.gelu(self.up(x), approximate=self.approximate))


class Mixture(nn.Layer):
    def __init__(self):
        super().__init__()
        self.experts = nn.LayerList([Expert(approximate=bug() == "paddle_experts_gelu_tanh" or (bug() == "paddle_expert1_gelu_tanh" and i == 1))
                                     for i in range(E)])
        self.gates = nn.LayerList([nn.Linear(D, E) for _ in range(T)])

    def forward(self, x):
        outs = paddle.stack([e(x) for e in self.experts], axis=1)  # [N, E, OUT]
        mixed = []
        for g in self.gates:
            logits = g(x) / (2.0 if bug() == "paddle_gate_temperature" else 1.0)
            w = F.softmax(logits, axis=-1)
            mixed.append((outs * w.unsqueeze(-1)).sum(axis=1))
        return mixed


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.mixture = Mixture()
        self.towers = nn.LayerList([nn.Linear(OUT, 1) for _ in range(T)])

    def forward(self, x):
        return paddle.concat([t(m) for t, m in zip(self.towers, self.mixture(x))], axis=-1)


def model():
    if bug() not in ("", "paddle_gate_temperature", "torch_expert_gelu_tanh", "paddle_expert1_gelu_tanh",
                     "paddle_experts_gelu_tanh"):
        raise ValueError(f"stacked paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(5)
    for p in net.parameters():  # trained-looking biases
        if len(p.shape) == 1:
            p.set_value(0.3 * rng.standard_normal(p.shape).astype("float32"))
    return net


def inputs():
    return (paddle.to_tensor(hidden().reshape(-1, D)),), {}


def loss(out):
    return out.pow(2).mean()

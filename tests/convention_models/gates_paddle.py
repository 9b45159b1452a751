"""Two update blocks that mix each token with the sequence's mean: here one Linear per input
(``lin_x`` with the bias, ``lin_ctx`` without) whose outputs are added and squashed by an inline
tanh; the torch side (gates_torch.py) feeds one Linear the two concatenated and squashes with a
``Tanh`` module of its own.

PADIFF_BUG: paddle_ctx_halved (this side: the context is halved before its Linear, inline in the
block), torch_act_hardtanh (the torch side's)."""
import numpy as np
import paddle
from _common import bug, hidden
from paddle import nn

D, N = 16, 2


class Update(nn.Layer):
    def __init__(self):
        super().__init__()
        self.lin_x = nn.Linear(D, D)
        self.lin_ctx = nn.Linear(D, D, bias_attr=False)

    def forward(self, x):
        ctx = x.mean(axis=1, keepdim=True).expand_as(x)
        if bug() == "paddle_ctx_halved":
            ctx = ctx * 0.5
        return paddle.tanh(self.lin_x(x) + self.lin_ctx(ctx))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.updates = nn.LayerList([Update() for _ in range(N)])
        self.out = nn.Linear(D, 4)

    def forward(self, x):
        for u in self.updates:
            x = u(x)
        return self.out(x)


def model():
    if bug() not in ("", "paddle_ctx_halved", "torch_act_hardtanh"):
        raise ValueError(f"gates paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(5)
    for u in net.updates:  # weights and biases large enough that tanh saturates in places
        u.lin_x.weight.set_value(rng.normal(0.0, 0.6, u.lin_x.weight.shape).astype("float32"))
        u.lin_x.bias.set_value(rng.normal(0.0, 0.5, u.lin_x.bias.shape).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out.pow(2).mean()

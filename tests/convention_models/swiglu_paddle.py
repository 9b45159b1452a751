"""An OLMo-style feed-forward: one Linear ``ff_proj`` holds the up and the gate projections in
that order, and a ``SwiGLU`` module of this side's own takes ``x, gate = chunk(2)`` and returns
``silu(gate) * x``. The torch side (swiglu_torch.py) keeps ``gate_proj`` and ``up_proj`` apart,
registered gate first, with an ``act_fn`` SiLU module. The names say which torch Linear is which,
not which half of ``ff_proj``; the first divergence is named at the activations, beside the packed
Linear, and the values choose.

PADIFF_BUG: torch_act_gelu (the torch side's: GELU in place of SiLU)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug, hidden
from paddle import nn

D, H, N = 16, 24, 2
BUGS = ("", "torch_act_gelu")


class SwiGLU(nn.Layer):
    def forward(self, x):
        x, gate = x.chunk(2, axis=-1)
        return F.silu(gate) * x


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.ff_norm = nn.LayerNorm(D)
        self.ff_proj = nn.Linear(D, 2 * H, bias_attr=False)
        self.act = SwiGLU()
        self.ff_out = nn.Linear(H, D, bias_attr=False)

    def forward(self, x):
        return x + self.ff_out(self.act(self.ff_proj(self.ff_norm(x))))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([Block() for _ in range(N)])
        self.head = nn.Linear(D, 4)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def model():
    if bug() not in BUGS:
        raise ValueError(f"swiglu paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(7)
    for block in net.blocks:
        block.ff_norm.weight.set_value(rng.uniform(0.5, 1.5, D).astype("float32"))
        block.ff_norm.bias.set_value(rng.normal(0.0, 0.2, D).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out.pow(2).mean()

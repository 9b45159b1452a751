"""Parallel-residual blocks (``x + mix(norm1(x)) + mlp(norm2(x))``, GPT-NeoX's layout) with a
norm of its own for each branch; the torch
side (skippednorm_torch.py) is the same model under other names. The planted bugs feed the MLP
the first norm's output, so the second norm, whose weights the other side's pairs with, never
runs on that side: the block's own code is at fault, not the other side's norm.

PADIFF_BUG: paddle_mlp_reuses_norm1 (this side, block 1), torch_mlp_reuses_norm1 (the torch
side's, block 0)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug, hidden
from paddle import nn

D = 16
BUGS = ("", "paddle_mlp_reuses_norm1", "torch_mlp_reuses_norm1")


class Block(nn.Layer):
    def __init__(self, index):
        super().__init__()
        self.index = index
        self.norm1 = nn.LayerNorm(D)
        self.mix = nn.Linear(D, D)
        self.norm2 = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, 2 * D)
        self.fc2 = nn.Linear(2 * D, D)

    def forward(self, x):
        h = self.norm1(x)
        out = x + self.mix(h)
        if not (bug() == "paddle_mlp_reuses_norm1" and self.index == 1):
            h = self.norm2(x)
        return out + self.fc2(F.gelu(self.fc1(h)))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([Block(i) for i in range(2)])

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


def model():
    if bug() not in BUGS:
        raise ValueError(f"skippednorm paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(8)
    for b in net.blocks:
        for norm in (b.norm1, b.norm2):
            norm.weight.set_value(rng.uniform(0.5, 1.5, D).astype("float32"))
            norm.bias.set_value(rng.normal(0.0, 0.3, D).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out.pow(2).mean()

"""Three blocks whose states two heads read: ``readout``, one Linear over the three states
concatenated, and ``heads``, one Linear per state with their scores added. The torch side
(readout_torch.py) holds the first as one Linear per state and the second as one Linear over
the concatenation: each one bias there stands for the sum of three here, or the other way.

PADIFF_BUG: torch_last_block_sigmoid (the torch side's)."""
import numpy as np
import paddle
from _common import bug, hidden
from paddle import nn

D, N = 16, 3


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([nn.Linear(D, D) for _ in range(N)])
        self.readout = nn.Linear(N * D, 4)
        self.heads = nn.LayerList([nn.Linear(D, 3) for _ in range(N)])

    def forward(self, x):
        states = []
        for b in self.blocks:
            x = paddle.tanh(b(x))
            states.append(x)
        scores = self.heads[0](states[0]) + self.heads[1](states[1]) + self.heads[2](states[2])
        return self.readout(paddle.concat(states, axis=-1)), scores


def model():
    if bug() not in ("", "torch_last_block_sigmoid"):
        raise ValueError(f"readout paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(3)
    for lin in [net.readout, *net.heads]:  # biases as training leaves them: none of them zero
        lin.bias.set_value(rng.normal(0.0, 0.5, lin.bias.shape).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out[0].mean() + out[1].pow(2).mean()

"""A GRU encoder and a Linear head, in eval mode. Paddle's RNN layers have no backward pass in
eval mode (the backward raises "Tensor holds no memory"): the recording goes on without the
gradients it could not compute, says so in the trace, and the forward values are compared. The
torch side (recur_torch.py) is the same model.

PADIFF_BUG: paddle_head_tanh (this side: a tanh after the head, inline)."""
import numpy as np
import paddle
from _common import B, D, S, bug
from paddle import nn


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(D, D)
        self.head = nn.Linear(D, 4)

    def forward(self, x):
        out, _ = self.gru(x)
        y = self.head(out[:, -1])
        return paddle.tanh(y) if bug() == "paddle_head_tanh" else y


def model():
    if bug() not in ("", "paddle_head_tanh"):
        raise ValueError(f"recur paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    x = np.random.default_rng(1).standard_normal((B, S, D)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(out):
    return out.pow(2).mean()

"""A layer keeping a complex weight as real and imaginary parts in its last axis, ``W`` ``[16, 8,
2]``, against one keeping ``W_real`` and ``W_imag`` ``[16, 8]`` (complex_torch.py): the parts
are the slices of the new axis, in the order ``view_as_real`` lays them out.

PADIFF_BUG: torch_conjugate (the torch side's)."""
import numpy as np
import paddle
from _common import bug, hidden
from paddle import nn

D, K = 16, 8


class Spectral(nn.Layer):
    def __init__(self):
        super().__init__()
        w = np.random.default_rng(2).normal(0.0, 0.3, (D, K, 2)).astype("float32")
        self.W = self.create_parameter([D, K, 2], default_initializer=nn.initializer.Assign(w))

    def forward(self, x):
        re, im = paddle.matmul(x, self.W[:, :, 0]), paddle.matmul(x, self.W[:, :, 1])
        return paddle.sqrt(re * re + im * im + 1e-6) * paddle.tanh(re - im)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.spec = Spectral()
        self.out = nn.Linear(K, 4)

    def forward(self, x):
        return self.out(self.spec(x))


def model():
    if bug() not in ("", "torch_conjugate"):
        raise ValueError(f"complex paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out.pow(2).mean()

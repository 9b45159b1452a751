"""Three blocks each holding its own learnable ``eps`` ``[1]`` (GIN's ``(1 + eps) * x`` in every
layer), against a model keeping all three in one ``eps [3]`` of its own (epsilons_torch.py).

PADIFF_BUG: torch_eps_reversed (the torch side's)."""
import paddle
from _common import bug, hidden
from paddle import nn

D, N = 16, 3


class Block(nn.Layer):
    def __init__(self, k):
        super().__init__()
        self.eps = self.create_parameter([1], default_initializer=nn.initializer.Constant(0.1 * (k + 1)))
        self.lin = nn.Linear(D, D)

    def forward(self, x):
        return paddle.tanh(self.lin((1 + self.eps) * x))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([Block(k) for k in range(N)])

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


def model():
    if bug() not in ("", "torch_eps_reversed"):
        raise ValueError(f"epsilons paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out.mean()

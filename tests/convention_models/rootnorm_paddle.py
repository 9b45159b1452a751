"""One LayerNorm at the model's root applied after every block (a post-norm stack written with
the norm shared, as a port may when the blocks' norms hold the same values), against torch's
port (rootnorm_torch.py) where each layer keeps a norm of its own: one module of A's root against
a copy in every layer of B, which compute the same thing.

PADIFF_BUG (this side): paddle_norm_eps -> the shared norm's epsilon is 1e-3 (the default is 1e-5)."""
import paddle
import paddle.nn.functional as F
from _common import D, bug, hidden
from paddle import nn


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(D, D)

    def forward(self, x):
        return F.gelu(self.fc(x))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([Block() for _ in range(2)])
        self.norm = nn.LayerNorm(D, epsilon=1e-3 if bug() == "paddle_norm_eps" else 1e-5)
        self.head = nn.Linear(D, 3)
        paddle.seed(1)
        self.norm.weight.set_value(paddle.rand([D]) + 0.5)
        self.norm.bias.set_value(paddle.rand([D]) - 0.5)

    def forward(self, x):
        for block in self.blocks:
            x = self.norm(x + block(x))
        return self.head(x)


def model():
    if bug() not in ("", "paddle_norm_eps", "torch_second_residual", "torch_norms_differ"):
        raise ValueError(f"rootnorm paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out.mean()

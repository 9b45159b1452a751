"""Feed-forward blocks, paddle side: each block owns its GELU (``blocks.N.act``). The torch
twin holds ONE GELU instance in every block, as HF XLM holds ``transformers.activations.gelu``.
PADIFF_BUG=paddle_act: block 1's activation is a ReLU."""
import paddle
from _common import D, bug, hidden
from paddle import nn


class Block(nn.Layer):
    def __init__(self, act: nn.Layer) -> None:
        super().__init__()
        self.lin1 = nn.Linear(D, 2 * D)
        self.act = act
        self.lin2 = nn.Linear(2 * D, D)

    def forward(self, x):
        return x + self.lin2(self.act(self.lin1(x)))


class Model(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        acts = [nn.ReLU() if i == 1 and bug() == "paddle_act" else nn.GELU() for i in range(3)]
        self.blocks = nn.LayerList([Block(a) for a in acts])
        self.head = nn.Linear(D, 4)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def model():
    paddle.seed(0)
    return Model().eval()


def inputs():
    return paddle.to_tensor(hidden())


def loss(out):
    return (out**2).mean()

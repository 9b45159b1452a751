"""A convolutional stage that returns tokens ``[B, N, C]``: patch convolution, flatten to tokens,
a norm and a feed-forward block inside the stage. The torch side (tokens_torch.py) returns the
stage's result as a feature map and a pooled summary, ``(map, summary)``: the two stages' outputs
are in other structures, so no record compares them.

PADIFF_BUG: torch_tokens_view is the other side's (accepted, ignored)."""
import paddle
import paddle.nn.functional as F
from _common import bug, image
from paddle import nn

C = 12


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(C)
        self.fc1 = nn.Linear(C, 2 * C)
        self.fc2 = nn.Linear(2 * C, C)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class Stage(nn.Layer):
    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2D(3, C, 2, stride=2)
        self.norm = nn.LayerNorm(C)
        self.block = Block()

    def forward(self, x):
        x = self.patch(x)
        tokens = x.flatten(2).transpose([0, 2, 1])
        return self.block(self.norm(tokens))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stage = Stage()
        self.head = nn.Linear(C, 4)

    def forward(self, x):
        return self.head(self.stage(x).mean(axis=1))


def model():
    if bug() not in ("", "torch_tokens_view"):
        raise ValueError(f"tokens paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.pow(2).mean()

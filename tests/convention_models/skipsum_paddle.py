"""Blocks written the way one library writes them: the feed-forward module returns ``mlp(h)`` and
the block adds the skip, ``h + ffn(h)``, on the normed input. The torch side (skipsum_torch.py)
adds that skip inside its feed-forward module, which returns ``h + mlp(h)``.

PADIFF_BUG: paddle_block_halved (this side: the first block halves what it returns, inline)."""
import paddle
import paddle.nn.functional as F
from _common import D, bug, hidden
from paddle import nn


class FFN(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(D, 2 * D)
        self.fc2 = nn.Linear(2 * D, D)

    def forward(self, h):
        return self.fc2(F.gelu(self.fc1(h)))


class Block(nn.Layer):
    def __init__(self, halved=False):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.ffn = FFN()
        self.halved = halved

    def forward(self, x):
        h = self.norm(x)
        y = h + self.ffn(h)
        return y * 0.5 if self.halved else y


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([Block(halved=bug() == "paddle_block_halved" and i == 0) for i in range(2)])
        self.head = nn.Linear(D, 3)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)


def model():
    if bug() not in ("", "paddle_block_halved"):
        raise ValueError(f"skipsum paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out.pow(2).mean()

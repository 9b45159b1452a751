"""A conditioning vector activated before the block on one side and inside it on the other (DiT's
adaLN: ``block(x, silu(c))`` here, torch's block applying SiLU in its modulation ``Sequential``):
paddle side (adaln_torch.py is the other). The block's second input differs by design; the
very value paddle hands over is received again inside, by the modulation Linear, and agrees
there, so a bug later in the block is named in the block, not at its input.

PADIFF_BUG (this side): none."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import D, hidden
from paddle import nn


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D, weight_attr=False, bias_attr=False)
        self.ada = nn.Linear(D, 2 * D)
        self.fc = nn.Linear(D, D)

    def forward(self, x, c):
        shift, scale = self.ada(c).unsqueeze(1).chunk(2, axis=-1)
        return x + self.fc(self.norm(x) * (1 + scale) + shift)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.cond = nn.Linear(4, D)
        self.block = Block()

    def forward(self, x, y):
        return self.block(x, F.silu(self.cond(y)))


def cond() -> np.ndarray:
    return np.random.default_rng(1).standard_normal((2, 4)).astype("float32")


def model():
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(hidden()), paddle.to_tensor(cond())), {}


def loss(out):
    return out.mean()

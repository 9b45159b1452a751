"""A two-stage token model whose position tables sit on the root, one per stage, named
``pos_embed1`` and ``pos_embed2`` and laid out as tokens ``[1, h * w, c]``; the torch side
(tables_torch.py) keeps one ``pos_embed`` per stage module, laid out as a grid ``[1, c, h, w]``,
added before the grid is flattened. Stage one's table is ``[1, 16, 4]`` against ``[1, 4, 4, 4]``:
its shape alone fits two axis orders; stage two's ``[1, 4, 8]`` against ``[1, 8, 2, 2]`` fits one.

PADIFF_BUG: torch_pos2_transposed (the torch side's: stage two's table added with its height and
width swapped)."""
import numpy as np
import paddle
from _common import bug, image
from paddle import nn
from paddle.nn import functional as F


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.patch1 = nn.Conv2D(3, 4, 2, stride=2)  # 8x8 -> 4x4, 4 channels
        rng = np.random.default_rng(1)
        self.pos_embed1 = self.create_parameter([1, 16, 4], default_initializer=nn.initializer.Assign(
            rng.standard_normal((1, 16, 4)).astype("float32")))
        self.mix1 = nn.Linear(4, 4)
        self.patch2 = nn.Conv2D(4, 8, 2, stride=2)  # 4x4 -> 2x2, 8 channels
        self.pos_embed2 = self.create_parameter([1, 4, 8], default_initializer=nn.initializer.Assign(
            rng.standard_normal((1, 4, 8)).astype("float32")))
        self.mix2 = nn.Linear(8, 8)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        b = x.shape[0]
        t = self.patch1(x).flatten(2).transpose([0, 2, 1]) + self.pos_embed1  # [b, 16, 4]
        t = F.gelu(self.mix1(t))
        g = t.transpose([0, 2, 1]).reshape([b, 4, 4, 4])
        t = self.patch2(g).flatten(2).transpose([0, 2, 1]) + self.pos_embed2  # [b, 4, 8]
        t = F.gelu(self.mix2(t))
        return self.head(t.mean(1))


def model():
    if bug() not in ("", "torch_pos2_transposed"):
        raise ValueError(f"tables paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.pow(2).mean()

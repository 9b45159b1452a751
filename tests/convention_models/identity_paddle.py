"""A feature block with a dropout module whose rate is 0 (timm writes ``nn.Identity`` for it: see
identity_torch.py) and a GELU written inline, in train mode.

PADIFF_BUG (this side): paddle_drop_on -> the dropout rate is 0.3."""
import paddle
import paddle.nn.functional as F
from _common import bug, hidden
from paddle import nn

D = 16


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(D, D)
        self.drop = nn.Dropout(0.3 if bug() == "paddle_drop_on" else 0.0)
        self.norm = nn.LayerNorm(D)

    def forward(self, x):
        return self.norm(self.drop(F.gelu(self.fc(x)).mean(axis=1)))


def model():
    if bug() not in ("", "paddle_drop_on"):
        raise ValueError(f"identity paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Block().train()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out.mean()

"""A small conv classifier trained with dropout, paddle side: the pooling and the dropout are
modules of their own (``pool``, ``drop``). Twin: idle_torch.py (both inline in the forward).
Train mode, dropout 0.3, SGD.
PADIFF_BUG=paddle_drop_off: the dropout module is put in eval mode (``m.drop.eval()``, as a
porter does for a part that "only produces targets"): it passes its input on, where the torch
side drops."""
import paddle
from _common import bug, image
from paddle import nn


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(3, 8, 3, padding=1)
        self.norm = nn.GroupNorm(2, 8)
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.drop = nn.Dropout(0.3)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        h = self.pool(nn.functional.relu(self.norm(self.conv(x)))).flatten(1)
        return self.head(self.drop(h))


def model():
    if bug() not in ("", "paddle_drop_off"):
        raise ValueError(f"idle paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    m = Net().train()
    if bug() == "paddle_drop_off":
        m.drop.eval()
    return m


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.pow(2).mean()


def optimizer(model):
    return paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())

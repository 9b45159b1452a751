"""A two-layer tower trained with dropout between its layers, written inline in the tower's
forward (``F.dropout``). The torch side (tower_torch.py) writes the tower as
``nn.Sequential(Linear, ReLU, Dropout, Linear)``.

PADIFF_BUG: keep_prob (the reference's keep probability 0.9 passed as the drop rate),
drop_unset (the tower built without its rate: the layer's default of 0)."""
import paddle
import paddle.nn.functional as F
from _common import D_IN, D_OUT, LR, D, bug, data, target
from paddle import nn


class Tower(nn.Layer):
    def __init__(self, p):
        super().__init__()
        self.fc1 = nn.Linear(D_IN, D)
        self.fc2 = nn.Linear(D, D_OUT)
        self.p = p

    def forward(self, x):
        return self.fc2(F.dropout(F.relu(self.fc1(x)), p=self.p, training=self.training))


def model():
    if bug() not in ("", "keep_prob", "drop_unset"):
        raise ValueError(f"tower paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    m = Tower({"keep_prob": 0.9, "drop_unset": 0.0}.get(bug(), 0.1))
    m.train()
    return m


def inputs(step=0):
    return paddle.to_tensor(data())


def loss(out):
    return ((out - paddle.to_tensor(target())) ** 2).mean()


def optimizer(m):
    return paddle.optimizer.SGD(learning_rate=LR, parameters=m.parameters())

"""A BatchNorm with its ReLU fused inside a unit whose own code another bug breaks, paddle side
(fused_torch.py is the other):

* ``unit.bn1`` is ``nn.BatchNorm(act="relu")``; torch calls ``F.relu`` after its BatchNorm: the
  two outputs differ by the ReLU, and the conv that receives them receives values that agree.
  A bug later in the unit makes everything after it differ; the BatchNorm is still a boundary
  difference, not the divergence;
* the unit's gate is a module on both sides (an average-pool module and a Linear here, an
  inline mean and a Linear in torch's); what torch hands it is the place to look, not paddle's
  pool, whose input agrees where paddle's conv path hands it on.

PADIFF_BUG: torch_gate_after_add (the other side's)."""
import paddle
import paddle.nn.functional as F
from _common import image
from paddle import nn

C = 3


class Gate(nn.Layer):
    def __init__(self, c):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.fc = nn.Linear(c, c)

    def forward(self, y):
        return y * F.sigmoid(self.fc(self.pool(y).flatten(1)))[:, :, None, None]


class Unit(nn.Layer):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2D(c, c, 1, bias_attr=False)
        self.bn1 = nn.BatchNorm(c, act="relu")
        self.conv2 = nn.Conv2D(c, c, 3, padding=1, bias_attr=False)
        self.bn2 = nn.BatchNorm2D(c)
        self.gate = Gate(c)

    def forward(self, x):
        y = self.bn2(self.conv2(self.bn1(self.conv1(x))))
        return F.relu(self.gate(y) + x)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.unit = Unit(C)
        self.head = nn.Linear(C, 2)

    def forward(self, x):
        return self.head(self.unit(x).mean([2, 3]))


def model():
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return (out * out).mean()

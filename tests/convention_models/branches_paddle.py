"""Parallel branches fused into one module, paddle side (branches_torch.py is the other): a CSP
block with two 1x1 conv+BN branches ``conv1`` and ``conv2`` (each a ``ConvBN`` unit) whose
outputs are concatenated into ``conv3``, against one ``cv12`` conv+BN with both branches'
channels and a ``cv3``. The names share no word; module by module the branches are the first
and second half of ``cv12``'s output channels (weights, BatchNorm affine and statistics).
The statistics are set to non-trivial values, so a BatchNorm whose buffers were not carried
across shows at once.

PADIFF_BUG (this side): paddle_branch_order -> the branches concatenated the other way round
(``[b, a]``), in the block's own code."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug, image
from paddle import nn

C, H = 8, 4


class ConvBN(nn.Layer):
    def __init__(self, cin, cout, k=1):
        super().__init__()
        self.conv = nn.Conv2D(cin, cout, k, padding=k // 2, bias_attr=False)
        self.bn = nn.BatchNorm2D(cout)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class CSP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv1 = ConvBN(C, H)
        self.conv2 = ConvBN(C, H)
        self.conv3 = ConvBN(2 * H, C)

    def forward(self, x):
        a, b = self.conv1(x), self.conv2(x)
        return self.conv3(paddle.concat([b, a] if bug() == "paddle_branch_order" else [a, b], axis=1))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = ConvBN(3, C, 3)
        self.csp = CSP()
        self.head = nn.Linear(C, 4)

    def forward(self, x):
        h = self.csp(self.stem(x))
        return self.head(h.mean(axis=[2, 3]))


def model():
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(3)
    for name, buf in net.named_buffers():
        if name.endswith("_mean"):
            buf.set_value(rng.normal(0.0, 0.2, buf.shape).astype("float32"))
        elif name.endswith("_variance"):
            buf.set_value(rng.uniform(0.5, 2.0, buf.shape).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return (out * out).mean()

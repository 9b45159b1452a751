"""A Res2Net-like block, PaddleClas style: conv and BatchNorm in one ``ConvBN`` layer, the blocks
added under stage names with digits of their own (``res2a``, ``res2b``), and each of the three
branch convolutions a ConvBN of its own in a LayerList, each on its share of the channels (the last share
passes through). The
torch side (grouped_torch.py) runs the three branches as one grouped convolution and one
BatchNorm over all their channels, in blocks of a ModuleList (``layers.0``, ``layers.1``).

PADIFF_BUG: paddle_out_eps (this side: the second block's last BatchNorm eps 1e-2),
torch_split_eps (the torch side's: the first block's branch BatchNorm eps 1e-2)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug, image
from paddle import nn

W, C, N = 4, 16, 3  # branch width, block width, branches (the last W channels pass through)
BUGS = ("", "paddle_out_eps", "torch_split_eps")


class ConvBN(nn.Layer):
    def __init__(self, cin, cout, k, eps=1e-5):
        super().__init__()
        self._conv = nn.Conv2D(cin, cout, k, padding=k // 2, bias_attr=False)
        self._batch_norm = nn.BatchNorm2D(cout, epsilon=eps)

    def forward(self, x):
        return self._batch_norm(self._conv(x))


class SplitBlock(nn.Layer):
    def __init__(self, eps_out=1e-5):
        super().__init__()
        self.conv0 = ConvBN(C, C, 1)
        self.conv1 = nn.LayerList([ConvBN(W, W, 3) for _ in range(N)])
        self.conv2 = ConvBN(C, C, 1, eps=eps_out)

    def forward(self, x):
        h = F.relu(self.conv0(x))
        parts = paddle.split(h, N + 1, axis=1)
        h = paddle.concat([*(F.relu(conv(p)) for conv, p in zip(self.conv1, parts)), parts[-1]], axis=1)
        return F.relu(self.conv2(h) + x)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = ConvBN(3, C, 3)
        self.add_sublayer("res2a", SplitBlock())
        self.add_sublayer("res2b", SplitBlock(eps_out=1e-2 if bug() == "paddle_out_eps" else 1e-5))
        self.head = nn.Linear(C, 5)

    def forward(self, x):
        h = F.relu(self.stem(x))
        h = self.res2b(self.res2a(h))
        return self.head(h.mean(axis=[2, 3]))


def model():
    if bug() not in BUGS:
        raise ValueError(f"grouped paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(5)
    for layer in net.sublayers():
        if isinstance(layer, nn.BatchNorm2D):
            n = layer.weight.shape[0]
            layer.weight.set_value(rng.uniform(0.5, 1.5, n).astype("float32"))
            layer.bias.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._mean.set_value(rng.normal(0.0, 0.2, n).astype("float32"))
            layer._variance.set_value(rng.uniform(0.5, 1.5, n).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.pow(2).mean()

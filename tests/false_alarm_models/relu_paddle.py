"""Spec: a deep residual ReLU network with paddle.nn layers, paddle side.

Each of ``BLOCKS`` blocks is ``relu(x + bn2(fc2(relu(bn1(fc1(x))))))`` with BatchNorm in
eval mode (running statistics set from a calibration batch, as a trained network has them).
``fc1``'s outputs share a large offset (its bias, ``OFFSET``) that BatchNorm takes away again:
that cancellation leaves the normalised values with a relative rounding error ~50x larger
than fp32's, about 1e-5. Forward, the two frameworks agree to that rounding; backward, every
ReLU input the two runs round to opposite sides of 0 passes all of the gradient on one side
and none on the other, so gradients differ by ~1e-2 where values differ by 1e-5. The torch twin
is relu_torch.py (``FA_RELU_GRAD`` plants a wrong backward there).
"""

import numpy as np
import paddle

WIDTH, BLOCKS, BATCH = 128, 16, 64
OFFSET = 50.0  # a common offset of fc1's outputs, taken away by bn1


class Block(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = paddle.nn.Linear(WIDTH, WIDTH)
        self.bn1 = paddle.nn.BatchNorm1D(WIDTH)
        self.fc2 = paddle.nn.Linear(WIDTH, WIDTH)
        self.bn2 = paddle.nn.BatchNorm1D(WIDTH)
        self.relu = paddle.nn.ReLU()

    def forward(self, x):
        return self.relu(x + self.bn2(self.fc2(self.relu(self.bn1(self.fc1(x))))))


class Net(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = paddle.nn.LayerList([Block() for _ in range(BLOCKS)])
        self.head = paddle.nn.Linear(WIDTH, 10)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def _calibrate(net: Net) -> None:
    """Running statistics := the statistics of one calibration batch, block by block."""
    x = paddle.to_tensor(np.random.default_rng(1).standard_normal((256, WIDTH)).astype("float32"))
    with paddle.no_grad():
        for b in net.blocks:
            b.fc1.bias.set_value(b.fc1.bias + OFFSET)
            h = b.fc1(x)
            b.bn1._mean.set_value(h.mean(axis=0))
            b.bn1._variance.set_value(h.var(axis=0, unbiased=False))
            h = b.fc2(b.relu(b.bn1(h)))
            b.bn2._mean.set_value(h.mean(axis=0))
            b.bn2._variance.set_value(h.var(axis=0, unbiased=False))
            x = b.relu(x + b.bn2(h))


def model():
    paddle.seed(0)
    net = Net()
    net.eval()
    _calibrate(net)
    return net


def inputs():
    x = np.random.default_rng(0).standard_normal((BATCH, WIDTH)).astype("float32")
    return (paddle.to_tensor(x),)


def loss(out):
    return (out**2).mean()

"""biasbn: a convolution with a bias feeding a train-mode BatchNorm, which removes each
channel's batch mean: the bias's gradient is a sum that cancels to zero (rounding alone), on
both sides. A bias after it (the head's) receives a sum that does not cancel; one bug scales its
gradient with a hook, another the norm's scale's, forward untouched. Paddle side; torch side: biasbn_torch.py."""
import numpy as np
import paddle
from _common import bug, image
from paddle import nn


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2D(8)
        self.act = nn.ReLU()
        self.head = nn.Conv2D(8, 4, 1)

    def forward(self, x):
        y = self.bn(self.conv(x))
        return self.head(self.act(y))


def model():
    if bug() not in ("", "paddle_head_bias_grad", "paddle_norm_scale_grad"):
        raise ValueError(f"biasbn paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    m = Net()
    rng = np.random.default_rng(5)
    m.conv.bias.set_value(rng.standard_normal(8).astype("float32"))
    if bug() == "paddle_head_bias_grad":
        m.head.bias.register_hook(lambda g: g * 1.5)
    if bug() == "paddle_norm_scale_grad":
        m.bn.weight.register_hook(lambda g: g * 1.5)
    m.train()
    return m


def inputs():
    return paddle.to_tensor(image())


def loss(out):
    return (out ** 2).mean()

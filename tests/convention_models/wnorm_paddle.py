"""A positional convolution holding its plain weight (as paddlenlp's SpeechT5 does, its weight
norm left out), then a LayerNorm.
PADIFF_BUG=paddle_pad: the convolution padded by 1 instead of 2 on the left."""
import paddle
import paddle.nn.functional as F
from _common import D, bug, hidden
from paddle import nn

K = 5


class Model(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1D(D, D, K, padding=K // 2, groups=4)
        self.norm = nn.LayerNorm(D)

    def forward(self, x):
        h = x.transpose([0, 2, 1])
        if bug() == "paddle_pad":
            y = F.conv1d(F.pad(h, [1, 3], data_format="NCL"), self.conv.weight, self.conv.bias, groups=4)
        else:
            y = self.conv(h)
        return self.norm(x + F.gelu(y.transpose([0, 2, 1])))


def model():
    paddle.seed(0)
    return Model().eval()


def inputs():
    return paddle.to_tensor(hidden())


def loss(out):
    return (out[..., : D // 2] ** 2).mean()

"""Points and a token shift, paddle side: layouts and data movement written differently from the
torch side (points_torch.py), all of it correct:

* a pointwise ``Conv1D`` on ``[b, c, n]`` here against a ``Linear`` on ``[b, n, c]`` there, with
  as many points as channels (16): the shapes cannot say the layout, the layers carry it;
* BatchNorm on ``[b, c, n]`` on both sides (torch transposes back and forth around it);
* a token shift written inline here (concatenating a zero row) against an ``nn.ZeroPad2d``
  module there, and a mixing vector ``[c]`` here against ``[1, 1, c]`` there.

PADIFF_BUG (this side): paddle_mix_swap -> the mixer weighs the shifted tokens by ``mix`` and
the current ones by ``1 - mix`` (the two swapped)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug
from paddle import nn

B, C, N, K = 2, 16, 16, 4


class PointEncoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1D(3, C, 1)
        self.bn1 = nn.BatchNorm1D(C)
        self.conv2 = nn.Conv1D(C, C, 1)
        self.bn2 = nn.BatchNorm1D(C)

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(h)))


class TokenMixer(nn.Layer):
    def __init__(self):
        super().__init__()
        self.mix = self.create_parameter([C], default_initializer=nn.initializer.Uniform(0.1, 0.9))
        self.proj = nn.Linear(C, C)

    def forward(self, h):
        shifted = paddle.concat([paddle.zeros_like(h[:, :1]), h[:, :-1]], axis=1)
        if bug() == "paddle_mix_swap":
            return self.proj(h * (1 - self.mix) + shifted * self.mix)
        return self.proj(h * self.mix + shifted * (1 - self.mix))


class PointNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self.encoder = PointEncoder()
        self.mixer = TokenMixer()
        self.head = nn.Linear(C, K)

    def forward(self, x):
        h = self.encoder(x).transpose([0, 2, 1])
        return self.head(self.mixer(h).max(axis=1))


def model():
    paddle.seed(0)
    m = PointNet().eval()
    rng = np.random.default_rng(3)
    for bn in (m.encoder.bn1, m.encoder.bn2):  # statistics and scales that move each channel apart
        bn._mean.set_value(rng.normal(0, 0.5, C).astype("float32"))
        bn._variance.set_value(rng.uniform(0.5, 2.0, C).astype("float32"))
        bn.weight.set_value(rng.uniform(0.5, 1.5, C).astype("float32"))
    return m


def inputs():
    x = np.random.default_rng(2).standard_normal((B, 3, N)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(out):
    return (out * out).mean()

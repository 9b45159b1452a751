"""Pairwise scores from one projection applied to both ends of each pair (GATv2's
``share_weights``): here one Linear ``proj`` serves source and target; torch's port
(sharedproj_torch.py) packs a source and a target projection in one ``lin [2 * H, D]``, which
computes the same function when both halves hold this one.

PADIFF_BUG (this side): paddle_leaky_default -> the scores' LeakyReLU keeps paddle's default
slope 0.01 instead of 0.2."""
import paddle
import paddle.nn.functional as F
from _common import D, bug, hidden
from paddle import nn

H = 12


class PairScore(nn.Layer):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(D, H)
        self.att = self.create_parameter([H], default_initializer=nn.initializer.Normal(std=0.3))

    def forward(self, x):
        src = dst = self.proj(x)  # one call, its output used at both ends
        slope = 0.01 if bug() == "paddle_leaky_default" else 0.2
        e = F.leaky_relu(src.unsqueeze(2) + dst.unsqueeze(1), slope)  # [B, S, S, H]
        a = F.softmax((e * self.att).sum(-1), axis=-1)
        return paddle.matmul(a, src)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.score = PairScore()
        self.head = nn.Linear(H, 4)

    def forward(self, x):
        return self.head(F.elu(self.score(x)))


def model():
    if bug() not in ("", "paddle_leaky_default"):
        raise ValueError(f"sharedproj paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    net.score.proj.bias.set_value(paddle.randn([H]) * 0.5)  # a trained-looking bias: not zeros
    return net.eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out.mean()

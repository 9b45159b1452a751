"""An RMSNorm between two Linears, paddle side, computed in float32. The torch twin's
PADIFF_BUG=half_norm computes the norm in bfloat16 and casts back (the missing upcast)."""
import paddle
from _common import D, hidden
from paddle import nn


class RMSNorm(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.weight = self.create_parameter([D], default_initializer=nn.initializer.Constant(1.0))

    def forward(self, x):
        return self.weight * x * paddle.rsqrt((x * x).mean(-1, keepdim=True) + 4e-7)


class Model(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Sequential(*[m for _ in range(8) for m in (nn.Linear(D, D), nn.Tanh())])  # a deep start: a wide fp32 floor
        self.norm = RMSNorm()
        self.out = nn.Linear(D, 4)

    def forward(self, x):
        return self.out(self.norm(self.inp(x)))


def model():
    paddle.seed(0)
    return Model().eval()


def inputs():
    return paddle.to_tensor(hidden())


def loss(out):
    return (out**2).mean()

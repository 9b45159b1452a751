"""A multi-query attention over a downsampled map: paddle's port downsamples the key and the
value with ONE strided depthwise conv and ONE BatchNorm, then projects both with one packed 1x1
conv (key channels first). The torch port (sharedkv_torch.py) keeps a key branch and a value
branch, each with a conv, a norm and a projection of its own, as timm's MobileNetV4 does: one
module here against two copies there, which compute the same thing.

PADIFF_BUG (this side): paddle_norm_eps -> the shared norm's epsilon is 1e-3 (the default is 1e-5)."""
import paddle
import paddle.nn.functional as F
from _common import bug, image
from paddle import nn

C, K = 8, 4


def _trained(bn: nn.BatchNorm2D, seed: int) -> None:
    paddle.seed(seed)
    bn.weight.set_value(paddle.rand([C]) + 0.5)
    bn.bias.set_value(paddle.rand([C]) - 0.5)
    bn._mean.set_value(paddle.rand([C]) - 0.5)
    bn._variance.set_value(paddle.rand([C]) + 0.5)


class Attention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.q = nn.Conv2D(C, K, 1)
        self.down = nn.Conv2D(C, C, 3, stride=2, padding=1, groups=C, bias_attr=False)
        self.norm = nn.BatchNorm2D(C, epsilon=1e-3 if bug() == "paddle_norm_eps" else 1e-5)
        self.kv = nn.Conv2D(C, 2 * K, 1)
        self.out = nn.Conv2D(K, C, 1)
        _trained(self.norm, 1)

    def forward(self, x):
        b, _, h, w = x.shape
        q = self.q(x).flatten(2).transpose([0, 2, 1])  # [B, HW, K]
        k, v = paddle.split(self.kv(self.norm(self.down(x))), 2, axis=1)
        k, v = k.flatten(2), v.flatten(2).transpose([0, 2, 1])  # [B, K, M], [B, M, K]
        o = paddle.matmul(F.softmax(paddle.matmul(q, k) * K**-0.5, axis=-1), v)  # [B, HW, K]
        return x + self.out(o.transpose([0, 2, 1]).reshape([b, K, h, w]))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2D(3, C, 3, padding=1)
        self.attn = Attention()
        self.head = nn.Linear(C, 5)

    def forward(self, x):
        return self.head(self.attn(self.stem(x)).mean(axis=[2, 3]))


def model():
    if bug() not in ("", "paddle_norm_eps"):
        raise ValueError(f"sharedkv paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.mean()

"""Two stages of self-attention, 16 features with 2 heads then 32 with 4 (heads of 8 features
in both, as Swin's or PVT's stages grow), paddle side: each attention's fused projection packs
q, k and v head by head in a class no table knows. Twin: headstages_torch.py (separate q, k and
v projections).

PADIFF_BUG (this side): paddle_last_no_scale -> the last stage's attention does not scale its
logits."""
import paddle
import paddle.nn.functional as F
from _common import bug, hidden
from paddle import nn

HEAD = 8


class FusedAttention(nn.Layer):
    def __init__(self, dim, scaled=True):
        super().__init__()
        self.heads, self.scaled = dim // HEAD, scaled
        self.qkv, self.out = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = paddle.unbind(self.qkv(x).reshape([b, s, self.heads, 3, HEAD]).transpose([3, 0, 2, 1, 4]), axis=0)
        logits = paddle.matmul(q, k, transpose_y=True)
        p = F.softmax(logits / HEAD**0.5 if self.scaled else logits, axis=-1)
        return self.out(paddle.matmul(p, v).transpose([0, 2, 1, 3]).reshape([b, s, d]))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stages = nn.LayerList([FusedAttention(16), FusedAttention(32, scaled=bug() != "paddle_last_no_scale")])
        self.widen = nn.Linear(16, 32)

    def forward(self, x):
        x = x + self.stages[0](x)
        x = self.widen(x)
        return x + self.stages[1](x)


def model():
    if bug() not in ("", "paddle_last_no_scale"):
        raise ValueError(f"headstages paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(hidden()),)


def loss(out):
    return out.mean()

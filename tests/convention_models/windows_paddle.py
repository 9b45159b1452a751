"""A window-attention block written the way one library writes it: the feature map cut into
non-overlapping 4 x 4 windows inline (reshape and transpose), a LayerNorm and an attention over
each window's tokens, the windows put back inline. The torch side (windows_torch.py) cuts and
joins the windows in modules of their own (``partition`` with ``Tensor.unfold``, ``merge``).

PADIFF_BUG: paddle_window_strided (this side: each "window" gathers tokens 2 apart, a grid)."""
import paddle
import paddle.nn.functional as F
from _common import bug, image
from paddle import nn

C, P = 8, 4


class WindowAttention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(C, 3 * C)
        self.proj = nn.Linear(C, C)

    def forward(self, x):  # [windows, P * P, C]
        q, k, v = paddle.split(self.qkv(x), 3, axis=-1)
        w = F.softmax(paddle.matmul(q, k, transpose_y=True) / C**0.5, axis=-1)
        return self.proj(paddle.matmul(w, v))


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(C)
        self.attn = WindowAttention()

    def forward(self, x):  # [B, C, H, W]
        b, c, h, w = x.shape
        if bug() == "paddle_window_strided":  # tokens P apart in each direction gathered: a grid, not a window
            t = x.reshape([b, c, P, h // P, P, w // P]).transpose([0, 3, 5, 2, 4, 1])
        else:
            t = x.reshape([b, c, h // P, P, w // P, P]).transpose([0, 2, 4, 3, 5, 1])
        t = t.reshape([-1, P * P, c])  # [B * windows, P * P, C]
        y = self.attn(self.norm(t))
        y = y.reshape([b, h // P, w // P, P, P, c]).transpose([0, 5, 1, 3, 2, 4]).reshape([b, c, h, w])
        return x + y


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2D(3, C, 3, padding=1)
        self.block = Block()
        self.head = nn.Linear(C * 64, 5)

    def forward(self, x):
        return self.head(self.block(self.stem(x)).flatten(1))


def model():
    if bug() not in ("", "paddle_window_strided"):
        raise ValueError(f"windows paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.pow(2).mean()

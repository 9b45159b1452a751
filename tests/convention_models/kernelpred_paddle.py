"""A dynamic convolution over a sequence: a Linear predicts, at every position, one kernel of K
taps per head, softmaxed over the taps, and each head's channels are summed over the K
neighbours with it. Paddle's port lays the predictor's outputs out head by head
(``[H, K]``); kernelpred_torch.py tap by tap (``[K, H]``): the same model once the predictor's
output rows are reordered.

PADIFF_BUG (this side): paddle_softmax_heads -> the kernel is softmaxed over the heads, not the taps."""
import paddle
import paddle.nn.functional as F
from _common import B, D, S, bug, hidden
from paddle import nn

H, K = 4, 3


class DynamicConv(nn.Layer):
    def __init__(self):
        super().__init__()
        self.kernel = nn.Linear(D, H * K)

    def forward(self, x):
        w = self.kernel(x).reshape([B, S, H, K])
        w = F.softmax(w, axis=2 if bug() == "paddle_softmax_heads" else 3)
        pad = F.pad(x, [K // 2, K // 2], data_format="NLC")
        cols = paddle.stack([pad[:, t : t + S] for t in range(K)], axis=-1)  # [B, S, D, K]
        cols = cols.reshape([B, S, H, D // H, K])
        return (cols * w.unsqueeze(3)).sum(-1).reshape([B, S, D])


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(D, D)
        self.conv = DynamicConv()
        self.out = nn.Linear(D, D)

    def forward(self, x):
        return self.out(self.conv(self.inp(x)))


def model():
    if bug() not in ("", "paddle_softmax_heads", "torch_taps_reversed"):
        raise ValueError(f"kernelpred paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out.mean()

"""An attention whose fused q|k|v projection is laid out head by head (``[q_0 k_0 v_0 | q_1
k_1 v_1 | ...]``, as BLOOM and GPT-NeoX pack it) in a class no packing table knows, paddle side
(headwise_torch.py holds separate q, k and v). The weight map cuts an unknown fused tensor
``[q | k | v]``; the values refute that, and ``run`` tries the head-by-head cut, which a call of
the attention confirms.

PADIFF_BUG (this side): none."""
import paddle
import paddle.nn.functional as F
from _common import D, hidden
from paddle import nn

H = 2


class HeadwiseAttention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fused = nn.Linear(D, 3 * D)
        self.out = nn.Linear(D, D)

    def forward(self, x):
        b, s, _ = x.shape
        qkv = self.fused(x).reshape([b, s, H, 3, D // H])
        q, k, v = (qkv[:, :, :, i].transpose([0, 2, 1, 3]) for i in range(3))
        att = F.softmax(paddle.matmul(q, k, transpose_y=True) / (D // H) ** 0.5, axis=-1)
        return self.out(paddle.matmul(att, v).transpose([0, 2, 1, 3]).reshape([b, s, D]))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.attn = HeadwiseAttention()

    def forward(self, x):
        return x + self.attn(self.norm(x))


def model():
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out.mean()

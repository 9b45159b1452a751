"""An attention with rotary embeddings computed inline, q, k and v as Linears of their own, pairs
(j, j + d/2) rotated (``rotate_half``); torch's port (ropebuf_torch.py) packs q|k|v in one
``Wqkv``, rotates the pairs (2j, 2j + 1) and keeps its tables as buffers named ``rope_cos`` and
``rope_sin`` (a name no library uses: the values say they are a rotary table).

PADIFF_BUG (this side): paddle_rope_base_1e3 -> the frequencies use base 1000, not 10000."""
import paddle
import paddle.nn.functional as F
from _common import D, bug, hidden
from paddle import nn

HEADS, HD = 2, 8


def rotate_half(x):
    a, b = x[..., : HD // 2], x[..., HD // 2:]
    return paddle.concat([-b, a], axis=-1)


class Attention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(D, D, bias_attr=False)
        self.k_proj = nn.Linear(D, D, bias_attr=False)
        self.v_proj = nn.Linear(D, D, bias_attr=False)
        self.o_proj = nn.Linear(D, D, bias_attr=False)

    def forward(self, x):
        b, s, _ = x.shape
        base = 1000.0 if bug() == "paddle_rope_base_1e3" else 10000.0
        inv = 1.0 / base ** (paddle.arange(0, HD, 2, dtype="float32") / HD)
        ang = paddle.outer(paddle.arange(s, dtype="float32"), inv)
        emb = paddle.concat([ang, ang], axis=-1)
        cos, sin = emb.cos(), emb.sin()

        def heads(t):
            return t.reshape([b, s, HEADS, HD]).transpose([0, 2, 1, 3])

        q, k, v = heads(self.q_proj(x)), heads(self.k_proj(x)), heads(self.v_proj(x))
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        att = F.softmax(paddle.matmul(q, k, transpose_y=True) / HD**0.5, axis=-1)
        return self.o_proj(paddle.matmul(att, v).transpose([0, 2, 1, 3]).reshape([b, s, D]))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.attn = Attention()
        self.head = nn.Linear(D, 4)

    def forward(self, x):
        return self.head(x + self.attn(self.norm(x)))


def model():
    if bug() not in ("", "paddle_rope_base_1e3"):
        raise ValueError(f"ropebuf paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out.mean()

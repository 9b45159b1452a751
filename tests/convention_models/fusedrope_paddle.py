"""A small encoder written the way EVA-02's code writes its attention: one fused ``qkv`` Linear
without a bias, applied through ``F.linear`` with a bias the attention assembles from its own
``q_bias`` and ``v_bias`` (k has none), and rotary embeddings in the interleaved layout
(features 2j and 2j + 1 rotated together) read from cosine and sine buffers whose every entry
is repeated twice in a row (``repeat(freqs, 2)``), under names no table lists. The torch side
(fusedrope_torch.py) keeps three Linears and rotates half-split pairs with angles it computes
inline.

PADIFF_BUG: paddle_mlp_relu (this side: the second block's feed-forward uses ReLU, not GELU)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import B, S, bug
from paddle import nn

D, H, N = 16, 2, 2
HD = D // H


def interleaved(x):
    x = x.reshape(x.shape[:-1] + [HD // 2, 2])
    return paddle.stack([-x[..., 1], x[..., 0]], axis=-1).reshape(x.shape[:-2] + [HD])


class Angles(nn.Layer):
    def __init__(self):
        super().__init__()
        inv = 1.0 / (10000 ** (np.arange(0, HD, 2) / HD))
        f = np.repeat(np.outer(np.arange(S), inv), 2, axis=-1)  # [S, HD]: each angle twice in a row
        self.register_buffer("angle_cos", paddle.to_tensor(np.cos(f).astype("float32")), persistable=False)
        self.register_buffer("angle_sin", paddle.to_tensor(np.sin(f).astype("float32")), persistable=False)

    def forward(self, t):
        return t * self.angle_cos + interleaved(t) * self.angle_sin


class Attention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D, bias_attr=False)
        self.q_bias = self.create_parameter([D], is_bias=True)
        self.v_bias = self.create_parameter([D], is_bias=True)
        self.angles = Angles()
        self.proj = nn.Linear(D, D)

    def forward(self, x):
        b, s, _ = x.shape
        bias = paddle.concat([self.q_bias, paddle.zeros_like(self.q_bias), self.v_bias])
        qkv = F.linear(x, self.qkv.weight, bias).reshape([b, s, 3, H, HD]).transpose([2, 0, 3, 1, 4])
        q, k, v = self.angles(qkv[0]), self.angles(qkv[1]), qkv[2]
        w = F.softmax(paddle.matmul(q, k, transpose_y=True) / HD ** 0.5, axis=-1)
        return self.proj(paddle.matmul(w, v).transpose([0, 2, 1, 3]).reshape([b, s, D]))


class Block(nn.Layer):
    def __init__(self, relu=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(D)
        self.attn = Attention()
        self.norm2 = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, 2 * D)
        self.fc2 = nn.Linear(2 * D, D)
        self.relu = relu

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        h = self.fc1(self.norm2(x))
        return x + self.fc2(F.relu(h) if self.relu else F.gelu(h))


class Encoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([Block(relu=bug() == "paddle_mlp_relu" and i == 1) for i in range(N)])
        self.norm = nn.LayerNorm(D)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return self.norm(x)


def model():
    if bug() not in ("", "paddle_mlp_relu", "torch_rope_base"):
        raise ValueError(f"fusedrope paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Encoder()
    rng = np.random.default_rng(1)
    for blk in net.blocks:  # biases that are not zero, so a misplaced one shows
        blk.attn.q_bias.set_value(rng.standard_normal(D).astype("float32") * 0.3)
        blk.attn.v_bias.set_value(rng.standard_normal(D).astype("float32") * 0.3)
    return net


def inputs():
    x = np.random.default_rng(0).standard_normal((B, S, D)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(out):
    return out.pow(2).mean()

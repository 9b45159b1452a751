"""A tiny diffusion-style network: each block adds its own projection of the time embedding
(``temb_proj``), and the attention keeps q, k, v and its output as 1x1 convolutions. The torch
side (hoisted_torch.py) projects the time embedding for every block at once at the top
(``time_proj``, the blocks' shares one after the other) and runs ``nn.MultiheadAttention``.

PADIFF_BUG: paddle_attn_unscaled (this side: the attention forgets 1/sqrt(d)),
torch_norm_eps (the torch side's: the second down block's GroupNorm eps 1e-2)."""
import math

import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug, image
from paddle import nn

C, T, F0 = 8, 16, 8
BUGS = ("", "paddle_attn_unscaled", "torch_norm_eps")


def timesteps():
    return np.array([3.0, 11.0], "float32")


class Block(nn.Layer):
    def __init__(self, cin, cout):
        super().__init__()
        self.norm = nn.GroupNorm(4, cin)
        self.conv = nn.Conv2D(cin, cout, 3, padding=1)
        self.temb_proj = nn.Linear(T, cout)

    def forward(self, x, temb):
        h = self.conv(F.silu(self.norm(x)))
        return h + self.temb_proj(F.silu(temb))[:, :, None, None]


class Attention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm = nn.GroupNorm(4, 2 * C)
        self.q = nn.Conv2D(2 * C, 2 * C, 1)
        self.k = nn.Conv2D(2 * C, 2 * C, 1)
        self.v = nn.Conv2D(2 * C, 2 * C, 1)
        self.proj_out = nn.Conv2D(2 * C, 2 * C, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        y = self.norm(x)
        q = self.q(y).flatten(2).transpose([0, 2, 1])
        k = self.k(y).flatten(2)
        v = self.v(y).flatten(2).transpose([0, 2, 1])
        scores = q @ k
        if bug() != "paddle_attn_unscaled":
            scores = scores / math.sqrt(c)
        out = (F.softmax(scores, axis=-1) @ v).transpose([0, 2, 1]).reshape([b, c, h, w])
        return x + self.proj_out(out)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.time = nn.Linear(F0, T)
        self.conv_in = nn.Conv2D(3, C, 3, padding=1)
        self.down_blocks = nn.LayerList([Block(C, C), Block(C, 2 * C)])
        self.mid_block = Block(2 * C, 2 * C)
        self.mid_attn = Attention()
        self.up_blocks = nn.LayerList([Block(2 * C, C)])
        self.conv_out = nn.Conv2D(C, 3, 3, padding=1)

    def forward(self, x, t):
        freqs = paddle.exp(-math.log(1000.0) * paddle.arange(F0 // 2, dtype="float32") / (F0 // 2))
        angles = t[:, None] * freqs[None]
        temb = self.time(paddle.concat([paddle.sin(angles), paddle.cos(angles)], axis=-1))
        h = self.conv_in(x)
        for block in self.down_blocks:
            h = block(h, temb)
        h = self.mid_attn(self.mid_block(h, temb))
        return self.conv_out(self.up_blocks[0](h, temb))


def model():
    if bug() not in BUGS:
        raise ValueError(f"hoisted paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(3)
    for norm in (*(b.norm for b in (*net.down_blocks, net.mid_block, *net.up_blocks)), net.mid_attn.norm):
        n = norm.weight.shape[0]
        norm.weight.set_value(rng.uniform(0.5, 1.5, n).astype("float32"))
        norm.bias.set_value(rng.normal(0.0, 0.3, n).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(image()), paddle.to_tensor(timesteps())), {}


def loss(out):
    return out.pow(2).mean()

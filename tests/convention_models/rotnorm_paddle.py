"""A small decoder written the way one library writes it: LayerNorms that scale by ``1 + g``
and keep ``g`` (zeros at initialisation, so a freshly built model normalises only), separate
``query``/``key``/``value`` projections with rotary embeddings in the half-split layout
(feature j rotated with j + d/2, an ``inv_freq`` buffer). The torch side (rotnorm_torch.py)
uses ``nn.LayerNorm`` (keeping ``1 + g``) and one fused ``to_qkv`` Linear whose q and k rows
are rotated in the interleaved layout (features 2j and 2j + 1).

PADIFF_BUG: paddle_norm_plain (this side: the second block's output norm scales by g, not 1 + g)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import B, S, V, bug
from paddle import nn

D, H, N = 16, 2, 2
HD = D // H


class OffsetNorm(nn.Layer):
    """LayerNorm whose scale is ``1 + g``."""

    def __init__(self, plain=False):
        super().__init__()
        self.g = self.create_parameter([D], default_initializer=nn.initializer.Constant(0.0))
        self.shift = self.create_parameter([D], is_bias=True)
        self.plain = plain

    def forward(self, x):
        y = F.layer_norm(x, [D], epsilon=1e-5)
        return y * (self.g if self.plain else 1.0 + self.g) + self.shift


def rotate(x, cos, sin):
    x1, x2 = x[..., : HD // 2], x[..., HD // 2:]
    return x * cos + paddle.concat([-x2, x1], axis=-1) * sin


class Rotary(nn.Layer):
    def __init__(self):
        super().__init__()
        inv = 1.0 / (10000 ** (np.arange(0, HD, 2, dtype="float32") / HD))
        self.register_buffer("inv_freq", paddle.to_tensor(inv), persistable=False)

    def forward(self, n):
        t = paddle.arange(n, dtype="float32")
        f = paddle.outer(t, self.inv_freq)
        emb = paddle.concat([f, f], axis=-1)
        return emb.cos(), emb.sin()


class Attention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.query = nn.Linear(D, D)
        self.key = nn.Linear(D, D)
        self.value = nn.Linear(D, D)
        self.out = nn.Linear(D, D)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        q, k, v = (p(x).reshape([b, s, H, HD]).transpose([0, 2, 1, 3]) for p in (self.query, self.key, self.value))
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        causal = paddle.triu(paddle.full([s, s], float("-inf")), diagonal=1)
        att = F.softmax(q @ k.transpose([0, 1, 3, 2]) / HD ** 0.5 + causal, axis=-1)
        return self.out((att @ v).transpose([0, 2, 1, 3]).reshape([b, s, D]))


class Block(nn.Layer):
    def __init__(self, plain_out=False):
        super().__init__()
        self.norm_in = OffsetNorm()
        self.attn = Attention()
        self.norm_mid = OffsetNorm()
        self.ff = nn.Sequential(nn.Linear(D, 2 * D), nn.GELU(), nn.Linear(2 * D, D))
        self.norm_out = OffsetNorm(plain_out)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.norm_in(x), cos, sin)
        x = x + self.ff(self.norm_mid(x))
        return self.norm_out(x)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(V, D)
        self.rotary = Rotary()
        self.blocks = nn.LayerList([Block(plain_out=i == 1 and bug() == "paddle_norm_plain") for i in range(N)])
        self.head = nn.Linear(D, V)

    def forward(self, ids):
        x = self.tokens(ids)
        cos, sin = self.rotary(ids.shape[1])
        for blk in self.blocks:
            x = blk(x, cos, sin)
        return self.head(x)


def model():
    if bug() not in ("", "paddle_norm_plain", "torch_rope_base"):
        raise ValueError(f"rotnorm paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(5)
    for _, p in net.named_parameters():  # norms as training leaves them: g around 0, shifts nonzero
        if p.shape == [D] and p.name and len(p.shape) == 1:
            p.set_value(rng.normal(0.0, 0.2, p.shape).astype("float32"))
    return net.eval()


def inputs():
    ids = np.random.default_rng(0).integers(1, V, size=(B, S)).astype("int64")
    return (paddle.to_tensor(ids),), {}


def loss(out):
    return out.pow(2).mean()

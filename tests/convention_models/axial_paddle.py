"""Axial attention over a grid of tokens, written the way one library writes it: each block
attends along rows with one fused ``row_qkv`` projection and along columns with separate
``col_query``/``col_key``/``col_value`` projections, sums both and projects. The torch side
(axial_torch.py) keeps the row attention's projections apart (``row.q``, ``row.k``, ``row.v``) and
fuses the column attention's (``column.to_qkv``): each port fuses the other attention.

PADIFF_BUG: paddle_ffn_tanh (this side: the second block's feed-forward uses tanh-GELU)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug
from paddle import nn

D, H, N, G = 16, 2, 2, 4  # width, heads, blocks, grid side
HD = D // H


def attend(q, k, v):
    """q, k, v [..., L, D] -> attention along L, heads apart."""
    shp = q.shape
    q, k, v = (t.reshape([*shp[:-1], H, HD]).transpose([*range(len(shp) - 2), len(shp) - 1, len(shp) - 2, len(shp)])
               for t in (q, k, v))
    att = F.softmax(q @ k.transpose([*range(len(shp) - 1), len(shp), len(shp) - 1]) / HD ** 0.5, axis=-1)
    out = att @ v
    return out.transpose([*range(len(shp) - 2), len(shp) - 1, len(shp) - 2, len(shp)]).reshape(shp)


class AxialAttention(nn.Layer):
    def __init__(self):
        super().__init__()
        self.row_qkv = nn.Linear(D, 3 * D)
        self.col_query = nn.Linear(D, D)
        self.col_key = nn.Linear(D, D)
        self.col_value = nn.Linear(D, D)
        self.proj = nn.Linear(D, D)

    def forward(self, x):  # [B, G, G, D]: rows along axis 2, columns along axis 1
        q, k, v = paddle.split(self.row_qkv(x), 3, axis=-1)
        rows = attend(q, k, v)
        xt = x.transpose([0, 2, 1, 3])
        cols = attend(self.col_query(xt), self.col_key(xt), self.col_value(xt)).transpose([0, 2, 1, 3])
        return self.proj(rows + cols)


class Block(nn.Layer):
    def __init__(self, tanh=False):
        super().__init__()
        self.norm1 = nn.LayerNorm(D)
        self.axial = AxialAttention()
        self.norm2 = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, 2 * D)
        self.fc2 = nn.Linear(2 * D, D)
        self.tanh = tanh

    def forward(self, x):
        x = x + self.axial(self.norm1(x))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x)), approximate=self.tanh))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.blocks = nn.LayerList([Block(tanh=i == 1 and bug() == "paddle_ffn_tanh") for i in range(N)])

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


def model():
    if bug() not in ("", "paddle_ffn_tanh"):
        raise ValueError(f"axial paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(21)
    for _, p in net.named_parameters():  # biases and norms as training leaves them
        if len(p.shape) == 1:
            p.set_value(rng.normal(0.0, 0.3, p.shape).astype("float32") + (1.0 if "norm" in p.name else 0.0))
    return net.eval()


def inputs():
    x = np.random.default_rng(0).standard_normal((2, G, G, D)).astype("float32")
    return (paddle.to_tensor(x),), {}


def loss(out):
    return out.pow(2).mean()

"""The same attention, torch side, storing its projections [d, heads, head_dim] (as HF's
XLNet does) and used through einsum; a 0-d temperature buffer; and an optional module the
paddle side was built without (``extra``, trainable, unused in forward).
PADIFF_BUG=scale: scores divided by head_dim instead of its square root."""
import math

import torch
import torch.nn.functional as F
from _common import D, V, bug, ids
from torch import nn

H, DH = 4, D // 4


class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = (nn.Parameter(torch.randn(D, H, DH)) for _ in range(3))
        self.register_buffer("temp", torch.tensor(1.0))
        self.o = nn.Linear(D, D)
        self.div = math.sqrt(DH)

    def forward(self, x):
        q, k, v = (torch.einsum("bsd,dhe->bhse", x, w) for w in (self.q, self.k, self.v))
        s = q @ k.transpose(-1, -2) / (self.div * self.temp)
        y = (F.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(x.shape)
        return self.o(y)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.attn = Attn()
        self.norm = nn.LayerNorm(D)
        self.extra = nn.Linear(D, 3)  # built with an optional head the other side lacks; not called

    def forward(self, input_ids):
        x = self.embed(input_ids)
        return self.norm(x + self.attn(x))


def model():
    torch.manual_seed(0)
    m = Model().eval()
    if bug() == "scale":
        m.attn.div = DH
    return m


def inputs():
    return torch.from_numpy(ids())


def loss(out):
    return (out[..., : D // 2] ** 2).mean()

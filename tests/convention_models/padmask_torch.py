"""Torch side of padmask_paddle.py: the mask says True = attend, ``[b, 1, 1, s]``.

PADIFF_BUG (this side): torch_scale_by_dim -> the scores scaled by 1/d, not 1/sqrt(d)."""
import numpy as np
import torch
import torch.nn.functional as F
from _common import D, S, bug, hidden
from torch import nn

LENGTHS = np.array([S, S - 3], dtype="int64")


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(D, D) for _ in range(4))

    def forward(self, x, keep):
        scale = 1.0 / D if bug() == "torch_scale_by_dim" else None
        q, k, v = (w(x)[:, None] for w in (self.wq, self.wk, self.wv))  # one head: [b, 1, s, d]
        return self.wo(F.scaled_dot_product_attention(q, k, v, attn_mask=keep, scale=scale)[:, 0])


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = Attention()
        self.out = nn.Linear(D, 3)

    def forward(self, x, lengths):
        keep = (torch.arange(S)[None, :] < lengths[:, None])[:, None, None, :]
        return self.out(x + self.attention(x, keep))


def model():
    if bug() not in ("", "torch_scale_by_dim"):
        raise ValueError(f"padmask torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()), torch.from_numpy(LENGTHS)), {}


def loss(out):
    return out.mean()

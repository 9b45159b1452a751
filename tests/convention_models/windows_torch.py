"""The window-attention block of windows_paddle.py written the way another library writes it:
``partition`` (``Tensor.unfold`` twice, then a permute) and ``merge`` are modules of their own;
the attention runs in an ``nn.Sequential`` with its LayerNorm.

PADIFF_BUG: paddle_window_strided is the other side's (accepted, ignored)."""
import torch
import torch.nn.functional as F
from _common import bug, image
from torch import nn

C, P = 8, 4


class Partition(nn.Module):
    def forward(self, x):  # [B, C, H, W] -> [B * windows, P * P, C]
        c = x.shape[1]
        t = x.unfold(2, P, P).unfold(3, P, P)  # [B, C, H/P, W/P, P, P]
        return t.permute(0, 2, 3, 4, 5, 1).reshape(-1, P * P, c)


class Merge(nn.Module):
    def forward(self, y, shape):
        b, c, h, w = shape
        return y.view(b, h // P, w // P, P, P, c).permute(0, 5, 1, 3, 2, 4).reshape(b, c, h, w)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(C, 3 * C)
        self.proj = nn.Linear(C, C)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        return self.proj(F.softmax(q @ k.transpose(-1, -2) / C**0.5, dim=-1) @ v)


class WindowBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.partition = Partition()
        self.attn_layer = nn.Sequential(nn.LayerNorm(C), Attention())
        self.merge = Merge()

    def forward(self, x):
        return x + self.merge(self.attn_layer(self.partition(x)), x.shape)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, C, 3, padding=1)
        self.block = WindowBlock()
        self.head = nn.Linear(C * 64, 5)

    def forward(self, x):
        return self.head(self.block(self.stem(x)).flatten(1))


def model():
    if bug() not in ("", "paddle_window_strided"):
        raise ValueError(f"windows torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.pow(2).mean()

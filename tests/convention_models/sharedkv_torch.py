"""Torch side of sharedkv_paddle.py: a key branch and a value branch, each a strided depthwise
conv, a BatchNorm and a 1x1 projection of its own (timm's layout)."""
import torch
from _common import bug, image
from torch import nn

C, K = 8, 4


def branch() -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(C, C, 3, stride=2, padding=1, groups=C, bias=False), nn.BatchNorm2d(C),
                         nn.Conv2d(C, K, 1))


class MultiQuery(nn.Module):
    def __init__(self):
        super().__init__()
        self.query = nn.Conv2d(C, K, 1)
        self.key = branch()
        self.value = branch()
        self.proj = nn.Conv2d(K, C, 1)

    def forward(self, x):
        b, _, h, w = x.shape
        q = self.query(x).flatten(2).transpose(1, 2)
        k = self.key(x).flatten(2)
        v = self.value(x).flatten(2).transpose(1, 2)
        o = torch.softmax(q @ k * K**-0.5, dim=-1) @ v
        return x + self.proj(o.transpose(1, 2).reshape(b, K, h, w))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, C, 3, padding=1)
        self.mqa = MultiQuery()
        self.fc = nn.Linear(C, 5)

    def forward(self, x):
        return self.fc(self.mqa(self.conv(x)).mean(dim=(2, 3)))


def model():
    if bug() not in ("", "paddle_norm_eps"):
        raise ValueError(f"sharedkv torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.mean()

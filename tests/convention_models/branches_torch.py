"""The torch side of branches_paddle.py: one ``cv12`` conv+BN with both branches' channels,
then ``cv3``.

PADIFF_BUG (this side): torch_c3_eps -> ``cv3``'s BatchNorm built with eps 1e-3 instead of 1e-5."""
import torch
import torch.nn.functional as F
from _common import bug, image
from torch import nn

C, H = 8, 4


class ConvBN(nn.Module):
    def __init__(self, cin, cout, k=1, eps=1e-5):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout, eps=eps)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class C3(nn.Module):
    def __init__(self):
        super().__init__()
        self.cv12 = ConvBN(C, 2 * H)
        self.cv3 = ConvBN(2 * H, C, eps=1e-3 if bug() == "torch_c3_eps" else 1e-5)

    def forward(self, x):
        return self.cv3(self.cv12(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = ConvBN(3, C, 3)
        self.c3 = C3()
        self.fc = nn.Linear(C, 4)

    def forward(self, x):
        return self.fc(self.c3(self.stem(x)).mean(dim=(2, 3)))


def model():
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return (out * out).mean()

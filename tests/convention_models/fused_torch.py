"""The torch side of fused_paddle.py: BatchNorm then ``F.relu``; the gate pools inline.

PADIFF_BUG (this side): torch_gate_after_add -> the unit gates the residual sum, not its branch."""
import torch
import torch.nn.functional as F
from _common import bug, image
from torch import nn

C = 3


class Gate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.fc = nn.Linear(c, c)

    def forward(self, y):
        return y * torch.sigmoid(self.fc(y.mean((2, 3))))[:, :, None, None]


class Unit(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.gate = Gate(c)

    def forward(self, x):
        y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        if bug() == "torch_gate_after_add":
            return F.relu(self.gate(y + x))
        return F.relu(self.gate(y) + x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.unit = Unit(C)
        self.head = nn.Linear(C, 2)

    def forward(self, x):
        return self.head(self.unit(x).mean((2, 3)))


def model():
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return (out * out).mean()

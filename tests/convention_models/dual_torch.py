"""The torch side of dual_paddle.py: the shortcut is a unit of torch's own, ``proj`` (BatchNorm,
ReLU, one convolution whose first rows are the residual part and last rows the dense part); the
block splits its output.

PADIFF_BUG: torch_proj_no_act (this side: the unit built without its ReLU), paddle_dense_first
(the other side's: accepted, ignored)."""
import torch
from _common import bug, image
from torch import nn

C = 8


class BnActConv(nn.Module):
    def __init__(self, cin, cout, k=1, act=True):
        super().__init__()
        self.bn = nn.BatchNorm2d(cin)
        self.act = nn.ReLU() if act else nn.Identity()
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2)

    def forward(self, x):
        return self.conv(self.act(self.bn(x)))


class DualBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = BnActConv(C, 2 * C, act=bug() != "torch_proj_no_act")
        self.main = BnActConv(C, C, 3)

    def forward(self, x):
        p = self.proj(x)
        res, dense = p[:, :C], p[:, C:]
        return torch.cat([res + self.main(x), dense], dim=1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, C, 3, padding=1)
        self.dpb = DualBlock()
        self.fc = nn.Linear(2 * C, 4)

    def forward(self, x):
        return self.fc(self.dpb(self.conv(x)).mean(dim=(2, 3)))


def model():
    if bug() not in ("", "paddle_dense_first", "torch_proj_no_act"):
        raise ValueError(f"dual torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.pow(2).mean()

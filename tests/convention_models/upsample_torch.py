"""The head of upsample_paddle.py written the way another library writes it: a Sequential ending
at the classifier convolution, then an ``nn.Upsample`` module at the model's level.

PADIFF_BUG: torch_upsample_nearest (this side: the upsampling uses nearest, not bilinear)."""
import torch
import torch.nn.functional as F
from _common import bug, image
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.head = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.Conv2d(8, 4, 1))
        mode = "nearest" if bug() == "torch_upsample_nearest" else "bilinear"
        self.upsample = nn.Upsample(scale_factor=2, mode=mode, **({} if mode == "nearest" else {"align_corners": False}))

    def forward(self, x):
        return self.upsample(self.head(F.relu(self.stem(x))))


def model():
    if bug() not in ("", "torch_upsample_nearest"):
        raise ValueError(f"upsample torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.pow(2).mean()

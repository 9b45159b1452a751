"""Torch side of resize_paddle.py: the branch ends with its own ``nn.Upsample``.

PADIFF_BUG (this side): torch_head_offset -> 0.5 is added to the model's output."""
import torch
import torch.nn.functional as F
from _common import bug, image
from torch import nn

C = 3


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(C, C, 3, stride=2, padding=1)
        self.low_to_high = nn.Sequential(nn.Conv2d(C, C, 1, bias=False), nn.BatchNorm2d(C),
                                         nn.Upsample(scale_factor=2, mode="nearest"))
        self.head = nn.Conv2d(C, 2, 1)

    def forward(self, x):
        y = self.head(F.relu(x + self.low_to_high(self.down(x))))
        return y + 0.5 if bug() == "torch_head_offset" else y


def model():
    if bug() not in ("", "paddle_bilinear", "torch_head_offset"):
        raise ValueError(f"resize torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.mean()

"""The torch side of pwpack_paddle.py: both paths' scores come from one pointwise convolution,
``select`` ([2C, R, 1, 1]: path 0's rows, then path 1's), over the squeezed features kept as
[B, R, 1, 1] (the squeeze is a 1x1 convolution too); the paths are a ModuleList.

PADIFF_BUG: torch_view_interleaved (this side: the scores viewed as [B, C, 2] (rows of the two
paths interleaved) instead of [B, 2, C]), paddle_pick_temperature (the other side's: accepted,
ignored)."""
import torch
from _common import bug, image
from torch import nn

C, R = 8, 4


class SelectiveMix(nn.Module):
    def __init__(self):
        super().__init__()
        self.paths = nn.ModuleList([nn.Conv2d(C, C, 3, padding=1), nn.Conv2d(C, C, 3, padding=2, dilation=2)])
        self.reduce = nn.Conv2d(C, R, 1)
        self.select = nn.Conv2d(R, 2 * C, 1)

    def forward(self, x):
        u = torch.stack([p(x) for p in self.paths], dim=1)  # [B, 2, C, H, W]
        z = torch.relu(self.reduce(u.sum(dim=1).mean(dim=(2, 3), keepdim=True)))
        s = self.select(z)
        if bug() == "torch_view_interleaved":
            s = s.view(x.shape[0], C, 2).transpose(1, 2)
        w = s.reshape(x.shape[0], 2, C, 1, 1).softmax(dim=1)
        return (w * u).sum(dim=1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, C, 3, padding=1)
        self.mix = SelectiveMix()
        self.head = nn.Linear(C, 4)

    def forward(self, x):
        return self.head(self.mix(self.stem(x)).mean(dim=(2, 3)))


def model():
    if bug() not in ("", "paddle_pick_temperature", "torch_view_interleaved"):
        raise ValueError(f"pwpack torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.pow(2).mean()

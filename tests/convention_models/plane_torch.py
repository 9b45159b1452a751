"""plane, torch side of plane_paddle.py: the grid kept steps-first [batch, steps, sensors] between
the blocks and flattened that way for the plane's BatchNorm (element t * 6 + s); the step mixing
reads it transposed."""
import torch
from _common import SENSORS, STEPS, bug, grid
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.plane_norm = nn.BatchNorm1d(SENSORS * STEPS)
        self.step_mix = nn.Linear(STEPS, STEPS)

    def forward(self, x):
        b = x.shape[0]
        h = self.plane_norm(x.reshape(b, STEPS * SENSORS)).reshape(b, STEPS, SENSORS)
        update = torch.tanh(self.step_mix(h.transpose(1, 2))).transpose(1, 2)
        return x + (0.5 * update if bug() == "torch_residual_half" else update)


class Net(nn.Module):
    def __init__(self, block=Block):
        super().__init__()
        self.layers = nn.ModuleList([block() for _ in range(2)])
        self.classifier = nn.Linear(SENSORS, 3)

    def forward(self, grid):
        x = grid.transpose(1, 2)
        for layer in self.layers:
            x = layer(x)
        return self.classifier(x.mean(dim=1))


def model():
    if bug() not in ("", "paddle_norm_eps", "torch_residual_half"):
        raise ValueError(f"plane torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return torch.from_numpy(grid())


def loss(out):
    return (out ** 2).mean()

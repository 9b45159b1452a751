"""planeln, torch side of planeln_paddle.py: the grid kept steps-first [batch, steps, sensors] and
normalised as it is by ``nn.LayerNorm((7, 6))``; the step mixing reads it transposed."""
import torch
from _common import SENSORS, STEPS, bug, grid
from plane_torch import Net
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.plane_norm = nn.LayerNorm((STEPS, SENSORS))
        self.step_mix = nn.Linear(STEPS, STEPS)

    def forward(self, x):
        act = torch.relu if bug() == "torch_update_relu" else torch.tanh
        h = self.plane_norm(x)
        return x + act(self.step_mix(h.transpose(1, 2))).transpose(1, 2)


def model():
    if bug() not in ("", "paddle_norm_eps", "torch_update_relu"):
        raise ValueError(f"planeln torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net(Block).eval()


def inputs():
    return torch.from_numpy(grid())


def loss(out):
    return (out ** 2).mean()

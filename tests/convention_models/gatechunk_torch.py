"""The block stack of gatechunk_paddle.py with the gate's GELU as a module of its own (``act``),
applied to the half of the depthwise output that the block's code cuts off.

PADIFF_BUG: torch_act_tanh (this side: the first block's ``act`` is the tanh GELU);
paddle_gate_halves_swapped is the other side's (accepted, ignored)."""
import torch
from _common import bug, image
from torch import nn

C, E = 8, 24


class GDFN(nn.Module):
    def __init__(self, tanh=False):
        super().__init__()
        self.fc_in = nn.Conv2d(C, 2 * E, 1)
        self.dw = nn.Conv2d(2 * E, 2 * E, 3, padding=1, groups=2 * E)
        self.act = nn.GELU(approximate="tanh" if tanh else "none")
        self.fc_out = nn.Conv2d(E, C, 1)

    def forward(self, x):
        gate, value = self.dw(self.fc_in(x)).chunk(2, dim=1)
        return self.fc_out(self.act(gate) * value)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_in = nn.Conv2d(3, C, 3, padding=1)
        self.body = nn.ModuleList([GDFN(tanh=bug() == "torch_act_tanh" and i == 0) for i in range(2)])
        self.conv_out = nn.Conv2d(C, 3, 3, padding=1)

    def forward(self, img):
        x = self.conv_in(img)
        for blk in self.body:
            x = x + blk(x)
        return self.conv_out(x)


def model():
    if bug() not in ("", "paddle_gate_halves_swapped", "torch_act_tanh"):
        raise ValueError(f"gatechunk torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.tensor(image()),), {}


def loss(out):
    return out.pow(2).mean()

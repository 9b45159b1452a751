"""The torch side of grouplin_paddle.py: the gate's two layers are grouped 1x1 convolutions
``[groups * out, in, 1, 1]`` over the squeezed features kept as ``[b, c, 1, 1]``.

PADIFF_BUG (this side): torch_groups_merged -> the gate's first convolution built with one group
too few in its view of the input (the groups' inputs swapped before it); paddle_gate_bias_twice
(the other side's) is accepted, ignored."""
import torch
from _common import bug, image
from torch import nn

C, G = 8, 2


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Conv2d(C, C, 1, groups=G)
        self.fc2 = nn.Conv2d(C, C, 1, groups=G)

    def forward(self, x):
        z = x.mean(dim=(2, 3), keepdim=True)
        if bug() == "torch_groups_merged":
            z = torch.cat([z[:, C // G:], z[:, :C // G]], dim=1)
        return x * torch.sigmoid(self.fc2(torch.relu(self.fc1(z))))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, C, 3, padding=1)
        self.gate = Gate()
        self.head = nn.Linear(C, 4)

    def forward(self, x):
        return self.head(self.gate(self.stem(x)).mean(dim=(2, 3)))


def model():
    if bug() not in ("", "paddle_gate_bias_twice", "torch_groups_merged"):
        raise ValueError(f"grouplin torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.pow(2).mean()

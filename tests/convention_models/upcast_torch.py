"""The RMSNorm pair of upcast_paddle.py, torch side. PADIFF_BUG=half_norm: the norm runs in
bfloat16 and its result is cast back to float32 (no upcast); PADIFF_BUG=eps_sqrt: the epsilon
is added outside the square root, a difference of ~4e-6 relative, below the fp32 floor here."""
import torch
from _common import D, bug, hidden
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(D))

    def forward(self, x):
        if bug() == "half_norm":
            h = x.to(torch.bfloat16)
            y = self.weight.to(torch.bfloat16) * h * torch.rsqrt((h * h).mean(-1, keepdim=True) + 4e-7)
            return y.to(x.dtype)
        if bug() == "eps_sqrt":
            return self.weight * x / (torch.sqrt((x * x).mean(-1, keepdim=True)) + 4e-7)
        return self.weight * x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 4e-7)


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Sequential(*[m for _ in range(8) for m in (nn.Linear(D, D), nn.Tanh())])  # a deep start: a wide fp32 floor
        self.norm = RMSNorm()
        self.out = nn.Linear(D, 4)

    def forward(self, x):
        return self.out(self.norm(self.inp(x)))


def model():
    torch.manual_seed(0)
    return Model().eval()


def inputs():
    return torch.from_numpy(hidden())


def loss(out):
    return (out**2).mean()

"""Torch side of logscale_paddle.py: the temperature trained in log space, ``log_temp [heads]``.

PADIFF_BUG (this side): torch_temp_not_exp -> the scores are multiplied by log_temp itself."""
import torch
from _common import bug, hidden
from torch import nn

D, H = 16, 4


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.qk = nn.Linear(D, 2 * D)
        self.log_temp = nn.Parameter(torch.zeros(H))
        self.out = nn.Linear(D, D)

    def forward(self, x):
        b, s, _ = x.shape
        q, k = self.qk(x).reshape(b, s, 2, H, D // H).permute(2, 0, 3, 1, 4).unbind(0)
        t = self.log_temp if bug() == "torch_temp_not_exp" else self.log_temp.exp()
        attn = torch.softmax((q @ k.transpose(-1, -2)) * t[:, None, None], dim=-1)
        v = x.reshape(b, s, H, D // H).transpose(1, 2)
        return self.out((attn @ v).transpose(1, 2).reshape(b, s, D))


def model():
    if bug() not in ("", "torch_temp_not_exp"):
        raise ValueError(f"logscale torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return out.pow(2).mean()

"""Torch side of kernelpred_paddle.py: the kernel predictor's outputs laid out tap by tap
(``[K, H]``), the neighbours gathered with ``unfold``.

PADIFF_BUG (this side): torch_taps_reversed -> each kernel is applied to the neighbours in reverse
order: a reordering of the predictor's rows that no layout makes, which stays a bug."""
import torch
import torch.nn.functional as F
from _common import D, bug, hidden
from torch import nn

H, K = 4, 3


class Predicted(nn.Module):
    def __init__(self):
        super().__init__()
        self.predict = nn.Linear(D, K * H)

    def forward(self, x):
        b, s, _ = x.shape
        w = self.predict(x).view(b, s, K, H).transpose(2, 3).softmax(-1)  # [b, s, H, K]
        if bug() == "torch_taps_reversed":
            w = w.flip(-1)
        cols = F.pad(x.transpose(1, 2), (K // 2, K // 2)).unfold(2, K, 1)  # [b, D, s, K]
        cols = cols.permute(0, 2, 1, 3).reshape(b, s, H, D // H, K)
        return torch.einsum("bshck,bshk->bshc", cols, w).reshape(b, s, D)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj_in = nn.Linear(D, D)
        self.dyn = Predicted()
        self.proj_out = nn.Linear(D, D)

    def forward(self, x):
        return self.proj_out(self.dyn(self.proj_in(x)))


def model():
    if bug() not in ("", "paddle_softmax_heads", "torch_taps_reversed"):
        raise ValueError(f"kernelpred torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return out.mean()

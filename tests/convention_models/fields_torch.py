"""The torch side of fields_paddle.py: one table read at per-field offsets; a cell with one
projection ``proj`` ``[2D, D]`` and one ``weight_c`` ``[2D]``.

PADIFF_BUG (this side): torch_offsets_shift -> the third field's rows start one row early."""
import torch
from _common import D, bug
from fields_paddle import SIZES, field_ids
from torch import nn


class Lookup(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(sum(SIZES), D)
        starts = [0, SIZES[0], SIZES[0] + SIZES[1] - (1 if bug() == "torch_offsets_shift" else 0)]
        self.register_buffer("offsets", torch.tensor(starts), persistent=False)

    def forward(self, ids):
        return self.table(ids + self.offsets)


class Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(D, 2 * D, bias=False)
        self.weight_c = nn.Parameter(torch.zeros(2 * D))

    def forward(self, x):
        a, b = (self.proj(x) + self.weight_c).chunk(2, dim=-1)
        return torch.sigmoid(a) * torch.tanh(b)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = Lookup()
        self.cell = Cell()
        self.out = nn.Linear(D, 1)

    def forward(self, ids):
        return self.out(self.cell(self.embed(ids))).squeeze(-1)


def model():
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(field_ids()),), {}


def loss(out):
    return (out * out).mean()

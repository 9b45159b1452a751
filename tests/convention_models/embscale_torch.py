"""Torch side of embscale_paddle.py: the embedding module scales its own output.

PADIFF_BUG (this side): torch_scale_by_d -> the module scales by d instead of sqrt(d)."""
import torch
from _common import D, V, bug, ids
from torch import nn


class ScaledEmbedding(nn.Embedding):
    def forward(self, input_ids):
        scale = float(D) if bug() == "torch_scale_by_d" else D**0.5
        return super().forward(input_ids) * scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = ScaledEmbedding(V, D)
        self.ln = nn.LayerNorm(D)
        self.fc = nn.Linear(D, 4)

    def forward(self, input_ids):
        return self.fc(self.ln(self.embed(input_ids)))


def model():
    if bug() not in ("", "torch_scale_by_d"):
        raise ValueError(f"embscale torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(ids()),), {}


def loss(out):
    return (out**2).mean()

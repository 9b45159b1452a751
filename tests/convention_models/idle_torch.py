"""The torch side of idle_paddle.py: pooling and dropout inline in the forward. Train mode,
dropout 0.3, SGD."""
import torch
from _common import bug, image
from torch import nn
from torch.nn import functional as F


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Conv2d(3, 8, 3, padding=1)
        self.gn = nn.GroupNorm(2, 8)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        h = F.adaptive_avg_pool2d(F.relu(self.gn(self.features(x))), 1).flatten(1)
        return self.fc(F.dropout(h, 0.3, self.training))


def model():
    if bug() not in ("", "paddle_drop_off"):
        raise ValueError(f"idle torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Classifier().train()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.pow(2).mean()


def optimizer(model):
    return torch.optim.SGD(model.parameters(), lr=0.1)

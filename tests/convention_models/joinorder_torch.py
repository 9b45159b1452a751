"""Torch side of joinorder_paddle.py: one Linear over ``[embedding, features]`` concatenated
(the embedding's 4 columns first, the 6 features after), in a Sequential with its norm and ReLU.

PADIFF_BUG (this side): torch_act_gelu -> the Sequential's activation is a GELU."""
import numpy as np
import torch
from _common import V, bug, ids
from torch import nn

E, F_IN, H = 4, 6, 12
BUGS = ("", "paddle_features_doubled", "torch_act_gelu")


def features() -> np.ndarray:
    return np.random.default_rng(1).standard_normal((16, F_IN)).astype("float32")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, E)
        self.body = nn.Sequential(nn.Linear(E + F_IN, H), nn.LayerNorm(H),
                                  nn.GELU() if bug() == "torch_act_gelu" else nn.ReLU())
        self.head = nn.Linear(H, 1)

    def forward(self, x_num, tok):
        return self.head(self.body(torch.cat([self.emb(tok), x_num], dim=1)))


def model():
    if bug() not in BUGS:
        raise ValueError(f"joinorder torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(features()), torch.from_numpy(ids().reshape(-1)[:16])), {}


def loss(out):
    return out.pow(2).mean()

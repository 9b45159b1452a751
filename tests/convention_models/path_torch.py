"""The torch side of path_paddle.py: ``scorer(emissions, tags, lengths)``, transitions
``[to, from]``."""
import torch
from _common import S
from path_paddle import FEAT, TAGS, data
from torch import nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.transitions = nn.Parameter(torch.randn(TAGS, TAGS))

    def forward(self, emissions, tags, lengths):
        mask = (torch.arange(S).unsqueeze(0) < lengths.unsqueeze(1)).float()
        emit = emissions.gather(2, tags.unsqueeze(-1)).squeeze(-1)
        moves = self.transitions[tags[:, 1:], tags[:, :-1]]
        return (emit * mask).sum(1) + (moves * mask[:, 1:]).sum(1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(FEAT, TAGS)
        self.scorer = Scorer()

    def forward(self, x, lengths, tags):
        return self.scorer(self.proj(x), tags, lengths)


def model():
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return tuple(torch.from_numpy(a) for a in data()), {}


def loss(out):
    return out.mean()

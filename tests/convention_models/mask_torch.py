"""The same attention, torch side: the boolean mask says True = masked out (torch's
convention). PADIFF_BUG=scale: scores divided by d instead of sqrt(d)."""
import math

import torch
import torch.nn.functional as F
from _common import D, V, bug, ids, mask
from torch import nn


class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(D, D), nn.Linear(D, D), nn.Linear(D, D)
        self.div = D if bug() == "scale" else math.sqrt(D)

    def forward(self, x, masked):
        s = self.q(x) @ self.k(x).transpose(-1, -2) / self.div
        return F.softmax(s.masked_fill(masked, -1e9), dim=-1) @ self.v(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed, self.attn, self.head = nn.Embedding(V, D), Attn(), nn.Linear(D, 4)

    def forward(self, input_ids, attention_mask):
        masked = ~attention_mask.bool()[:, None, :].expand(-1, input_ids.shape[1], -1)
        return self.head(self.attn(self.embed(input_ids), masked))


def model():
    torch.manual_seed(0)
    return Model().eval()


def inputs():
    return (), {"input_ids": torch.from_numpy(ids()), "attention_mask": torch.from_numpy(mask())}


def loss(out):
    return (out**2).mean()

"""Spec: a Linear, a softmax and a Linear, torch side: the softmax is computed in float32 by the
model's own code (``dtype=torch.float32``, as mixture-of-experts routers do), so a float64 run
of this model mixes dtypes inside its own code and fails."""

import torch
import torch.nn.functional as F


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.score = torch.nn.Linear(8, 8)
        self.out = torch.nn.Linear(8, 4)

    def forward(self, x):
        probs = F.softmax(self.score(x), dim=-1, dtype=torch.float32)
        return probs @ self.out.weight.T + self.out.bias  # inline: the recorder casts nothing here


def model():
    torch.manual_seed(0)
    return Head()


def inputs():
    return (torch.zeros(3, 8),)

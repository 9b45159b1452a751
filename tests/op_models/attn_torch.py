"""Spec: the same attention with torch ops; PADIFF_BUG plants a bug inside forward."""

import os

import torch

BUG = os.environ.get("PADIFF_BUG", "")


class Attn(torch.nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.q = torch.nn.Linear(dim, dim)
        self.k = torch.nn.Linear(dim, dim)
        self.v = torch.nn.Linear(dim, dim)
        self.dim = dim

    def forward(self, x, mask):
        q, k, v = self.q(x), self.k(x), self.v(x)
        scale = self.dim if BUG != "scale" else self.dim * 2
        k = k / torch.sqrt(torch.tensor(float(scale)))  # OP-SCALE
        dots = torch.matmul(q, k.transpose(-1, -2))  # OP-DOTS
        keep = mask if BUG != "mask" else ~mask
        dots = torch.where(keep, dots, torch.full_like(dots, -1e9))  # OP-WHERE
        axis = -1 if BUG != "axis" else -2
        logits = torch.logsumexp(dots, dim=axis, keepdim=True)  # OP-LSE
        probs = torch.exp(dots - logits)  # OP-EXP
        return torch.matmul(probs, v)  # OP-OUT


def model():
    return Attn()


def inputs():
    return (torch.zeros(2, 6, 16), torch.ones(2, 6, 6, dtype=torch.bool))


def loss(out):
    return (out ** 2).mean()

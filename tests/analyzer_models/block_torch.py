"""Spec: torch twin of block_paddle.py; PADIFF_BUG plants one porting bug in block 1.

Bugs: eps (norm0 eps 1e-6 instead of 1e-5), transpose (heads not transposed back before the
reshape), scale (scores / DH instead of / sqrt(DH)), mask (paddle's keep-mask used as torch's
True = masked), dropout (Dropout(0.1) left on), grad (the custom function's backward scales
the gradient x1.25; forward identical), act (ReLU instead of GELU: a type difference).
Tree variants (no bug, other module trees): tree (fc1 nested in a Sequential, functional GELU,
an extra Identity, no Dropout module), renamed (blocks -> layers, q/k/v/o -> query/key/value/out,
value projected before key).
"""

import os

import numpy as np
import torch
import torch.nn.functional as F

D, HEADS, BATCH, SEQ = 16, 2, 2, 6
DH = D // HEADS
BUG = os.environ.get("PADIFF_BUG", "")
RENAMED = BUG == "renamed"


class GradIdentity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g * ctx.factor, None


class Attention(torch.nn.Module):
    def __init__(self, bug):
        super().__init__()
        self.bug = bug
        names = ("query", "key", "value", "out") if RENAMED else ("q", "k", "v", "o")
        for name in names:
            setattr(self, name, torch.nn.Linear(D, D))
        self.softmax = torch.nn.Softmax(dim=-1)

    def forward(self, x, mask):
        b, s = x.shape[0], x.shape[1]
        if RENAMED:
            v = self.value(x).reshape(b, s, HEADS, DH).transpose(1, 2)
            q = self.query(x).reshape(b, s, HEADS, DH).transpose(1, 2)
            k = self.key(x).reshape(b, s, HEADS, DH).transpose(1, 2)
        else:
            q = self.q(x).reshape(b, s, HEADS, DH).transpose(1, 2)
            k = self.k(x).reshape(b, s, HEADS, DH).transpose(1, 2)
            v = self.v(x).reshape(b, s, HEADS, DH).transpose(1, 2)
        if self.bug == "scale":
            scores = q @ k.transpose(-2, -1) / DH
        else:
            scores = q @ k.transpose(-2, -1) * DH**-0.5
        scores = scores.masked_fill(mask if self.bug == "mask" else ~mask, -1e4)
        p = self.softmax(scores)
        if self.bug == "transpose":
            out = (p @ v).reshape(b, s, D)
        else:
            out = (p @ v).transpose(1, 2).reshape(b, s, D)
        return self.out(out) if RENAMED else self.o(out)


class Block(torch.nn.Module):
    def __init__(self, bug):
        super().__init__()
        self.bug = bug
        self.norm0 = torch.nn.LayerNorm(D, eps=1e-6 if bug == "eps" else 1e-5)
        self.attn = Attention(bug)
        self.norm1 = torch.nn.LayerNorm(D)
        if BUG == "tree":
            self.ffn_in = torch.nn.Sequential(torch.nn.Linear(D, 2 * D))
            self.extra = torch.nn.Identity()
        else:
            self.fc1 = torch.nn.Linear(D, 2 * D)
            self.act = torch.nn.ReLU() if bug == "act" else torch.nn.GELU()
        self.fc2 = torch.nn.Linear(2 * D, D)
        self.drop = torch.nn.Dropout(0.1 if bug == "dropout" else 0.0)

    def forward(self, x, mask):
        h = self.norm0(x * 0.01)
        h = h + self.attn(h, mask)
        if BUG == "tree":
            f = self.fc2(F.gelu(self.ffn_in(self.extra(self.norm1(h)))))
            f = GradIdentity.apply(f, 1.0)
            return h + f
        f = self.fc2(self.act(self.fc1(self.norm1(h))))
        f = GradIdentity.apply(f, 1.25 if self.bug == "grad" else 1.0)
        return h + self.drop(f)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        blocks = torch.nn.ModuleList([Block(""), Block(BUG)])
        if RENAMED:
            self.layers = blocks
        else:
            self.blocks = blocks

    def forward(self, x, mask):
        for blk in self.layers if RENAMED else self.blocks:
            x = blk(x, mask)
        return x


def model():
    torch.manual_seed(0)
    return Net()


def loss(output):
    w = np.random.default_rng(7).standard_normal(tuple(output.shape)).astype("float32")
    return (output * torch.from_numpy(w)).sum()


def inputs():
    return (torch.zeros(BATCH, SEQ, D), torch.ones(BATCH, 1, 1, SEQ, dtype=torch.bool))

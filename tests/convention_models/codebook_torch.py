"""Torch side of codebook_paddle.py: the codebook a frozen parameter ``[D, K]`` beside a buffer of
its running sums, handed channels-last by the caller, ``(quantized, commitment, indices)``
returned, ``beta`` applied by the loss function."""
import numpy as np
import torch
import torch.nn.functional as F
from _common import bug, image
from torch import nn

K, D, BETA = 6, 4, 0.25


class Quantize(nn.Module):
    def __init__(self):
        super().__init__()
        codes = torch.from_numpy(np.random.default_rng(2).standard_normal((D, K)).astype("float32"))
        self.embed = nn.Parameter(codes, requires_grad=False)
        self.register_buffer("embed_sum", codes.clone())
        self.decay = 0.8 if bug() == "torch_decay" else 0.9

    def forward(self, z):
        flat = z.reshape(-1, D)
        dist = ((flat.unsqueeze(1) - self.embed.t().unsqueeze(0)) ** 2).sum(-1)
        ind = dist.argmin(1)
        onehot = F.one_hot(ind, K).type(flat.dtype)
        q = F.embedding(ind.view(*z.shape[:-1]), self.embed.t())
        if self.training:
            with torch.no_grad():
                self.embed_sum.mul_(self.decay).add_(flat.t() @ onehot, alpha=1 - self.decay)
                self.embed.copy_(0.5 * self.embed + 0.5 * self.embed_sum)
        diff = (q.detach() - z).pow(2).mean()
        q = z + (q - z).detach()
        return q, diff, ind.view(*z.shape[:-1])


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Conv2d(3, D, 3, stride=2, padding=1)
        self.vq = Quantize()
        self.decoder = nn.Conv2d(D, 3, 1)

    def forward(self, x):
        q, diff, _ = self.vq(self.encoder(x).permute(0, 2, 3, 1))
        return self.decoder(q.permute(0, 3, 1, 2)), diff


def model():
    if bug() not in ("", "torch_decay"):
        raise ValueError(f"codebook torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    m = Net()
    m.train()
    return m


def inputs():
    return torch.from_numpy(image())


def loss(out):
    return (out[0] ** 2).mean() + BETA * out[1]


def optimizer(m):
    return torch.optim.SGD(m.parameters(), lr=0.1)

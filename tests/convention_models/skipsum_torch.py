"""The blocks of skipsum_paddle.py written the way another library writes them: the feed-forward
module adds the skip itself and returns ``h + mlp(h)``.

PADIFF_BUG: paddle_block_halved is the other side's (accepted, ignored)."""
import torch
from _common import D, bug, hidden
from torch import nn


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(D, 2 * D), nn.GELU(), nn.Linear(2 * D, D))

    def forward(self, h):
        return h + self.mlp(h)


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.ff = FeedForward()

    def forward(self, x):
        return self.ff(self.ln(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Layer() for _ in range(2)])
        self.out = nn.Linear(D, 3)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.out(x)


def model():
    if bug() not in ("", "paddle_block_halved"):
        raise ValueError(f"skipsum torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    net = Net().eval()
    g = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.copy_(1.0 + 0.2 * torch.randn(D, generator=g))
                m.bias.copy_(0.2 * torch.randn(D, generator=g))
    return net


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return out.pow(2).mean()

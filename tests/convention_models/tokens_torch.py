"""The stage of tokens_paddle.py returning ``(map, summary)``: its tokens put back into a
``[B, C, H, W]`` map, and their mean.

PADIFF_BUG: torch_tokens_view (this side: the map is turned into tokens with a plain reshape of
its NCHW memory instead of flatten + transpose, inline in the stage)."""
import torch
from _common import bug, image
from torch import nn

C = 12


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(C)
        self.mlp = nn.Sequential(nn.Linear(C, 2 * C), nn.GELU(), nn.Linear(2 * C, C))

    def forward(self, x):
        return x + self.mlp(self.ln(x))


class Stage(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Conv2d(3, C, 2, stride=2)
        self.ln = nn.LayerNorm(C)
        self.layer = Block()

    def forward(self, x):
        m = self.embed(x)
        b, c, h, w = m.shape
        if bug() == "torch_tokens_view":
            tokens = m.reshape(b, h * w, c)
        else:
            tokens = m.flatten(2).transpose(1, 2)
        tokens = self.layer(self.ln(tokens))
        return tokens.transpose(1, 2).reshape(b, c, h, w), tokens.mean(dim=1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stage = Stage()
        self.classifier = nn.Linear(C, 4)

    def forward(self, x):
        _, summary = self.stage(x)
        return self.classifier(summary)


def model():
    if bug() not in ("", "torch_tokens_view"):
        raise ValueError(f"tokens torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    net = Net().eval()
    g = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.copy_(1.0 + 0.2 * torch.randn(C, generator=g))
                m.bias.copy_(0.2 * torch.randn(C, generator=g))
    return net


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.pow(2).mean()

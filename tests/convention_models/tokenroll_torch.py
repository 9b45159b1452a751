"""Torch side of tokenroll_paddle.py: the class and distillation tokens go LAST, after the
patches, and the position table's rows follow that order.

PADIFF_BUG (this side): torch_pos_patches_only -> the position table is added to the patch
tokens only (the two tokens get none): a bug in the embedding, whatever the table's order."""
import torch
from _common import bug, image
from torch import nn

D, P = 16, 2


class Tokenizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Conv2d(3, D, P, stride=P)
        self.cls = nn.Parameter(torch.randn(1, 1, D) * 0.5)
        self.dist = nn.Parameter(torch.randn(1, 1, D) * 0.5)
        self.pos_embed = nn.Parameter(torch.randn(1, 18, D) * 0.5)

    def forward(self, x):
        x = self.proj(x).flatten(2).transpose(1, 2)  # [B, 16, D]
        b = x.shape[0]
        x = torch.cat([x, self.cls.expand(b, -1, -1), self.dist.expand(b, -1, -1)], dim=1)
        if bug() == "torch_pos_patches_only":
            return torch.cat([x[:, :16] + self.pos_embed[:, :16], x[:, 16:]], dim=1)
        return x + self.pos_embed


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.mha = nn.MultiheadAttention(D, 2, batch_first=True)
        self.up = nn.Linear(D, 2 * D)
        self.down = nn.Linear(2 * D, D)

    def forward(self, x):
        h = self.ln(x)
        x = x + self.mha(h, h, h, need_weights=False)[0]
        return x + self.down(nn.functional.gelu(self.up(x)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokenizer = Tokenizer()
        self.layer = Layer()
        self.classifier = nn.Linear(D, 5)

    def forward(self, x):
        x = self.layer(self.tokenizer(x))
        return self.classifier((x[:, -2] + x[:, -1]) / 2)


def model():
    if bug() not in ("", "paddle_ln_eps", "torch_pos_patches_only"):
        raise ValueError(f"tokenroll torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(image()),), {}


def loss(out):
    return out.mean()

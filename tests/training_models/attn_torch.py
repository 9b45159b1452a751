"""Self-attention with one packed q|k|v projection (as GPT-2 packs it), trained with AdamW:
torch side. The key bias gets a gradient that is zero in exact arithmetic (softmax ignores a
shift shared by all keys), so both frameworks' gradients are rounding noise that Adam scales
up to +-lr."""
import torch
from _common import LR, data, target
from torch import nn

D, H = 8, 2


class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D)
        self.out = nn.Linear(D, 4)

    def forward(self, x):  # x [b, D] -> a sequence of 4 tokens of D/... : [1, b, D]
        s = x.unsqueeze(0)
        q, k, v = self.qkv(s).split(D, dim=-1)
        heads = lambda t: t.reshape(1, -1, H, D // H).transpose(1, 2)  # noqa: E731
        q, k, v = heads(q), heads(k), heads(v)
        w = torch.softmax(q @ k.transpose(-1, -2) / (D // H) ** 0.5, dim=-1)
        o = (w @ v).transpose(1, 2).reshape(1, -1, D)
        return self.out(o)[0]


def model():
    torch.manual_seed(0)
    return Attn().train()


def inputs():
    return torch.from_numpy(data())


def loss(out):
    return ((out - torch.from_numpy(target())) ** 2).mean()


def optimizer(m):
    return torch.optim.AdamW(m.parameters(), lr=LR, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)

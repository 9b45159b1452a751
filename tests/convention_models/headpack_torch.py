"""Torch side of headpack_paddle.py: q|k|v packed in one Linear, the MLP's gate|up in another,
the output gate and projection Linears of their own, and an LM head of 2d rows.

PADIFF_BUG (this side): torch_gate_tanh -> block 0 squashes the output gate with tanh."""
import torch
import torch.nn.functional as F
from _common import V, bug, ids
from torch import nn

D = 16
BUGS = ("", "paddle_gate_sigmoid_missing", "torch_gate_tanh")


class Mixer(nn.Module):
    def __init__(self, index):
        super().__init__()
        self.index = index
        self.in_proj = nn.Linear(D, 3 * D)
        self.g_proj = nn.Linear(D, D)
        self.out_norm = nn.LayerNorm(D)
        self.o_proj = nn.Linear(D, D)

    def forward(self, h):
        q, k, v = self.in_proj(h).chunk(3, dim=-1)
        a = self.out_norm(torch.softmax(q @ k.transpose(1, 2) * D ** -0.5, dim=-1) @ v)
        squash = torch.tanh if (bug() == "torch_gate_tanh" and self.index == 0) else torch.sigmoid
        return self.o_proj(a * squash(self.g_proj(h)))


class FFN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc_in = nn.Linear(D, 4 * D)
        self.fc_out = nn.Linear(2 * D, D)

    def forward(self, x):
        gate, up = self.fc_in(x).chunk(2, dim=-1)
        return self.fc_out(F.silu(gate) * up)


class Layer(nn.Module):
    def __init__(self, index):
        super().__init__()
        self.norm1 = nn.LayerNorm(D)
        self.mixer = Mixer(index)
        self.norm2 = nn.LayerNorm(D)
        self.ffn = FFN()

    def forward(self, x):
        x = x + self.mixer(self.norm1(x))
        return x + self.ffn(self.norm2(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        self.blocks = nn.ModuleList([Layer(i) for i in range(2)])
        self.head = nn.Linear(D, 2 * D)

    def forward(self, tok):
        x = self.tok(tok)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def model():
    if bug() not in BUGS:
        raise ValueError(f"headpack torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(ids()),), {}


def loss(out):
    return out.pow(2).mean()

"""Torch side of readout_paddle.py: the first head as one Linear per block state with the scores
added, the second as one Linear over the states concatenated.

PADIFF_BUG (this side): torch_last_block_sigmoid -> the last block squashes with a sigmoid, not tanh."""
import torch
from _common import bug, hidden
from torch import nn

D, N = 16, 3


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(D, D) for _ in range(N)])
        self.per_layer = nn.ModuleList([nn.Linear(D, 4) for _ in range(N)])
        self.joint = nn.Linear(N * D, 3)

    def forward(self, x):
        states = []
        for k, lin in enumerate(self.layers):
            act = torch.sigmoid if bug() == "torch_last_block_sigmoid" and k == N - 1 else torch.tanh
            x = act(lin(x))
            states.append(x)
        logits = sum(head(h) for head, h in zip(self.per_layer, states))
        return logits, self.joint(torch.cat(states, dim=-1))


def model():
    if bug() not in ("", "torch_last_block_sigmoid"):
        raise ValueError(f"readout torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    return (torch.from_numpy(hidden()),), {}


def loss(out):
    return out[0].mean() + out[1].pow(2).mean()

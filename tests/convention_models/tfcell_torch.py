"""The torch side of tfcell_paddle.py: a grouped 1x1 convolution as the feature gate, and one
``nn.LSTM`` (gates i, f, g, o) over the whole sequence.

PADIFF_BUG (this side): torch_last_state -> the head reads the LSTM's output with its last step
replaced by the cell state (``c_n``) instead of the hidden state; paddle_forget_bias (the other
side's) is accepted, ignored."""
import numpy as np
import torch
from _common import B, bug
from torch import nn

C, G, H, T = 8, 2, 6, 5


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(C, C)
        self.mix = nn.Conv1d(C, C, 1, groups=G)
        self.lstm = nn.LSTM(C, H, batch_first=True)

    def forward(self, x):
        y = torch.tanh(self.mix(self.proj(x).transpose(1, 2)).transpose(1, 2))
        seq, (_, c) = self.lstm(y)
        if bug() == "torch_last_state":
            seq = torch.cat([seq[:, :-1], c.transpose(0, 1)], dim=1)
        return seq


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.out = nn.Linear(H, 3)

    def forward(self, x):
        return self.out(self.encoder(x))


def model():
    if bug() not in ("", "paddle_forget_bias", "torch_last_state"):
        raise ValueError(f"tfcell torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def features() -> np.ndarray:
    return np.random.default_rng(2).standard_normal((B, T, C)).astype("float32")


def inputs():
    return (torch.from_numpy(features()),), {}


def loss(out):
    return out.pow(2).mean()

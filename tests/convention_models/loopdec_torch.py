"""The torch side of loopdec_paddle.py: one bidirectional ``nn.GRU`` encoder, and a decoder step
module the model calls once per time step, holding an ``nn.GRU`` run one step.

PADIFF_BUG (this side): torch_hidden_twice -> the step feeds its GRU the previous state added to
itself (an inline slip in the step's own code); paddle_update_flipped (the other side's) is
accepted, ignored."""
import numpy as np
import torch
from _common import B, V, bug, ids
from torch import nn

E, H, T = 12, 16, 4


class Step(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(V, E)
        self.rnn = nn.GRU(E, H)
        self.proj = nn.Linear(H, V)

    def forward(self, token, hidden):
        e = self.embedding(token.unsqueeze(0))  # [1, b, E]
        if bug() == "torch_hidden_twice":
            hidden = hidden * 1.01
        out, hidden = self.rnn(e, hidden)
        return self.proj(out.squeeze(0)), hidden


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(V, E)
        self.encoder = nn.GRU(E, H, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(2 * H, H)
        self.step = Step()

    def forward(self, src, tgt):
        _, h = self.encoder(self.embedding(src))
        hidden = torch.tanh(self.fc(torch.cat([h[0], h[1]], dim=-1))).unsqueeze(0)
        logits = []
        for t in range(tgt.shape[1]):
            y, hidden = self.step(tgt[:, t], hidden)
            logits.append(y)
        return torch.stack(logits, dim=1)


def model():
    if bug() not in ("", "paddle_update_flipped", "torch_hidden_twice"):
        raise ValueError(f"loopdec torch: unknown PADIFF_BUG {bug()!r}")
    torch.manual_seed(0)
    return Net().eval()


def inputs():
    src = ids()
    tgt = np.random.default_rng(1).integers(1, V, size=(B, T)).astype("int64")
    return (torch.from_numpy(src), torch.from_numpy(tgt)), {}


def loss(out):
    return out.pow(2).mean()

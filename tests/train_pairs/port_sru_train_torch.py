"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_sru_train_paddle.py) after the official `sru` package's layout: each SRUCell packs
its three projections in ONE Linear `weight` (16 -> 48, rows x_tilde | forget | reset), the two
peepholes in `weight_c` [2 * 16] and the two gate biases in `bias` [2 * 16], and owns the dropout
on its output (p = dropout for every layer but the last, 0 for the last, as the sru package does).
Layers are named attributes (layer1, layer2), the word_language_model way (drop, encoder, ...,
decoder).

    drop Dropout(0.1) (used twice: on the embeddings and before the decoder), encoder Embedding(50, 16),
    layer1 = SRUCell(16, dropout=0.2), layer2 = SRUCell(16, dropout=0.0), decoder Linear(16, 50)
    SRUCell: u = weight(x).chunk(3, -1); v_f, v_r = weight_c.chunk(2); b_f, b_r = bias.chunk(2);
        loop over time (c_0 = 0): f = sigmoid(u_f + v_f c + b_f), r = sigmoid(u_r + v_r c + b_r),
        c = f c + (1 - f) u_x, h = r c + (1 - r) x; output dropout(stack(h))
Dropout calls per forward: drop (0.1), layer1.dropout (0.2), layer2.dropout (0.0), drop (0.1): the
calls with p > 0 in the paddle order and shapes.

Loss: next-token cross-entropy. Optimizer: torch.optim.SGD(lr 0.5, momentum 0.9) (buf = g at the
first step, then 0.9 buf + g; p -= lr buf), clip_grad_norm_(parameters, 0.25) (word_language_model's --clip 0.25) in clip_grad().

PADIFF_BUG (this side only):
  clip_value -> clip_grad_value_(parameters, 0.25): every gradient element clipped to [-0.25, 0.25]
              instead of the global norm clipped to 0.25
  dampening  -> SGD(..., momentum=0.9, dampening=0.9) ("momentum as an EMA": buf = 0.9 buf + 0.1 g);
              torch's first step sets buf = g whatever the dampening, so update 1 agrees
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"clip_value", "dampening"} | {"paddle_rnn_dropout"}  # the paddle side's, ignored here
NTOKEN, NHID, NLAYERS, DROPOUT, LAYER_DROPOUT = 50, 16, 2, 0.1, 0.2
LR, MOMENTUM, CLIP = 0.5, 0.9, 0.25

IDS = np.random.default_rng(41).integers(0, NTOKEN, (2, 8)).astype("int64")


class SRUCell(nn.Module):
    def __init__(self, n_in, n_out, dropout=0.0):
        super().__init__()
        self.n_out = n_out
        self.weight = nn.Linear(n_in, 3 * n_out, bias=False)
        self.weight_c = nn.Parameter(torch.zeros(2 * n_out))
        self.bias = nn.Parameter(torch.zeros(2 * n_out))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        u_x, u_f, u_r = self.weight(x).chunk(3, dim=-1)
        v_f, v_r = self.weight_c.chunk(2)
        b_f, b_r = self.bias.chunk(2)
        c = x.new_zeros(x.size(0), self.n_out)
        out = []
        for t in range(x.size(1)):
            f = torch.sigmoid(u_f[:, t] + v_f * c + b_f)
            r = torch.sigmoid(u_r[:, t] + v_r * c + b_r)
            c = f * c + (1 - f) * u_x[:, t]
            out.append(r * c + (1 - r) * x[:, t])
        return self.dropout(torch.stack(out, dim=1))


class RNNModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(DROPOUT)
        self.encoder = nn.Embedding(NTOKEN, NHID)
        self.layer1 = SRUCell(NHID, NHID, dropout=LAYER_DROPOUT)
        self.layer2 = SRUCell(NHID, NHID, dropout=0.0)  # no dropout after the last layer
        self.decoder = nn.Linear(NHID, NTOKEN)

    def forward(self, input):
        emb = self.drop(self.encoder(input))
        output = self.layer2(self.layer1(emb))
        return self.decoder(self.drop(output))


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = RNNModel()
    m.train()
    return m


def inputs():
    return (torch.from_numpy(IDS),), {}


def loss(output):
    ids = torch.from_numpy(IDS)
    return F.cross_entropy(output[:, :-1].reshape(-1, NTOKEN), ids[:, 1:].reshape(-1))


def optimizer(model):
    if bug(BUGS) == "dampening":
        return torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM, dampening=MOMENTUM)
    return torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)


def clip_grad(model):
    if bug(BUGS) == "clip_value":
        torch.nn.utils.clip_grad_value_(model.parameters(), CLIP)
    else:
        torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)

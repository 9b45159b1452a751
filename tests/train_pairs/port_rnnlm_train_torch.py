"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_rnnlm_train_paddle.py) the AWD-LSTM way (salesforce/awd-lstm-lm's RNNModel):

    encoder = nn.Embedding(50, 32); lockdrop_i (LockedDropout 0.2);
    rnns = ModuleList of TWO single-layer nn.LSTM(32, 32, batch_first=True) (stacked by hand, as
    AWD-LSTM does, instead of one 2-layer LSTM; weights weight_ih_l0 ... in each);
    lockdrop_o (LockedDropout 0.3); decoder = nn.Linear(32, 50) with
    decoder.weight = encoder.weight (TIED: named_parameters lists it once, as encoder.weight)
LockedDropout: mask = F.dropout(x.new_ones(B, 1, H), p) (torch's functional dropout), x * mask:
2 calls with p > 0 per forward. nn.LSTM gate order (i, f, g, o) and its two biases (b_ih, b_hh)
are paddle's too, so the weights copy as they are. Zero initial state every step.

Data: as the paddle side (stream of 4 x 25 Zipf-distributed ids from default_rng(24); step k:
window 8k .. 8k + 8). Init: AWD's encoder U(-0.1, 0.1), decoder bias 0 (a run copies paddle's).
Optimizer: SGD(lr 1.0, momentum 0.9) with StepLR(step_size 2, gamma 0.5) (stepped once after every
update); clip_grad_norm_(parameters, 0.25) in clip_grad(). optimizer() returns (opt, scheduler).

PADIFF_BUG (this side only):
  steplr_step_size -> StepLR(step_size=1): the decay every update instead of every 2 (lr 1.0, 0.5,
              0.25 against 1.0, 1.0, 0.5): update 1 agrees, update 2 differs
"""
import numpy as np
import torch
import torch.nn.functional as F
from _train_common import bug
from torch import nn

BUGS = {"steplr_step_size"} | {"paddle_swap_dropouts", "paddle_clip_by_value"}  # paddle's, ignored here
NTOKEN, NINP, NHID, NLAYERS = 50, 32, 32, 2
DROPOUTI, DROPOUT = 0.2, 0.3
BSZ, BPTT = 4, 8
LR, MOMENTUM, CLIP = 1.0, 0.9, 0.25
_ZIPF = 1.0 / np.arange(1, NTOKEN + 1)  # word frequencies ~ 1 / rank
STREAM = np.random.default_rng(24).choice(NTOKEN, (BSZ, BPTT * 3 + 1), p=_ZIPF / _ZIPF.sum()).astype("int64")
_TARGETS = [None]


class LockedDropout(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = dropout

    def forward(self, x):
        if not self.training or not self.dropout:
            return x
        mask = F.dropout(x.new_ones(x.size(0), 1, x.size(2)), p=self.dropout, training=True)
        return mask * x


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.3, dropouti=0.2):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.lockdrop_i = LockedDropout(dropouti)
        self.rnns = nn.ModuleList([nn.LSTM(ninp if k == 0 else nhid, nhid, 1, batch_first=True)
                                   for k in range(nlayers)])
        self.lockdrop_o = LockedDropout(dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.decoder.weight = self.encoder.weight  # weight tying
        self.encoder.weight.data.uniform_(-0.1, 0.1)
        self.decoder.bias.data.zero_()

    def forward(self, input):
        raw_output = self.lockdrop_i(self.encoder(input))
        for rnn in self.rnns:
            raw_output, _ = rnn(raw_output)
        return self.decoder(self.lockdrop_o(raw_output))


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = RNNModel(NTOKEN, NINP, NHID, NLAYERS, dropout=DROPOUT, dropouti=DROPOUTI)
    m.train()
    return m


def inputs(step=0):
    chunk = torch.from_numpy(STREAM[:, step * BPTT: step * BPTT + BPTT + 1])
    _TARGETS[0] = chunk[:, 1:]
    return (chunk[:, :-1],), {}


def loss(output):
    return F.cross_entropy(output.reshape(-1, NTOKEN), _TARGETS[0].reshape(-1))


def optimizer(model):
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1 if bug(BUGS) == "steplr_step_size" else 2, gamma=0.5)
    return opt, sched


def clip_grad(model):
    torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)

"""Hand-written port in TRAINING mode, torch side (re-implemented by "person B" from the paddle
original, port_ctc_train_paddle.py) the ESPnet / torchaudio way:

    subsample = nn.Sequential(Conv1d(8, 16, 3, stride=2, padding=1), ReLU(), Conv1d(16, 16, 3, stride=2,
                padding=1), ReLU()) (subsample.0 .. subsample.3) on channels-first [B, C, T]: the
                features are transposed in and out
    subsample_drop = nn.Dropout(0.1) (on the batch-major [B, T, C] output, after the transpose back)
    encoder = nn.GRU(16, 16, batch_first=True, bidirectional=True): the built-in bidirectional GRU
              (ONE module call; weight_ih_l0 .. bias_hh_l0_reverse, gate order r | z | n as paddle's
              GRUCell)
    dropout = nn.Dropout(0.1), ctc_lo = nn.Linear(32, 10) (weight [out, in]), then .log_softmax(-1)
Dropout 0.1: 2 calls per forward, same order and shapes as the paddle side.

Loss: nn.CTCLoss(blank=0, reduction="mean", zero_infinity=False) on log_probs.transpose(0, 1)
(time-major [T, B, V]), the targets CONCATENATED into one 1-D int64 tensor (torch's other accepted
layout; paddle pads them to [B, Lmax] int32), input lengths 10, 9, 8, 7, target lengths 4, 3, 3, 2;
"mean": each loss divided by its target length, then the batch mean (= paddle's "mean").
Optimizer: SGD(lr 0.2, momentum 0.9) (dampening 0, no nesterov) with clip_grad_norm_(parameters, 1.0)
in clip_grad() (one global norm over all gradients).

PADIFF_BUG (this side only):
  blank_last     -> nn.CTCLoss(blank=vocab_size - 1): the blank taken as the LAST class (TensorFlow's
                    ctc_loss convention) while the model and the data use 0
  clip_per_param -> clip_grad_norm_ called per parameter (for p in parameters: clip_grad_norm_(p, 1.0)):
                    each tensor clipped to norm 1 on its own instead of one global norm
"""
import numpy as np
import torch
from _train_common import bug
from torch import nn

BUGS = {"blank_last", "clip_per_param"} | {"paddle_drop_default"}  # the paddle side's, ignored here
idim, adim, eunits, odim = 8, 16, 16, 10
dropout_rate = 0.1
lr, momentum, grad_clip = 0.2, 0.9, 1.0
ilens = torch.tensor([40, 36, 32, 28])
olens = torch.tensor([4, 3, 3, 2])


def _data():  # the paddle spec's batch, drawn the same way
    rng = np.random.default_rng(37)
    xs = rng.standard_normal((4, 40, idim)).astype("float32")
    for b, n in enumerate(ilens.tolist()):
        xs[b, n:] = 0.0
    ys = [torch.from_numpy(rng.integers(1, odim - 1, n)) for n in olens.tolist()]
    return torch.from_numpy(xs), torch.cat(ys)


xs_pad, ys_concat = _data()


class SpeechCTC(nn.Module):
    def __init__(self):
        super().__init__()
        self.subsample = nn.Sequential(
            nn.Conv1d(idim, adim, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv1d(adim, adim, 3, stride=2, padding=1), nn.ReLU())
        self.subsample_drop = nn.Dropout(dropout_rate)
        self.encoder = nn.GRU(adim, eunits, batch_first=True, bidirectional=True)
        self.dropout = nn.Dropout(dropout_rate)
        self.ctc_lo = nn.Linear(2 * eunits, odim)

    @staticmethod
    def output_lengths(lens):
        for _ in range(2):
            lens = torch.div(lens - 1, 2, rounding_mode="floor") + 1
        return lens

    def forward(self, xs):
        x = self.subsample(xs.transpose(1, 2)).transpose(1, 2)
        x, _ = self.encoder(self.subsample_drop(x))
        return self.ctc_lo(self.dropout(x)).log_softmax(dim=-1)


def model():
    bug(BUGS)
    torch.manual_seed(0)
    m = SpeechCTC()
    m.train()
    return m


def inputs():
    return (xs_pad,), {}


def loss(output):
    blank = odim - 1 if bug(BUGS) == "blank_last" else 0
    ctc = nn.CTCLoss(blank=blank, reduction="mean", zero_infinity=False)
    return ctc(output.transpose(0, 1), ys_concat, SpeechCTC.output_lengths(ilens), olens)


def optimizer(model):
    return torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)


def clip_grad(model):
    if bug(BUGS) == "clip_per_param":
        for p in model.parameters():
            torch.nn.utils.clip_grad_norm_(p, grad_clip)
    else:
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)

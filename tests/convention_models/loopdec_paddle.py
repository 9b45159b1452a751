"""A GRU encoder-decoder two correct ports draw differently, paddle side (loopdec_torch.py is the
other):

* the bidirectional encoder as two one-direction ``nn.GRU`` layers named ``fwd`` and ``bwd``
  (the backward one runs on the reversed sequence), against one ``nn.GRU(direction=
  "bidirectional")`` whose backward tensors carry the ``_reverse`` suffix;
* the decoder as ONE module called once that embeds every target token at once and loops over
  the time steps itself, with a hand-written GRU cell (input and hidden projections as two
  ``Linear``), against a decoder step module the model calls once per time step, holding an
  ``nn.GRU`` run one step (it returns ``[1, b, h]`` twice where the cell returns ``[b, h]``).

PADIFF_BUG (this side): paddle_update_flipped -> the cell mixes new and old state the other way
round (h' = z * n + (1 - z) * h); torch_hidden_twice (the other side's) is accepted, ignored."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import B, S, V, bug, ids
from paddle import nn

E, H, T = 12, 16, 4


class Cell(nn.Layer):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(E, 3 * H)
        self.hid = nn.Linear(H, 3 * H)

    def forward(self, x, h):
        gi, gh = self.inp(x), self.hid(h)
        r = F.sigmoid(gi[:, :H] + gh[:, :H])
        z = F.sigmoid(gi[:, H:2 * H] + gh[:, H:2 * H])
        n = paddle.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
        if bug() == "paddle_update_flipped":
            return z * n + (1 - z) * h
        return (1 - z) * n + z * h


class Decoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, E)
        self.cell = Cell()
        self.out = nn.Linear(H, V)

    def forward(self, tgt, h):
        y = self.embed(tgt)  # [b, T, E]: every step's tokens at once
        logits = []
        for t in range(tgt.shape[1]):
            h = self.cell(y[:, t], h)
            logits.append(self.out(h))
        return paddle.stack(logits, axis=1)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.src_embed = nn.Embedding(V, E)
        self.fwd = nn.GRU(E, H)
        self.bwd = nn.GRU(E, H)
        self.bridge = nn.Linear(2 * H, H)
        self.decoder = Decoder()

    def forward(self, src, tgt):
        x = self.src_embed(src)
        _, hf = self.fwd(x)
        _, hb = self.bwd(paddle.flip(x, axis=[1]))
        h = paddle.tanh(self.bridge(paddle.concat([hf[0], hb[0]], axis=-1)))
        return self.decoder(tgt, h)


def model():
    if bug() not in ("", "paddle_update_flipped", "torch_hidden_twice"):
        raise ValueError(f"loopdec paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    src = ids()
    tgt = np.random.default_rng(1).integers(1, V, size=(B, T)).astype("int64")
    assert src.shape == (B, S)
    return (paddle.to_tensor(src), paddle.to_tensor(tgt)), {}


def loss(out):
    return out.pow(2).mean()

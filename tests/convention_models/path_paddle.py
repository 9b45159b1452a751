"""A path scorer whose arguments and matrix each port orders its own way, paddle side
(path_torch.py is the other):

* ``scorer(emissions, lengths, tags)`` against torch's ``scorer(emissions, tags, lengths)``:
  positional arguments in another order, told apart by their dtypes and shapes;
* the transition matrix stored ``[from, to]`` here and ``[to, from]`` in torch's port: one
  square shape either way; the recorded values choose the transposed pairing.

PADIFF_BUG (this side): paddle_path_no_mask -> steps past a sequence's length are scored too."""
import numpy as np
import paddle
from _common import B, S, bug
from paddle import nn

TAGS, FEAT = 4, 6


class Scorer(nn.Layer):
    def __init__(self):
        super().__init__()
        self.trans = self.create_parameter([TAGS, TAGS], default_initializer=nn.initializer.Normal(0.0, 1.0))

    def forward(self, emissions, lengths, tags):
        steps = paddle.arange(S).unsqueeze(0)
        mask = paddle.ones([B, S]) if bug() == "paddle_path_no_mask" else (steps < lengths.unsqueeze(1)).astype("float32")
        emit = paddle.take_along_axis(emissions, tags.unsqueeze(-1), axis=2).squeeze(-1)
        moves = self.trans[tags[:, :-1], tags[:, 1:]]
        return (emit * mask).sum(1) + (moves * mask[:, 1:]).sum(1)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.emit = nn.Linear(FEAT, TAGS)
        self.scorer = Scorer()

    def forward(self, x, lengths, tags):
        return self.scorer(self.emit(x), lengths, tags)


def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((B, S, FEAT)).astype("float32")
    return x, np.array([S, S - 3], "int64"), rng.integers(0, TAGS, size=(B, S)).astype("int64")


def model():
    paddle.seed(0)
    return Net().eval()


def inputs():
    return tuple(paddle.to_tensor(a) for a in data()), {}


def loss(out):
    return out.mean()

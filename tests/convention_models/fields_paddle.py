"""Tables and vectors one library keeps apart and the other packs, paddle side (fields_torch.py
is the other):

* three lookup tables, one per input field (``fields.tables.0`` ... ``[5, D]``, ``[7, D]``,
  ``[4, D]``), against one ``[16, D]`` table read at per-field row offsets (a recommender's
  embedding);
* a gated cell keeping two projections ``w_a``, ``w_b`` and two vectors ``v_a``, ``v_b``
  ``[D]`` of its own, against a cell whose one projection and one ``weight_c`` ``[2D]`` hold
  both (an SRU cell's layout): the projections pack, so the two cells are one computation and
  their own vectors are the packed vector's parts, in order.

PADIFF_BUG (this side): paddle_cell_sigmoid -> the cell's second gate a sigmoid, not a tanh."""
import numpy as np
import paddle
from _common import B, D, bug
from paddle import nn

SIZES = (5, 7, 4)


class Fields(nn.Layer):
    def __init__(self):
        super().__init__()
        self.tables = nn.LayerList([nn.Embedding(n, D) for n in SIZES])

    def forward(self, ids):
        return paddle.stack([t(ids[:, i]) for i, t in enumerate(self.tables)], axis=1)


class Cell(nn.Layer):
    def __init__(self):
        super().__init__()
        self.w_a = nn.Linear(D, D, bias_attr=False)
        self.w_b = nn.Linear(D, D, bias_attr=False)
        self.v_a = self.create_parameter([D], default_initializer=nn.initializer.Normal(0.0, 0.5))
        self.v_b = self.create_parameter([D], default_initializer=nn.initializer.Normal(0.0, 0.5))

    def forward(self, x):
        second = paddle.nn.functional.sigmoid if bug() == "paddle_cell_sigmoid" else paddle.tanh
        return paddle.nn.functional.sigmoid(self.w_a(x) + self.v_a) * second(self.w_b(x) + self.v_b)


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fields = Fields()
        self.cell = Cell()
        self.head = nn.Linear(D, 1)

    def forward(self, ids):
        return self.head(self.cell(self.fields(ids))).squeeze(-1)


def model():
    paddle.seed(0)
    return Net().eval()


def field_ids() -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.stack([rng.integers(0, n, size=B * 2) for n in SIZES], axis=1).astype("int64")


def inputs():
    return (paddle.to_tensor(field_ids()),), {}


def loss(out):
    return (out * out).mean()

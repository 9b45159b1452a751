"""Two conventions only the values choose, paddle side (tfcell_torch.py is the other):

* a feature gate of the port's own holding ``[groups, in, out]`` per layer (square groups),
  against torch's grouped 1x1 convolution (as in grouplin_*);
* an LSTM the port writes itself: a cell with an input and a recurrent Linear whose columns hold
  the gates in TensorFlow's order (i, j, f, o), called once per time step inside a module that
  loops, against torch's ``nn.LSTM`` (i, f, g, o) run over the whole sequence in one call.

The gate comes first: ``run`` settles its axis order, then the LSTM's gate order.

PADIFF_BUG (this side): paddle_forget_bias -> the cell adds 1 to the forget gate's
pre-activation (a Keras default torch lacks); torch_last_state (the other side's) is accepted,
ignored."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import B, bug
from paddle import nn

C, G, H, T = 8, 2, 6, 5


class GroupLinear(nn.Layer):
    def __init__(self):
        super().__init__()
        self.weight = self.create_parameter([G, C // G, C // G])
        self.bias = self.create_parameter([G, C // G], is_bias=True)

    def forward(self, x):
        y = paddle.einsum("btgi,gio->btgo", x.reshape([x.shape[0], x.shape[1], G, -1]), self.weight)
        return (y + self.bias).reshape(x.shape)


class Cell(nn.Layer):
    def __init__(self):
        super().__init__()
        self.x2g = nn.Linear(C, 4 * H)
        self.h2g = nn.Linear(H, 4 * H)

    def forward(self, x, h, c):
        i, j, f, o = paddle.split(self.x2g(x) + self.h2g(h), 4, axis=-1)
        if bug() == "paddle_forget_bias":
            f = f + 1.0
        c = F.sigmoid(f) * c + F.sigmoid(i) * paddle.tanh(j)
        return F.sigmoid(o) * paddle.tanh(c), c


class Loop(nn.Layer):
    def __init__(self):
        super().__init__()
        self.cell = Cell()

    def forward(self, x):
        h = paddle.zeros([x.shape[0], H])
        c = paddle.zeros([x.shape[0], H])
        outs = []
        for t in range(x.shape[1]):
            h, c = self.cell(x[:, t], h, c)
            outs.append(h)
        return paddle.stack(outs, axis=1)


class Encoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(C, C)
        self.gate = GroupLinear()
        self.rnn = Loop()

    def forward(self, x):
        return self.rnn(paddle.tanh(self.gate(self.inp(x))))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.head = nn.Linear(H, 3)

    def forward(self, x):
        return self.head(self.encoder(x))


def model():
    if bug() not in ("", "paddle_forget_bias", "torch_last_state"):
        raise ValueError(f"tfcell paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(4)
    enc = net.encoder
    for p in (enc.gate.weight, enc.gate.bias, enc.rnn.cell.x2g.bias, enc.rnn.cell.h2g.bias):
        p.set_value(rng.normal(0.0, 0.7, p.shape).astype("float32"))
    return net.eval()


def features() -> np.ndarray:
    return np.random.default_rng(2).standard_normal((B, T, C)).astype("float32")


def inputs():
    return (paddle.to_tensor(features()),), {}


def loss(out):
    return out.pow(2).mean()

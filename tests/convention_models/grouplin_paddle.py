"""A block-diagonal Linear of the port's own, paddle side (grouplin_torch.py is the other): a
gate's two layers hold ``[groups, in, out]`` each (every group's matrix ``x_g @ W_g``, as wide
in as out), where torch uses grouped 1x1 convolutions ``[groups * out, in, 1, 1]``. With square
groups, two axis orders make one the other; only the values say which.

PADIFF_BUG (this side): paddle_gate_bias_twice -> the gate adds its second layer's bias once more;
torch_groups_merged (the other side's) is accepted, ignored."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug, image
from paddle import nn

C, G = 8, 2


class GroupLinear(nn.Layer):
    def __init__(self, groups, width):
        super().__init__()
        self.groups = groups
        self.weight = self.create_parameter([groups, width // groups, width // groups])
        self.bias = self.create_parameter([groups, width // groups], is_bias=True)

    def forward(self, x):
        b = x.shape[0]
        y = paddle.einsum("bgi,gio->bgo", x.reshape([b, self.groups, -1]), self.weight)
        return (y + self.bias).reshape([b, -1])


class Gate(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = GroupLinear(G, C)
        self.fc2 = GroupLinear(G, C)

    def forward(self, x):
        z = x.mean(axis=[2, 3])
        s = self.fc2(F.relu(self.fc1(z)))
        if bug() == "paddle_gate_bias_twice":
            s = s + self.fc2.bias.reshape([-1])
        return x * F.sigmoid(s)[:, :, None, None]


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2D(3, C, 3, padding=1)
        self.gate = Gate()
        self.head = nn.Linear(C, 4)

    def forward(self, x):
        return self.head(self.gate(self.stem(x)).mean(axis=[2, 3]))


def model():
    if bug() not in ("", "paddle_gate_bias_twice", "torch_groups_merged"):
        raise ValueError(f"grouplin paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(3)
    for layer in (net.gate.fc1, net.gate.fc2):  # weights far from symmetric: a transposed group differs
        layer.weight.set_value(rng.normal(0.0, 0.8, layer.weight.shape).astype("float32"))
        layer.bias.set_value(rng.normal(0.0, 0.3, layer.bias.shape).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.pow(2).mean()

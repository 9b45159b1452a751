"""A learned position table at the model's root, added where the two ports hold the features in
other layouts: here the patch map is flattened to tokens first and the table is ``[1, h*w, c]``;
the torch side (maptable_torch.py) adds its ``[1, c, h, w]`` table to the map and flattens after.
With as many channels as rows and columns, a reshape in the order the elements stand and one
that moves the channels first both fit the shapes; only the values say which (the root's own
code adds the table: no module around it to confirm it but the root).

PADIFF_BUG: paddle_mlp_relu (this side: the MLP's activation is a ReLU, not a GELU)."""
import paddle
import paddle.nn.functional as F
from _common import bug, image
from paddle import nn

C, HW = 4, 16


class Mlp(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(C, 2 * C)
        self.fc2 = nn.Linear(2 * C, C)

    def forward(self, x):
        act = F.relu if bug() == "paddle_mlp_relu" else F.gelu
        return self.fc2(act(self.fc1(x)))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2D(3, C, 2, stride=2)
        self.pos_embed = self.create_parameter([1, HW, C], default_initializer=nn.initializer.Normal(0.0, 1.0))
        self.norm = nn.LayerNorm(C)
        self.mlp = Mlp()
        self.head = nn.Linear(C, 5)

    def forward(self, x):
        t = self.patch(x).flatten(2).transpose([0, 2, 1]) + self.pos_embed
        t = t + self.mlp(self.norm(t))
        return self.head(t.mean(axis=1))


def model():
    if bug() not in ("", "paddle_mlp_relu"):
        raise ValueError(f"maptable paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(image()),), {}


def loss(out):
    return out.mean()

"""A token's embedding and a row of numeric features mixed by one layer: here one Linear per
input, the numeric one (with the bias) registered first and called first, their outputs added;
the torch side (joinorder_torch.py) feeds one Linear ``[embedding, features]`` concatenated,
the embedding first. Registration and call order say numeric | token; only the values say
which columns of the torch matrix read which input.

PADIFF_BUG: paddle_features_doubled (this side: the features are doubled before their Linear,
inline in the block), torch_act_gelu (the torch side's)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import V, bug, ids
from paddle import nn

E, F_IN, H = 4, 6, 12
BUGS = ("", "paddle_features_doubled", "torch_act_gelu")


def features() -> np.ndarray:
    return np.random.default_rng(1).standard_normal((16, F_IN)).astype("float32")


class Mix(nn.Layer):
    def __init__(self):
        super().__init__()
        self.num_fc = nn.Linear(F_IN, H)
        self.tok_fc = nn.Linear(E, H, bias_attr=False)
        self.norm = nn.LayerNorm(H)

    def forward(self, x_num, e):
        if bug() == "paddle_features_doubled":
            x_num = x_num * 2.0
        return F.relu(self.norm(self.num_fc(x_num) + self.tok_fc(e)))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.mix = Mix()
        self.table = nn.Embedding(V, E)
        self.out = nn.Linear(H, 1)

    def forward(self, x_num, tok):
        return self.out(self.mix(x_num, self.table(tok)))


def model():
    if bug() not in BUGS:
        raise ValueError(f"joinorder paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    net = Net()
    rng = np.random.default_rng(3)
    net.mix.norm.weight.set_value(rng.uniform(0.5, 1.5, H).astype("float32"))
    net.mix.norm.bias.set_value(rng.normal(0.0, 0.3, H).astype("float32"))
    return net.eval()


def inputs():
    return (paddle.to_tensor(features()), paddle.to_tensor(ids().reshape(-1)[:16])), {}


def loss(out):
    return out.pow(2).mean()

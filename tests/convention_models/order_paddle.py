"""A click-through model over three fields, paddle side: the fields are embedded in the order
[user, item, hour] and stacked, one attention layer over the fields (no positions), a norm, a
mean over the fields and a head. Twin: order_torch.py (the fields stacked [hour, user, item]).
Self-attention, the norm and the MLP treat each field alike, so every value between the stack and
the mean holds the same fields in the other order on each side; the mean brings them together.
PADIFF_BUG=torch_norm_eps: on the torch side (order_torch.py)."""
import numpy as np
import paddle
from _common import B, bug
from paddle import nn

D, USERS, ITEMS = 16, 20, 30


class Fields(nn.Layer):
    def __init__(self):
        super().__init__()
        self.user = nn.Embedding(USERS, D)
        self.item = nn.Embedding(ITEMS, D)
        self.hour = nn.Linear(1, D)

    def forward(self, user, item, hour):
        return paddle.stack([self.user(user), self.item(item), self.hour(hour)], axis=1)  # [B, 3, D]


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fields = Fields()
        self.attn = nn.MultiHeadAttention(D, 2)
        self.norm = nn.LayerNorm(D)
        self.mlp = nn.Sequential(nn.Linear(D, 2 * D), nn.ReLU(), nn.Linear(2 * D, D))
        self.head = nn.Linear(D, 1)

    def forward(self, user, item, hour):
        x = self.fields(user, item, hour)
        x = self.norm(x + self.attn(x, x, x))
        x = x + self.mlp(x)
        return self.head(x.mean(axis=1))


def model():
    if bug() not in ("", "torch_norm_eps"):
        raise ValueError(f"order paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    rng = np.random.default_rng(0)
    user = paddle.to_tensor(rng.integers(0, USERS, B).astype("int64"))
    item = paddle.to_tensor(rng.integers(0, ITEMS, B).astype("int64"))
    hour = paddle.to_tensor(rng.standard_normal((B, 1)).astype("float32"))
    return (user, item, hour), {}


def loss(out):
    return out.pow(2).mean()

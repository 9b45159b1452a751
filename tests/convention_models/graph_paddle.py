"""A graph encoder with two heads, paddle side: parts held and passed differently from the torch
side (graph_torch.py), all of it correct:

* the normalised adjacency is an input of ``forward`` here, a buffer of the model there;
* each graph layer holds its own ``weight`` [in, out] and ``bias`` here; there, a Linear inside
  the layer holds the weight and the layer its bias;
* two heads ``to_mu`` and ``to_logvar`` (registered logvar first, called mu first) against one
  packed head whose rows are mu | logvar.

PADIFF_BUG (this side): paddle_self_loop -> layer 1 adds its input again (a residual the torch
side does not have)."""
import numpy as np
import paddle
import paddle.nn.functional as F
from _common import bug
from paddle import nn

N, F_IN, H, H2, Z = 6, 5, 8, 7, 3


def adjacency() -> np.ndarray:
    a = np.zeros((N, N), "float32")
    for i in range(N):
        a[i, (i + 1) % N] = a[(i + 1) % N, i] = 1.0
    a += np.eye(N, dtype="float32")
    d = 1.0 / np.sqrt(a.sum(1))
    return (a * d[:, None] * d[None, :]).astype("float32")


class GraphLayer(nn.Layer):
    def __init__(self, n_in, n_out, residual=False):
        super().__init__()
        self.weight = self.create_parameter([n_in, n_out])
        self.bias = self.create_parameter([n_out], is_bias=True)
        self.residual = residual

    def forward(self, x, adj):
        h = paddle.matmul(adj, paddle.matmul(x, self.weight)) + self.bias
        return h + x[:, : h.shape[1]] if self.residual else h


class GraphEncoder(nn.Layer):
    def __init__(self):
        super().__init__()
        self.layers = nn.LayerList([GraphLayer(F_IN, H), GraphLayer(H, H2, residual=bug() == "paddle_self_loop")])
        self.to_logvar = nn.Linear(H2, Z)
        self.to_mu = nn.Linear(H2, Z)

    def forward(self, x, adj):
        for layer in self.layers:
            x = F.relu(layer(x, adj))
        return self.to_mu(x), self.to_logvar(x)


def model():
    paddle.seed(0)
    return GraphEncoder()


def inputs():
    x = np.random.default_rng(1).standard_normal((N, F_IN)).astype("float32")
    return (paddle.to_tensor(x), paddle.to_tensor(adjacency())), {}


def loss(out):
    mu, logvar = out
    return (mu * mu).mean() + logvar.exp().mean()

"""Two message-passing layers handed the graph as an edge list ``int64 [2, E]`` (scatter-add of
the source nodes' states at the targets), against layers handed a dense adjacency ``float32
[N, N]`` the torch model builds from the same edges (edges_torch.py): one graph, two
representations that no element-wise comparison can relate.

PADIFF_BUG (this side): paddle_reversed_edges -> every layer sends its messages from target to source."""
import numpy as np
import paddle
from _common import bug
from paddle import nn

N, D = 10, 16


def graph() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((N, D)).astype("float32")
    pairs = [(k, (k + 1) % N) for k in range(N)] + [(k, (k + 3) % N) for k in range(0, N, 2)]  # one-way edges
    return x, np.array(pairs, dtype="int64").T.copy()


class Layer(nn.Layer):
    def __init__(self, k):
        super().__init__()
        self.k = k
        self.lin = nn.Linear(D, D)

    def forward(self, x, edges):
        src, dst = (edges[1], edges[0]) if bug() == "paddle_reversed_edges" else (edges[0], edges[1])
        msg = paddle.geometric.send_u_recv(x, src, dst, reduce_op="sum", out_size=N)
        return paddle.tanh(self.lin(x + msg))


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.layers = nn.LayerList([Layer(k) for k in range(2)])
        self.head = nn.Linear(D, 3)

    def forward(self, x, edges):
        for layer in self.layers:
            x = layer(x, edges)
        return self.head(x.mean(axis=0))


def model():
    if bug() not in ("", "paddle_reversed_edges"):
        raise ValueError(f"edges paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    x, e = graph()
    return (paddle.to_tensor(x), paddle.to_tensor(e)), {}


def loss(out):
    return out.pow(2).mean()

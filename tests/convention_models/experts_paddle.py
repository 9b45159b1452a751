"""A mixture of experts kept as a list of expert layers here and as one batched module in
torch's port (experts_torch.py):

* paddle: ``moe.experts`` is a LayerList of three MLPs, each called on every token, and the
  block combines their outputs with the router's top-2 weights inline;
* torch: ``moe.experts`` is one module holding ``w_in [E, D, H]`` and ``w_out [E, H, D]``,
  called once with the routing weights, returning the combined output.

Nothing on torch's side compares what a paddle expert returns: a difference inside the block is
named at the block on both sides, with the unchecked calls listed.

PADIFF_BUG (this side): paddle_moe_no_renorm -> the top-2 weights are not renormalised."""
import paddle
import paddle.nn.functional as F
from _common import D, bug, hidden
from paddle import nn

E, H = 3, 24


class Expert(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(D, H)
        self.fc2 = nn.Linear(H, D)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class Moe(nn.Layer):
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(D, E, bias_attr=False)
        self.experts = nn.LayerList([Expert() for _ in range(E)])

    def forward(self, x):
        probs = F.softmax(self.router(x), axis=-1)
        top, idx = paddle.topk(probs, 2, axis=-1)
        if bug() != "paddle_moe_no_renorm":
            top = top / top.sum(-1, keepdim=True)
        out = paddle.zeros_like(x)
        for e, expert in enumerate(self.experts):
            w = (top * (idx == e).astype("float32")).sum(-1, keepdim=True)
            out = out + w * expert(x)
        return out


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.moe = Moe()
        self.head = nn.Linear(D, 4)

    def forward(self, x):
        return self.head(x + self.moe(self.norm(x)))


def model():
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out.mean()

"""A SwiGLU mixture of experts with a shared expert, written with one module per projection
here and with packed tensors in torch's port (gateup_torch.py):

* paddle: ``moe.experts`` is a LayerList of SwiGLU experts (gate and up with biases), each registering ``up_proj`` before
  ``gate_proj`` and calling them in that order too (correct code: the order a port happens to
  register and call its projections in says nothing of where they lie in a packed tensor); a
  shared expert of the same class beside them;
* torch: the routed experts are one tensor ``gate_up_proj [E, D, 2H]`` used as ``x @ W[e]``
  (each expert's gate columns, then its up columns: the name says so), its biases
  ``gate_up_proj_bias [E, 2H]`` and ``down_proj [E, H, D]``;
  the shared expert packs gate|up in one ``Linear`` named ``gate_up``.

PADIFF_BUG (this side): paddle_shared_no_gate -> the shared expert's output is added without its
sigmoid gate."""
import paddle
import paddle.nn.functional as F
from _common import D, bug, hidden
from paddle import nn

E, H = 3, 12


class SwiGLU(nn.Layer):
    def __init__(self, bias=False):
        super().__init__()
        self.up_proj = nn.Linear(D, H, bias_attr=None if bias else False)
        self.gate_proj = nn.Linear(D, H, bias_attr=None if bias else False)
        self.down_proj = nn.Linear(H, D, bias_attr=False)

    def forward(self, x):
        up = self.up_proj(x)
        return self.down_proj(F.silu(self.gate_proj(x)) * up)


class Moe(nn.Layer):
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(D, E, bias_attr=False)
        self.experts = nn.LayerList([SwiGLU(bias=True) for _ in range(E)])
        self.shared = SwiGLU()
        self.shared_gate = nn.Linear(D, 1, bias_attr=False)

    def forward(self, x):
        probs = F.softmax(self.router(x), axis=-1)
        out = paddle.zeros_like(x)
        for e, expert in enumerate(self.experts):
            out = out + probs[..., e:e + 1] * expert(x)
        shared = self.shared(x)
        if bug() != "paddle_shared_no_gate":
            shared = F.sigmoid(self.shared_gate(x)) * shared
        return out + shared


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.moe = Moe()
        self.head = nn.Linear(D, 4)

    def forward(self, x):
        return self.head(x + self.moe(self.norm(x)))


def model():
    if bug() not in ("", "paddle_shared_no_gate", "torch_silu_on_up"):
        raise ValueError(f"gateup paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(hidden()),), {}


def loss(out):
    return out.mean()

"""An embedding scaled by sqrt(d) in the model's code, after a plain lookup; torch's port
(embscale_torch.py) scales inside its embedding module.

PADIFF_BUG: torch_scale_by_d is the other side's (accepted, ignored)."""
import paddle
from _common import D, V, bug, ids
from paddle import nn


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, 4)

    def forward(self, input_ids):
        return self.head(self.norm(self.tok(input_ids) * D**0.5))


def model():
    if bug() not in ("", "torch_scale_by_d"):
        raise ValueError(f"embscale paddle: unknown PADIFF_BUG {bug()!r}")
    paddle.seed(0)
    return Net().eval()


def inputs():
    return (paddle.to_tensor(ids()),), {}


def loss(out):
    return (out**2).mean()
